// SPDX-License-Identifier: MIT
/*
 * fuzz-symcache.c: the symbol cache file (elf/symcache.h) straight from
 * bytes, as sp-symbolize maps it: the checks of sp_symcache_load(), then
 * every entry and finds at addresses taken from the input.  Plain bytes
 * rarely carry a sound CRC, so when the first byte is odd the harness
 * writes the right CRC into a copy first, and the checks behind it are
 * reached.  The build-id and key are taken from the input's header, as
 * the file's own would be found.  Every string handed out must lie in the
 * file; the entries read must make a file (sp_symcache_build()) that
 * reads back into the same answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "elf/symcache.h"
#include "fuzz.h"

#define MAX_PROBES 256

static void check_str(const uint8_t *data, size_t size, const char *s)
{
	const uint8_t *p = (const uint8_t *)s;

	if (!s || p < data || p >= data + size ||
	    !memchr(p, 0, (size_t)(data + size - p)))
		abort();
}

static void check_frames(const uint8_t *data, size_t size,
			 const struct sp_frame *f, unsigned n)
{
	unsigned i;

	if (n > SP_SYMCACHE_MAX_CHAIN)
		abort();
	for (i = 0; i < n; i++) {
		check_str(data, size, f[i].function);
		if (f[i].symbol)
			check_str(data, size, f[i].symbol);
		if (f[i].file)
			check_str(data, size, f[i].file);
		if (f[i].kind >= SP_FK_MAX || f[i].origin >= SP_FO_MAX)
			abort();
	}
}

static int same_frames(const struct sp_frame *a, const struct sp_frame *b,
		       unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(a[i].function, b[i].function) ||
		    !a[i].symbol != !b[i].symbol ||
		    (a[i].symbol && strcmp(a[i].symbol, b[i].symbol)) ||
		    !a[i].file != !b[i].file ||
		    (a[i].file && strcmp(a[i].file, b[i].file)) ||
		    a[i].line != b[i].line || a[i].decl_line != b[i].decl_line ||
		    a[i].kind != b[i].kind || a[i].origin != b[i].origin ||
		    a[i].flags != b[i].flags)
			return 0;
	return 1;
}

/* Every entry of c into a new file; it must read back the same. */
static void round_trip(const struct sp_symcache *c, const uint8_t *bid,
		       size_t bid_len, uint32_t key)
{
	size_t n = sp_symcache_count(c), i, size;
	struct sp_symcache_answer *a = calloc(n ? n : 1, sizeof(*a));
	struct sp_frame *fr = calloc(n ? n : 1, SP_SYMCACHE_MAX_CHAIN *
				     sizeof(*fr));
	struct sp_frame again[SP_SYMCACHE_MAX_CHAIN];
	struct sp_symcache *c2;
	uint8_t *img;
	unsigned k;

	if (!a || !fr)
		abort();
	for (i = 0; i < n; i++) {
		a[i].frames = fr + i * SP_SYMCACHE_MAX_CHAIN;
		a[i].n = sp_symcache_entry(c, i, &a[i].vaddr, &a[i].precise,
					   fr + i * SP_SYMCACHE_MAX_CHAIN,
					   SP_SYMCACHE_MAX_CHAIN);
	}
	if (sp_symcache_build(bid, bid_len, key, a, n, &img, &size))
		abort();
	if (sp_symcache_load(img, size, bid, bid_len, key, &c2, NULL, NULL) ||
	    sp_symcache_count(c2) != n)
		abort();
	for (i = 0; i < n; i++) {
		k = sp_symcache_find(c2, a[i].vaddr, a[i].precise, again,
				     SP_SYMCACHE_MAX_CHAIN);
		if (k != a[i].n || !same_frames(a[i].frames, again, k))
			abort();
	}
	sp_symcache_free(c2);
	free(img);
	free(fr);
	free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_frame out[SP_SYMCACHE_MAX_CHAIN];
	struct sp_symcache_header h;
	struct sp_symcache *c;
	const char *why = NULL;
	uint64_t off = 0, v;
	uint8_t *copy;
	size_t i, bid_len;
	unsigned n;
	int precise, r;

	if (size < 1)
		return 0;
	/* the first byte picks the mode; the file is the rest */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		abort();
	memcpy(copy, data + 1, size - 1);
	size--;
	memset(&h, 0, sizeof(h));
	memcpy(&h, copy, size < sizeof(h) ? size : sizeof(h));
	bid_len = h.bid_len ? h.bid_len : 1;
	if (bid_len > SP_SYMCACHE_BID_MAX)
		bid_len = SP_SYMCACHE_BID_MAX;
	if ((data[0] & 1) && size >= sizeof(h)) {
		size_t at = offsetof(struct sp_symcache_header, crc);
		uLong crc = crc32(0, Z_NULL, 0);
		static const uint8_t zero[4];
		uint32_t c32;

		crc = crc32(crc, copy, (uInt)at);
		crc = crc32(crc, zero, sizeof(zero));
		crc = crc32(crc, copy + at + 4, (uInt)(size - at - 4));
		c32 = (uint32_t)crc;
		memcpy(copy + at, &c32, sizeof(c32));
	}
	r = sp_symcache_load(copy, size, h.bid, bid_len, h.key, &c, &why, &off);
	if (r) {
		if (r != -EILSEQ || !why || off > size)
			abort();
		free(copy);
		return 0;
	}
	for (i = 0; i < sp_symcache_count(c); i++) {
		n = sp_symcache_entry(c, i, &v, &precise, out,
				      SP_SYMCACHE_MAX_CHAIN);
		if (!n || precise > 1)
			abort();
		check_frames(copy, size, out, n);
		if (sp_symcache_find(c, v, precise, out, SP_SYMCACHE_MAX_CHAIN) != n)
			abort();
	}
	for (i = 0; i < MAX_PROBES && 8 * i + 8 <= size; i++) {
		memcpy(&v, copy + 8 * i, 8);
		n = sp_symcache_find(c, v, (int)(i & 1), out,
				     SP_SYMCACHE_MAX_CHAIN);
		check_frames(copy, size, out, n);
	}
	round_trip(c, h.bid, bid_len, h.key);
	sp_symcache_free(c);
	free(copy);
	return 0;
}
