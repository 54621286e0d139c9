/* SPDX-License-Identifier: MIT */
/*
 * symcache.h: the symbol cache, what the ELF symbolizer answered for the
 * addresses of one build-id, kept on disk so that the next run over the
 * same binary names those addresses without reading its symbol tables or
 * opening its DWARF.
 *
 * One file per build-id and variant of settings, beside the build-id
 * cache's copy of the binary (bidstore.h):
 *
 *	DIR/buildid/ab/cdef0123.../symbols[-VARIANT]
 *
 * made to be mapped and searched in place: a header, entries sorted by
 * (address, exact), the frames of each entry's inline chain, and the
 * strings they name.  docs/formats.md has the layout.  A file is written
 * whole to a temporary file beside its place and renamed into it, so that
 * readers and concurrent writers never see half of one; its CRC catches a
 * file torn by a crash or damaged since.  Its key says what else its
 * answers depend on (the symbolizer's flags, the debug files found): a
 * file of another key is not used, and the next write replaces it.
 */
#ifndef SP_SYMCACHE_H
#define SP_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "format/frame.h"

#define SP_SYMCACHE_VERSION	1
#define SP_SYMCACHE_MAX_CHAIN	64	/* frames of one entry */

struct sp_symcache_header {
	char magic[8];		/* SP_SYMCACHE_MAGIC */
	uint32_t version;
	uint32_t header_size;	/* sizeof(struct sp_symcache_header) */
	uint32_t key;		/* what the answers depend on besides the build-id */
	uint32_t nentries;
	uint32_t nframes;
	uint32_t strings;	/* bytes of strings, the last one NUL */
	uint32_t crc;		/* CRC-32 of the file with this field 0 */
	uint8_t bid_len;	/* 1..SP_SYMCACHE_BID_MAX */
	uint8_t reserved[3];
	uint8_t bid[20];
	uint32_t reserved2;
};

#define SP_SYMCACHE_BID_MAX 20
#define SP_SYMCACHE_NONE UINT32_MAX	/* no string */

struct sp_symcache_entry {
	uint64_t vaddr;		/* address in the file, as the symbolizer was asked */
	uint32_t first;		/* its first frame */
	uint16_t nframes;	/* 1..SP_SYMCACHE_MAX_CHAIN */
	uint8_t precise;	/* 1: an exact IP, 0: a return address */
	uint8_t reserved;
};

struct sp_symcache_frame {
	uint32_t function;	/* offset in the strings */
	uint32_t symbol;	/* offset, or SP_SYMCACHE_NONE */
	uint32_t file;		/* offset, or SP_SYMCACHE_NONE */
	uint32_t line, decl_line;
	uint8_t kind, origin;	/* enum sp_frame_kind, sp_frame_origin */
	uint16_t flags;		/* SP_SYMF_* */
};

_Static_assert(sizeof(struct sp_symcache_header) == 64, "symcache header");
_Static_assert(sizeof(struct sp_symcache_entry) == 16, "symcache entry");
_Static_assert(sizeof(struct sp_symcache_frame) == 24, "symcache frame");

struct sp_symcache;

/*
 * The path of bid's symbol cache under dir (bid len bytes, 1..20), into
 * buf: DIR/buildid/ab/cdef.../symbols, or symbols-VARIANT for answers of
 * other settings that are to be kept beside the usual ones (a symbolizer
 * that names no lines, say) instead of replacing them.  Returns 0, -EINVAL
 * for an empty build-id or a variant of other than a-z and '-',
 * -ENAMETOOLONG.
 */
int sp_symcache_path(const char *dir, const uint8_t *bid, size_t len,
		     const char *variant, char *buf, size_t size);

/*
 * Check size bytes at data as the symbol cache of bid with key (data is
 * not copied: it must outlive the result).  Returns 0 and *out,
 * -ESTALE for a sound file of another key, -EILSEQ for a file that is not
 * one, damaged, or of another build-id (with both, *why says what, at
 * byte *off), or -ENOMEM.  Every offset is checked here: lookups trust
 * them.
 */
int sp_symcache_load(const void *data, size_t size, const uint8_t *bid,
		     size_t bid_len, uint32_t key, struct sp_symcache **out,
		     const char **why, uint64_t *off);

/*
 * Map and check the file at path, as sp_symcache_load().  Returns 0 and
 * *out, -ENOENT when there is none, -ESTALE or -EILSEQ (with *why,
 * *off), or -errno.
 */
int sp_symcache_open(const char *path, const uint8_t *bid, size_t bid_len,
		     uint32_t key, struct sp_symcache **out, const char **why,
		     uint64_t *off);

void sp_symcache_free(struct sp_symcache *c);

/* Its entries; the frames of all of them. */
size_t sp_symcache_count(const struct sp_symcache *c);
size_t sp_symcache_nframes(const struct sp_symcache *c);

/*
 * The frames of the entry for (vaddr, precise), innermost first: at most
 * max into out, with function, symbol, file, line, decl_line, kind,
 * origin and flags set (strings live in the cache, as long as it).
 * Returns how many, 0 when there is no entry.
 */
unsigned sp_symcache_find(const struct sp_symcache *c, uint64_t vaddr,
			  int precise, struct sp_frame *out, unsigned max);

/* Entry i (< sp_symcache_count()), as sp_symcache_find(). */
unsigned sp_symcache_entry(const struct sp_symcache *c, size_t i,
			   uint64_t *vaddr, int *precise, struct sp_frame *out,
			   unsigned max);

/* One answer to write. */
struct sp_symcache_answer {
	uint64_t vaddr;
	int precise;
	const struct sp_frame *frames;	/* 1..SP_SYMCACHE_MAX_CHAIN */
	unsigned n;
};

/*
 * The file image of the n answers (in any order; no two for the same
 * vaddr and precise; sorted here) as bid's symbol cache with key: *img
 * (malloc'd), *size bytes.  Returns 0, -EINVAL for answers that do not
 * fit the format, or -ENOMEM.
 */
int sp_symcache_build(const uint8_t *bid, size_t bid_len, uint32_t key,
		      struct sp_symcache_answer *a, size_t n, uint8_t **img,
		      size_t *size);

/*
 * Write the n answers (in any order; no two for the same vaddr and
 * precise) as bid's symbol cache with key to path: to a temporary file
 * beside it (its directories made as needed), renamed into place.  The
 * answers are sorted.  Returns the bytes written, -EINVAL for answers that
 * do not fit the format, or -errno.
 */
int64_t sp_symcache_write(const char *path, const uint8_t *bid,
			  size_t bid_len, uint32_t key,
			  struct sp_symcache_answer *a, size_t n);

#endif
