/* SPDX-License-Identifier: MIT */
/* symcache.c: the symbol cache file: checked once, searched in place, written whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/hashtab.h"
#include "base/io.h"
#include "base/search.h"
#include "base/stream.h"
#include "bidstore.h"
#include "symcache.h"

#define MAX_FILE (256u << 20)	/* far above any cache: more is damage */

struct sp_symcache {
	const uint8_t *data;
	size_t size;
	void *map;		/* mmap of the file, or NULL */
	void *copy;		/* data copied for alignment, or NULL */
	const struct sp_symcache_entry *ent;
	const struct sp_symcache_frame *fr;
	const char *str;
	uint32_t nent, nfr;
};

int sp_symcache_path(const char *dir, const uint8_t *bid, size_t len,
		     const char *variant, char *buf, size_t size)
{
	char name[64];
	size_t i;

	if (!variant || !*variant)
		return sp_bidstore_file(dir, bid, len, "symbols", buf, size);
	for (i = 0; variant[i]; i++)
		if (!(variant[i] >= 'a' && variant[i] <= 'z') &&
		    variant[i] != '-')
			return -EINVAL;
	if (i > sizeof(name) - sizeof("symbols-"))
		return -ENAMETOOLONG;
	snprintf(name, sizeof(name), "symbols-%s", variant);
	return sp_bidstore_file(dir, bid, len, name, buf, size);
}

static uint32_t file_crc(const uint8_t *p, size_t size)
{
	static const uint8_t zero[4];
	size_t at = offsetof(struct sp_symcache_header, crc);
	uLong c = crc32(0, Z_NULL, 0);

	c = crc32(c, p, (uInt)at);
	c = crc32(c, zero, sizeof(zero));
	c = crc32(c, p + at + 4, (uInt)(size - at - 4));
	return (uint32_t)c;
}

#define BAD(what, at) do { *why = (what); *off = (at); goto bad; } while (0)

/* Whether string offset o names a string of c (NONE allowed with none). */
static int str_ok(uint32_t o, uint32_t strings, int none)
{
	return o < strings || (none && o == SP_SYMCACHE_NONE);
}

int sp_symcache_load(const void *data, size_t size, const uint8_t *bid,
		     size_t bid_len, uint32_t key, struct sp_symcache **out,
		     const char **why, uint64_t *off)
{
	struct sp_symcache_header h;
	struct sp_symcache *c;
	uint64_t need, ent_at, fr_at, str_at;
	const char *dummy_why;
	uint64_t dummy_off;
	uint32_t i, prev_first = 0;
	int stale = 0;

	if (!why)
		why = &dummy_why;
	if (!off)
		off = &dummy_off;
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (size < sizeof(h))
		BAD("shorter than its header", size);
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, SP_SYMCACHE_MAGIC, sizeof(h.magic)))
		BAD("not a symbol cache (bad magic)", 0);
	if (h.version != SP_SYMCACHE_VERSION)
		BAD("unknown version", offsetof(struct sp_symcache_header, version));
	if (h.header_size != sizeof(h))
		BAD("bad header size", offsetof(struct sp_symcache_header, header_size));
	if (size > MAX_FILE)
		BAD("larger than any symbol cache", MAX_FILE);
	ent_at = sizeof(h);
	fr_at = ent_at + (uint64_t)h.nentries * sizeof(*c->ent);
	str_at = fr_at + (uint64_t)h.nframes * sizeof(*c->fr);
	need = str_at + h.strings;
	if (need != size)
		BAD(need > size ? "cut short: its counts need more bytes" :
		    "bytes after its strings", need > size ? size : need);
	if (file_crc(data, size) != h.crc)
		BAD("CRC mismatch", offsetof(struct sp_symcache_header, crc));
	if (!h.bid_len || h.bid_len > SP_SYMCACHE_BID_MAX)
		BAD("bad build-id length", offsetof(struct sp_symcache_header, bid_len));
	if (bid_len > SP_SYMCACHE_BID_MAX)
		bid_len = SP_SYMCACHE_BID_MAX;
	if (h.bid_len != bid_len || memcmp(h.bid, bid, bid_len))
		BAD("of another build-id", offsetof(struct sp_symcache_header, bid));
	if (h.key != key) {
		stale = 1;
		BAD("made with other settings or debug files",
		    offsetof(struct sp_symcache_header, key));
	}
	if (h.strings && ((const char *)data)[size - 1])
		BAD("last string not terminated", size - 1);
	/* the arrays are read in place: copy data that is not aligned for them */
	if ((uintptr_t)data % 8) {
		c->copy = malloc(size);
		if (!c->copy) {
			free(c);
			return -ENOMEM;
		}
		memcpy(c->copy, data, size);
		data = c->copy;
	}
	c->data = data;
	c->size = size;
	c->ent = (const void *)(c->data + ent_at);
	c->fr = (const void *)(c->data + fr_at);
	c->str = (const char *)c->data + str_at;
	c->nent = h.nentries;
	c->nfr = h.nframes;
	for (i = 0; i < h.nframes; i++) {
		const struct sp_symcache_frame *f = &c->fr[i];

		if (!str_ok(f->function, h.strings, 0) ||
		    !str_ok(f->symbol, h.strings, 1) ||
		    !str_ok(f->file, h.strings, 1))
			BAD("frame names a string past the strings",
			    fr_at + (uint64_t)i * sizeof(*f));
		if (f->kind >= SP_FK_MAX || f->origin >= SP_FO_MAX)
			BAD("frame of unknown kind or origin",
			    fr_at + (uint64_t)i * sizeof(*f));
	}
	for (i = 0; i < h.nentries; i++) {
		const struct sp_symcache_entry *e = &c->ent[i];
		uint64_t at = ent_at + (uint64_t)i * sizeof(*e);

		if (!e->nframes || e->nframes > SP_SYMCACHE_MAX_CHAIN ||
		    (uint64_t)e->first + e->nframes > h.nframes)
			BAD("entry's frames out of range", at);
		if (e->precise > 1)
			BAD("entry neither exact nor a return address", at);
		if (i && (e->vaddr < e[-1].vaddr ||
			  (e->vaddr == e[-1].vaddr && e->precise <= e[-1].precise)))
			BAD("entries out of order", at);
		/* frames are laid out in entry order, none shared or left over */
		if (e->first != prev_first)
			BAD("entry's frames not where the last ended", at);
		prev_first = e->first + e->nframes;
	}
	if (prev_first != h.nframes)
		BAD("frames no entry has", fr_at + (uint64_t)prev_first * sizeof(*c->fr));
	*out = c;
	return 0;
bad:
	free(c->copy);
	free(c);
	return stale ? -ESTALE : -EILSEQ;
}

int sp_symcache_open(const char *path, const uint8_t *bid, size_t bid_len,
		     uint32_t key, struct sp_symcache **out, const char **why,
		     uint64_t *off)
{
	struct stat st;
	void *map;
	int fd, e;

	*out = NULL;
	fd = sp_open_regular(path);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		e = -errno;
		close(fd);
		return e;
	}
	if (st.st_size <= 0 || (uint64_t)st.st_size > MAX_FILE) {
		close(fd);
		*why = st.st_size ? "larger than any symbol cache" :
				    "empty";
		*off = 0;
		return -EILSEQ;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	e = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (e)
		return e;
	e = sp_symcache_load(map, (size_t)st.st_size, bid, bid_len, key, out,
			     why, off);
	if (e) {
		munmap(map, (size_t)st.st_size);
		return e;
	}
	(*out)->map = map;
	return 0;
}

void sp_symcache_free(struct sp_symcache *c)
{
	if (!c)
		return;
	if (c->map)
		munmap(c->map, c->size);
	free(c->copy);
	free(c);
}

size_t sp_symcache_count(const struct sp_symcache *c)
{
	return c->nent;
}

size_t sp_symcache_nframes(const struct sp_symcache *c)
{
	return c->nfr;
}

unsigned sp_symcache_entry(const struct sp_symcache *c, size_t i,
			   uint64_t *vaddr, int *precise, struct sp_frame *out,
			   unsigned max)
{
	const struct sp_symcache_entry *e = &c->ent[i];
	unsigned j, n = e->nframes < max ? e->nframes : max;

	*vaddr = e->vaddr;
	*precise = e->precise;
	for (j = 0; j < n; j++) {
		const struct sp_symcache_frame *f = &c->fr[e->first + j];

		memset(&out[j], 0, sizeof(out[j]));
		out[j].function = c->str + f->function;
		out[j].symbol = f->symbol == SP_SYMCACHE_NONE ? NULL :
				c->str + f->symbol;
		out[j].file = f->file == SP_SYMCACHE_NONE ? NULL :
			      c->str + f->file;
		out[j].line = f->line;
		out[j].decl_line = f->decl_line;
		out[j].kind = f->kind;
		out[j].origin = f->origin;
		out[j].flags = f->flags;
	}
	return n;
}

unsigned sp_symcache_find(const struct sp_symcache *c, uint64_t vaddr,
			  int precise, struct sp_frame *out, unsigned max)
{
	size_t i = SP_COUNT_LE(c->ent, c->nent, vaddr, vaddr);
	uint64_t v;
	int p;

	/* the entries at vaddr are the last one or two at or below it */
	while (i > 0 && c->ent[i - 1].vaddr == vaddr) {
		i--;
		if (c->ent[i].precise == !!precise)
			return sp_symcache_entry(c, i, &v, &p, out, max);
	}
	return 0;
}

/* Writing ----------------------------------------------------------------- */

static int by_address(const void *a, const void *b)
{
	const struct sp_symcache_answer *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return (x->precise > 0) - (y->precise > 0);
}

/* Offset of s among the strings (its index in t, laid out later). */
static int64_t str_index(struct sp_strtab *t, const char *s)
{
	return s ? sp_strtab_intern(t, s) : -1;
}

int sp_symcache_build(const uint8_t *bid, size_t bid_len, uint32_t key,
		      struct sp_symcache_answer *a, size_t n, uint8_t **img,
		      size_t *size)
{
	struct sp_strtab t = { 0 };
	struct sp_symcache_header h;
	struct sp_symcache_entry *ent;
	struct sp_symcache_frame *fr;
	uint32_t *at = NULL;
	uint64_t nframes = 0, strings = 0, total;
	uint8_t *p = NULL;
	size_t i, j, k;
	int e = -EINVAL;

	if (!bid_len)
		return -EINVAL;
	if (n)
		qsort(a, n, sizeof(*a), by_address);
	for (i = 0; i < n; i++) {
		if (!a[i].n || a[i].n > SP_SYMCACHE_MAX_CHAIN)
			goto out;
		if (i && !by_address(&a[i - 1], &a[i]))
			goto out;
		nframes += a[i].n;
		for (j = 0; j < a[i].n; j++) {
			const struct sp_frame *f = &a[i].frames[j];

			if (!f->function || str_index(&t, f->function) < 0 ||
			    (f->symbol && str_index(&t, f->symbol) < 0) ||
			    (f->file && str_index(&t, f->file) < 0)) {
				e = f->function ? -ENOMEM : -EINVAL;
				goto out;
			}
		}
	}
	at = malloc((t.n ? t.n : 1) * sizeof(*at));
	if (!at) {
		e = -ENOMEM;
		goto out;
	}
	for (k = 0; k < t.n; k++) {
		at[k] = (uint32_t)strings;
		strings += strlen(t.strs[k]) + 1;
	}
	total = sizeof(h) + n * sizeof(*ent) + nframes * sizeof(*fr) + strings;
	if (n > UINT32_MAX || nframes > UINT32_MAX || total > MAX_FILE)
		goto out;
	p = calloc(1, (size_t)total);
	if (!p) {
		e = -ENOMEM;
		goto out;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SP_SYMCACHE_MAGIC, sizeof(h.magic));
	h.version = SP_SYMCACHE_VERSION;
	h.header_size = sizeof(h);
	h.key = key;
	h.nentries = (uint32_t)n;
	h.nframes = (uint32_t)nframes;
	h.strings = (uint32_t)strings;
	h.bid_len = (uint8_t)(bid_len > SP_SYMCACHE_BID_MAX ?
			      SP_SYMCACHE_BID_MAX : bid_len);
	memcpy(h.bid, bid, h.bid_len);
	ent = (void *)(p + sizeof(h));
	fr = (void *)(p + sizeof(h) + n * sizeof(*ent));
	for (i = 0, k = 0; i < n; i++) {
		ent[i].vaddr = a[i].vaddr;
		ent[i].first = (uint32_t)k;
		ent[i].nframes = (uint16_t)a[i].n;
		ent[i].precise = a[i].precise > 0;
		for (j = 0; j < a[i].n; j++, k++) {
			const struct sp_frame *f = &a[i].frames[j];

			/* interned above: these finds cannot fail */
			fr[k].function = at[sp_strtab_intern(&t, f->function)];
			fr[k].symbol = f->symbol ?
				at[sp_strtab_intern(&t, f->symbol)] :
				SP_SYMCACHE_NONE;
			fr[k].file = f->file ?
				at[sp_strtab_intern(&t, f->file)] :
				SP_SYMCACHE_NONE;
			fr[k].line = f->line;
			fr[k].decl_line = f->decl_line;
			fr[k].kind = f->kind;
			fr[k].origin = f->origin;
			fr[k].flags = f->flags;
		}
	}
	for (k = 0; k < t.n; k++)
		memcpy(p + total - strings + at[k], t.strs[k],
		       strlen(t.strs[k]) + 1);
	memcpy(p, &h, sizeof(h));
	h.crc = file_crc(p, (size_t)total);
	memcpy(p + offsetof(struct sp_symcache_header, crc), &h.crc,
	       sizeof(h.crc));
	*img = p;
	*size = (size_t)total;
	p = NULL;
	e = 0;
out:
	free(p);
	free(at);
	sp_strtab_release(&t);
	return e;
}

int64_t sp_symcache_write(const char *path, const uint8_t *bid,
			  size_t bid_len, uint32_t key,
			  struct sp_symcache_answer *a, size_t n)
{
	char tmp[4096 + 32], dir[4096];
	uint8_t *img;
	size_t size, done = 0;
	int fd, e, len;

	if (!bid_len)
		return -EINVAL;
	e = sp_symcache_build(bid, bid_len, key, a, n, &img, &size);
	if (e)
		return e;
	len = snprintf(dir, sizeof(dir), "%s", path);
	if (len < 0 || (size_t)len >= sizeof(dir)) {
		e = -ENAMETOOLONG;
		goto out;
	}
	e = sp_bidstore_make_parents(dir);
	if (e)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = -errno;
		goto out;
	}
	while (!e && done < size) {
		ssize_t w = write(fd, img + done, size - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			e = -errno;
		else
			done += (size_t)w;
	}
	if (fchmod(fd, 0644) && !e)
		e = -errno;
	if (close(fd) && !e)
		e = -errno;
	if (!e && rename(tmp, path))
		e = -errno;
	if (e)
		unlink(tmp);
out:
	free(img);
	return e ? e : (int64_t)size;
}
