/* SPDX-License-Identifier: MIT */
/*
 * stream.h: the framing of stackpulse's binary streams.
 *
 * Every binary stream is a stream header followed by records.  A record is a
 * struct sp_rec_hdr (type, size) and a payload; size counts the header, is a
 * multiple of 8 and lies in [8, SP_REC_MAX].  Fixed sizes and 8-byte alignment
 * let a reader skip a record it does not know and let a writer emit structs
 * as they are, with no per-field encoding on the per-sample path.  Fields are
 * in the byte order of the machine that wrote them (x86_64: little endian);
 * a reader on another byte order sees a version "from the future" and stops.
 *
 * The magic of the header says which stream it is; the streams and their
 * records are in lib/format/, and docs/streams.md is their grammar.
 */
#ifndef SP_STREAM_H
#define SP_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define SP_MAGIC_LEN 8
#define SP_REC_MAX (1u << 24)	/* 16 MiB: far above any record we write */

/* The magics of the streams and files stackpulse writes. */
#define SP_RAW_MAGIC		"SPRAW\0\0\0"
#define SP_UNW_MAGIC		"SPUNWND\0"
#define SP_SPOOL_MAGIC		"SPSPOOL\0"
#define SP_SYMCACHE_MAGIC	"SPSYMC\0\0"	/* elf/symcache.h */
#define SP_SYMTEXT_MAGIC	"# stackpulse symbolized"	/* a text line */

struct sp_stream_header {
	char magic[SP_MAGIC_LEN];
	uint32_t version;
	uint32_t header_size;	/* whole header, this struct included */
};

struct sp_rec_hdr {
	uint32_t type;
	uint32_t size;
};

_Static_assert(sizeof(struct sp_stream_header) == 16, "header layout");

static inline uint32_t sp_align8(uint64_t n)
{
	return (uint32_t)((n + 7) & ~(uint64_t)7);
}

/*
 * Name of the stream whose first 8 bytes are magic, for messages: "raw",
 * "unwound", "spool", "symbolized"; NULL if it is none of stackpulse's.
 */
const char *sp_stream_kind(const char magic[SP_MAGIC_LEN]);

#endif
