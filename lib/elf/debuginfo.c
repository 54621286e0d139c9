/* SPDX-License-Identifier: MIT */
/* debuginfo.c: build-id, .gnu_debuglink and MiniDebugInfo debug files. */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/grow.h"
#include "base/io.h"
#include "base/hashtab.h"
#include "debuginfo.h"
#include "debuginfod.h"

struct sp_debugfile {
	const char *key;	/* path, or "mini:PATH": the finder's */
	char *path;		/* NULL for a negative entry */
	int fd;
	Elf *elf;
	uint8_t *image;		/* decompressed MiniDebugInfo */
	enum sp_debug_how how;
	int symtab_loaded;
	struct sp_symtab *symtab;
};

struct sp_debug_finder {
	char **roots;
	size_t nroots;
	int no_default;
	struct sp_strtab keys;		/* a file's key: its index in files */
	struct sp_debugfile **files;	/* tried, found or not */
	size_t nfiles, cap;
	unsigned opened;
	struct sp_debuginfod *dbgd;	/* NULL: off; not owned */
};

static const char default_root[] = "/usr/lib/debug";

struct sp_debug_finder *sp_debug_finder_new(int no_default)
{
	struct sp_debug_finder *f;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (f)
		f->no_default = no_default;
	return f;
}

static void debugfile_free(struct sp_debugfile *d)
{
	sp_symtab_free(d->symtab);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	free(d->image);
	free(d->path);
	free(d);
}

void sp_debug_finder_free(struct sp_debug_finder *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nfiles; i++)
		debugfile_free(f->files[i]);
	free(f->files);
	sp_strtab_release(&f->keys);
	for (i = 0; i < f->nroots; i++)
		free(f->roots[i]);
	free(f->roots);
	free(f);
}

int sp_debug_finder_add_dir(struct sp_debug_finder *f, const char *dir)
{
	char **r = realloc(f->roots, (f->nroots + 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	f->roots = r;
	r[f->nroots] = strdup(dir);
	if (!r[f->nroots])
		return -ENOMEM;
	f->nroots++;
	return 0;
}

void sp_debug_finder_set_debuginfod(struct sp_debug_finder *f,
				    struct sp_debuginfod *d)
{
	f->dbgd = d;
}

unsigned sp_debug_finder_opened(const struct sp_debug_finder *f)
{
	return f->opened;
}

Elf *sp_debugfile_elf(const struct sp_debugfile *d)
{
	return d->elf;
}

const char *sp_debugfile_path(const struct sp_debugfile *d)
{
	return d->path;
}

enum sp_debug_how sp_debugfile_how(const struct sp_debugfile *d)
{
	return d->how;
}

/* Roots in search order: --debug-dir ones, then the default. */
static const char *root_at(const struct sp_debug_finder *f, size_t i)
{
	if (i < f->nroots)
		return f->roots[i];
	if (i == f->nroots && !f->no_default)
		return default_root;
	return NULL;
}

/* ELF notes and sections */

static Elf_Scn *find_section(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int sp_elf_has_section(Elf *e, const char *name)
{
	Elf_Scn *scn = find_section(e, name);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
	       sh.sh_size > 0;
}

uint32_t sp_debuglink_crc(const void *data, size_t len)
{
	const Bytef *p = data;
	uLong crc = crc32(0, Z_NULL, 0);

	while (len) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		crc = crc32(crc, p, n);
		p += n;
		len -= n;
	}
	return (uint32_t)crc;
}

/* The cache */

/*
 * The entry of key, made empty (to be filled) when *is_new is set.  NULL
 * when out of memory.
 */
static struct sp_debugfile *cache_entry(struct sp_debug_finder *f,
					const char *key, int *is_new)
{
	int64_t i = sp_strtab_intern(&f->keys, key);
	struct sp_debugfile *d;

	*is_new = 0;
	if (i < 0)
		return NULL;
	if ((size_t)i < f->nfiles)
		return f->files[i];
	/* new keys get the next index: the entry goes at the end */
	if (SP_GROW(f->files, f->cap, f->nfiles + 1))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->fd = -1;
	d->key = f->keys.strs[i];
	f->files[f->nfiles++] = d;
	*is_new = 1;
	return d;
}

/*
 * Open path as a debug file, once: a regular file that is ELF.  Returns the
 * entry (elf NULL when it is not one).
 */
static struct sp_debugfile *open_file(struct sp_debug_finder *f,
				      const char *path)
{
	struct sp_debugfile *d;
	int is_new;

	d = cache_entry(f, path, &is_new);
	if (!d || !is_new)
		return d;
	d->fd = sp_open_regular(path);
	if (d->fd < 0)
		return d;
	f->opened++;
	d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (d->elf && elf_kind(d->elf) != ELF_K_ELF) {
		elf_end(d->elf);
		d->elf = NULL;
	}
	if (!d->elf) {
		close(d->fd);
		d->fd = -1;
		return d;
	}
	d->path = strdup(path);
	if (!d->path) {
		elf_end(d->elf);
		d->elf = NULL;
	}
	return d;
}

static int same_build_id(Elf *e, const uint8_t *bid, size_t len)
{
	uint8_t have[SP_BUILD_ID_MAX];
	size_t n = sp_elf_build_id(e, have);

	return n == len && !memcmp(have, bid, n);
}

static struct sp_debugfile *try_build_id(struct sp_debug_finder *f,
					 const uint8_t *bid, size_t len)
{
	char hex[2 * SP_BUILD_ID_MAX + 1], path[4096];
	const char *root;
	size_t i;

	if (len < 2)
		return NULL;
	sp_build_id_hex(bid, len, hex);
	for (i = 0; (root = root_at(f, i)); i++) {
		struct sp_debugfile *d;

		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root,
			 hex, hex + 2);
		d = open_file(f, path);
		if (d && d->elf && same_build_id(d->elf, bid, len)) {
			d->how = SP_DEBUG_BUILDID;
			return d;
		}
	}
	return NULL;
}

/* The debug file the debuginfod servers have for the build-id. */
static struct sp_debugfile *try_debuginfod(struct sp_debug_finder *f,
					   const uint8_t *bid, size_t len)
{
	struct sp_debugfile *d;
	const char *path;

	if (!f->dbgd || !len)
		return NULL;
	path = sp_debuginfod_find(f->dbgd, SP_DEBUGINFOD_DEBUGINFO, bid, len);
	if (!path)
		return NULL;
	d = open_file(f, path);
	if (!d || !d->elf || !same_build_id(d->elf, bid, len))
		return NULL;
	d->how = SP_DEBUG_DEBUGINFOD;
	return d;
}

struct sp_debugfile *sp_debug_find_build_id(struct sp_debug_finder *f,
					    const uint8_t *bid, size_t bid_len)
{
	struct sp_debugfile *d = try_build_id(f, bid, bid_len);

	return d ? d : try_debuginfod(f, bid, bid_len);
}

/* .gnu_debuglink: the name, NUL, padding to 4, and the CRC. */
static int read_debuglink(Elf *e, char *name, size_t cap, uint32_t *crc)
{
	Elf_Scn *scn = find_section(e, ".gnu_debuglink");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t n, off;
	const char *p;

	if (!d || !d->d_buf || d->d_size < 8)
		return -1;
	p = d->d_buf;
	n = strnlen(p, d->d_size);
	off = (n + 4) & ~(size_t)3;
	if (n == 0 || n >= cap || off + 4 > d->d_size || memchr(p, '/', n))
		return -1;
	memcpy(name, p, n + 1);
	memcpy(crc, p + off, 4);
	if (elf_getident(e, NULL)[EI_DATA] != ELFDATA2LSB)
		*crc = __builtin_bswap32(*crc);
	return 0;
}

static int crc_ok(struct sp_debugfile *d, uint32_t want)
{
	size_t size;
	const char *data = elf_rawfile(d->elf, &size);

	return data && sp_debuglink_crc(data, size) == want;
}

static struct sp_debugfile *try_link(struct sp_debug_finder *f,
				     const char *path, Elf *e,
				     const uint8_t *bid, size_t bid_len)
{
	char link[256], dir[4096], cand[8192];
	const char *slash = strrchr(path, '/'), *root = NULL;
	const char *cands[3];
	uint32_t crc;
	size_t i, j, dlen;

	if (read_debuglink(e, link, sizeof(link), &crc) || !slash)
		return NULL;
	dlen = (size_t)(slash - path);
	if (dlen >= sizeof(dir))
		return NULL;
	memcpy(dir, path, dlen);
	dir[dlen] = 0;
	/* next to the file, then in its .debug directory, then the roots */
	for (i = 0; ; i++) {
		int k = 0;

		if (i == 0) {
			snprintf(cand, sizeof(cand), "%s/%s", dir, link);
			cands[k++] = cand;
		} else if (i == 1) {
			snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, link);
			cands[k++] = cand;
		} else {
			root = root_at(f, i - 2);
			if (!root)
				break;
			snprintf(cand, sizeof(cand), "%s%s/%s", root, dir, link);
			cands[k++] = cand;
		}
		for (j = 0; j < (size_t)k; j++) {
			struct sp_debugfile *d;

			if (!strcmp(cands[j], path))
				continue;	/* the link names the file itself */
			d = open_file(f, cands[j]);
			if (!d || !d->elf)
				continue;
			if (bid_len && !same_build_id(d->elf, bid, bid_len))
				continue;
			if (!crc_ok(d, crc))
				continue;
			d->how = SP_DEBUG_LINK;
			return d;
		}
		if (i >= 2) {
			/* a flat root: ROOT/LINK */
			struct sp_debugfile *d;

			snprintf(cand, sizeof(cand), "%s/%s", root, link);
			d = open_file(f, cand);
			if (d && d->elf &&
			    (!bid_len || same_build_id(d->elf, bid, bid_len)) &&
			    crc_ok(d, crc)) {
				d->how = SP_DEBUG_LINK;
				return d;
			}
		}
	}
	return NULL;
}

struct sp_debugfile *sp_debug_find(struct sp_debug_finder *f, const char *path,
				   Elf *e, const uint8_t *bid, size_t bid_len)
{
	uint8_t own[SP_BUILD_ID_MAX];
	struct sp_debugfile *d;

	if (!bid_len) {
		bid_len = sp_elf_build_id(e, own);
		bid = own;
	}
	d = try_build_id(f, bid, bid_len);
	if (!d)
		d = try_link(f, path, e, bid, bid_len);
	if (!d)
		d = try_debuginfod(f, bid, bid_len);
	return d;
}

/* MiniDebugInfo */

static uint8_t *xz_decode(const uint8_t *in, size_t len, size_t *outlen)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = len * 4 + 4096;
	uint8_t *out = malloc(cap), *p;
	lzma_ret r;

	if (!out)
		return NULL;
	if (lzma_stream_decoder(&strm, 256u << 20, 0) != LZMA_OK) {
		free(out);
		return NULL;
	}
	strm.next_in = in;
	strm.avail_in = len;
	strm.next_out = out;
	strm.avail_out = cap;
	for (;;) {
		r = lzma_code(&strm, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK && r != LZMA_BUF_ERROR)
			goto bad;
		if (strm.avail_out == 0) {
			if (cap > (512u << 20))
				goto bad;
			p = realloc(out, cap * 2);
			if (!p)
				goto bad;
			out = p;
			strm.next_out = out + cap;
			strm.avail_out = cap;
			cap *= 2;
		} else if (r == LZMA_BUF_ERROR) {
			goto bad;	/* truncated input */
		}
	}
	*outlen = cap - strm.avail_out;
	lzma_end(&strm);
	return out;
bad:
	lzma_end(&strm);
	free(out);
	return NULL;
}

struct sp_debugfile *sp_debug_mini(struct sp_debug_finder *f, const char *key,
				   Elf *e)
{
	char ckey[4200];
	struct sp_debugfile *d;
	Elf_Scn *scn;
	Elf_Data *data;
	size_t n;
	int is_new;

	snprintf(ckey, sizeof(ckey), "mini:%s", key);
	d = cache_entry(f, ckey, &is_new);
	if (!d || !is_new)
		return d && d->elf ? d : NULL;
	scn = find_section(e, ".gnu_debugdata");
	data = scn ? elf_rawdata(scn, NULL) : NULL;
	if (!data || !data->d_buf || !data->d_size)
		return NULL;
	d->image = xz_decode(data->d_buf, data->d_size, &n);
	if (!d->image)
		return NULL;
	f->opened++;
	d->elf = elf_memory((char *)d->image, n);
	if (d->elf && elf_kind(d->elf) != ELF_K_ELF) {
		elf_end(d->elf);
		d->elf = NULL;
	}
	d->path = d->elf ? strdup(ckey) : NULL;
	if (!d->elf || !d->path) {
		if (d->elf)
			elf_end(d->elf);
		d->elf = NULL;
		return NULL;
	}
	d->how = SP_DEBUG_MINI;
	return d;
}

const struct sp_symtab *sp_debugfile_symtab(struct sp_debugfile *d)
{
	if (!d->symtab_loaded) {
		d->symtab_loaded = 1;
		d->symtab = sp_symtab_read(d->elf, SHT_SYMTAB);
	}
	return d->symtab;
}
