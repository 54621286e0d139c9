/* SPDX-License-Identifier: MIT */
/*
 * bidstore.h: the build-id cache, copies of mapped binaries kept by
 * build-id so that a recording can be unwound and named after the files it
 * mapped were replaced or deleted (perf keeps ~/.debug for the same reason).
 *
 * A recorder copies a binary in while the process that maps it is alive,
 * only when the file will not be reachable by its path later (deleted, or
 * replaced by a file with another build-id); readers find it by the
 * build-id their stream records.  The layout is
 *
 *	DIR/buildid/ab/cdef0123.../elf
 *
 * ab being the first byte of the build-id in hex and cdef0123... the rest,
 * DIR by default $XDG_CACHE_HOME/stackpulse (~/.cache/stackpulse).  A copy
 * is written to a temporary file beside its place and renamed into it, so
 * a reader never sees half a file; every reader checks the build-id of what
 * it opens anyway.  The symbol cache (symcache.h) keeps its files for the
 * build-id in the same directory, DIR/buildid/ab/cdef0123.../symbols (and
 * symbols-VARIANT for answers of other settings).  A
 * file's modification time is when it was last written or needed: the
 * store is trimmed to a size by evicting the directories whose newest file
 * is the oldest.
 */
#ifndef SP_BIDSTORE_H
#define SP_BIDSTORE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * The default directory: $XDG_CACHE_HOME/stackpulse when that is an
 * absolute path, else $HOME/.cache/stackpulse, into buf.  Returns 0,
 * -ENOENT when neither variable gives one, -ENAMETOOLONG.
 */
int sp_bidstore_default_dir(char *buf, size_t size);

/*
 * The path of the copy of build-id bid (len bytes, 1..20) under dir, into
 * buf.  Returns 0, -EINVAL for an empty build-id, -ENAMETOOLONG.
 */
int sp_bidstore_path(const char *dir, const uint8_t *bid, size_t len,
		     char *buf, size_t size);

/* The same for the file name beside the copy ("symbols": symcache.h). */
int sp_bidstore_file(const char *dir, const uint8_t *bid, size_t len,
		     const char *name, char *buf, size_t size);

/*
 * Whether dir holds a copy of bid.  When it does, its modification time is
 * set to now: it was needed, so it is the last to be evicted.  Returns 1,
 * 0, or -errno of the check.
 */
int sp_bidstore_touch(const char *dir, const uint8_t *bid, size_t len);

/*
 * Store a copy of the ELF file open at fd (read from offset 0, not
 * closed), whose build-id must be bid: written to a temporary file in its
 * directory (created as needed), checked, renamed into place.  Returns the
 * bytes stored, 0 when a copy was there already (touched), -EILSEQ when
 * the file's build-id is not bid, or -errno.
 */
int64_t sp_bidstore_put(const char *dir, const uint8_t *bid, size_t len,
			int fd);

/*
 * Make the directories path lies in (mkdir -p of its dirname; path is
 * changed and restored).  Returns 0 or -errno.
 */
int sp_bidstore_make_parents(char *path);

/* What the store may hold unless told otherwise: 1 GiB. */
#define SP_BIDSTORE_DEFAULT_MAX (1ull << 30)

struct sp_bidstore_usage {
	uint64_t files, bytes;		/* build-ids held after the trim */
	uint64_t evicted, evicted_bytes;
};

/*
 * Evict build-ids (the copy and the symbol cache of each), the least
 * recently used first, until the store holds at most max bytes, sparing
 * those written or needed at or after keep_since (a CLOCK_REALTIME second:
 * what the caller's recording uses; 0 spares none), which may leave it
 * above max.  Temporary files older than an hour (a file that was cut
 * short) go too.  Fills *u; returns 0 or -errno (a directory that does
 * not exist is an empty store).
 */
int sp_bidstore_trim(const char *dir, uint64_t max, time_t keep_since,
		     struct sp_bidstore_usage *u);

#endif
