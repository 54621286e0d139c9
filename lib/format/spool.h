/* SPDX-License-Identifier: MIT */
/*
 * spool.h: spool files, the unwound stream kept on disk in compressed blocks.
 *
 * A spool is what `sp-unwind` writes, stored: the unwound stream header and
 * its records (samples that refer to stack IDs, each distinct stack once,
 * mappings, names, images, thread lifetimes, the summary), cut into blocks
 * that are compressed with zlib one by one:
 *
 *	spool = spool-header *block [trailer]
 *
 * Every block carries its own header (magic, sizes, record count, time
 * range, checksums), so a reader needs nothing after a block to use it: a
 * writer killed with SIGKILL, or one that ran out of disk, leaves a file
 * that reads up to its last complete block.  The trailer (an index of block
 * offsets, the counts and a copy of the summary) is only an optimisation: it
 * lets `sp-spool info` answer without inflating anything, and a reader that
 * finds none scans the blocks from the start.
 *
 * Samples are 40 fixed bytes each in the stream; before deflate a block
 * stores each sample as zigzag varint deltas of its fields from the previous
 * sample of the block (SP_SPOOL_ENC_DELTA), which deflate then squeezes to a
 * few bytes.  Every other record is stored as it is.  Reading a spool back
 * gives exactly the records that were written.
 *
 * Like the streams, fields are in the writer's byte order.  docs/spool.md is
 * the grammar.
 */
#ifndef SP_SPOOL_H
#define SP_SPOOL_H

#include <stdint.h>
#include "records.h"
#include "unwound.h"

#define SP_SPOOL_VERSION	1
#define SP_SPOOL_BLOCK_MAGIC	"SPBLOCK\0"
#define SP_SPOOL_INDEX_MAGIC	"SPINDEX\0"
#define SP_SPOOL_END_MAGIC	"SPEND\0\0\0"

#define SP_SPOOL_BLOCK_SIZE	(1u << 20)	/* default: flush at 1 MiB of records */
#define SP_SPOOL_BLOCK_MIN	4096u
#define SP_SPOOL_BLOCK_LIMIT	(16u << 20)	/* largest block_size a writer takes */
#define SP_SPOOL_USIZE_MAX	(2 * SP_SPOOL_BLOCK_LIMIT)	/* readers refuse more */
#define SP_SPOOL_INDEX_MAX	4096	/* index entries a trailer holds at most */
#define SP_SPOOL_LEVEL		6	/* default zlib level */

/* How a block's records are stored before deflate. */
enum sp_spool_enc {
	SP_SPOOL_ENC_PLAIN = 0,	/* the records as they are */
	SP_SPOOL_ENC_DELTA = 1,	/* tagged: samples as varint deltas */
};

struct sp_spool_header {
	struct sp_stream_header h;	/* SP_SPOOL_MAGIC, version, 128 */
	uint32_t flags;			/* 0 */
	uint32_t block_size;		/* the writer's flush size, informative */
	uint32_t crc;			/* crc32 of header_size bytes, this field 0 */
	uint32_t pad;
	struct sp_unw_header unw;	/* the unwound stream's header */
};

/* A spool written before the unwound header had start_realtime. */
#define SP_SPOOL_HEADER_MIN \
	(offsetof(struct sp_spool_header, unw) + SP_UNW_HEADER_MIN)

struct sp_spool_block {
	char magic[SP_MAGIC_LEN];	/* SP_SPOOL_BLOCK_MAGIC */
	uint32_t seq;			/* block number, from 0 */
	uint32_t enc;			/* enum sp_spool_enc */
	uint32_t nrec;			/* records in the block, >= 1 */
	uint32_t usize;			/* bytes of those records */
	uint32_t tsize;			/* bytes after inflate (encoded records) */
	uint32_t zsize;			/* compressed bytes after this header */
	uint64_t first_time;		/* smallest SAMPLE time, 0 without samples */
	uint64_t last_time;		/* largest SAMPLE time */
	uint32_t data_crc;		/* crc32 of the zsize bytes */
	uint32_t hdr_crc;		/* crc32 of the 52 bytes before it */
};

struct sp_spool_index_entry {
	uint64_t offset;		/* of the block header */
	uint64_t first_time, last_time;
	uint32_t seq;
	uint32_t nrec;
};

#define SP_SPOOL_HAVE_SUMMARY	0x1	/* trailer flags: summary is set */

struct sp_spool_trailer {
	char magic[SP_MAGIC_LEN];	/* SP_SPOOL_INDEX_MAGIC */
	uint32_t nblocks;
	uint32_t nentries;		/* index entries that follow */
	uint32_t stride;		/* entries are for blocks 0, stride, ... */
	uint32_t flags;			/* SP_SPOOL_HAVE_SUMMARY */
	uint64_t records;
	uint64_t samples;
	uint64_t stream_bytes;		/* unwound stream: header + records */
	uint64_t first_time, last_time;	/* over all samples */
	struct sp_unw_summary summary;	/* copy of the last record */
	/* struct sp_spool_index_entry entries[nentries]; then the footer */
};

struct sp_spool_footer {
	uint64_t trailer_offset;
	uint32_t trailer_size;		/* trailer, entries and footer */
	uint32_t crc;			/* crc32 of the trailer up to this field */
	char magic[SP_MAGIC_LEN];	/* SP_SPOOL_END_MAGIC: the file's last bytes */
};

_Static_assert(sizeof(struct sp_spool_header) == 128, "spool header layout");
_Static_assert(sizeof(struct sp_spool_block) == 56, "block header layout");
_Static_assert(sizeof(struct sp_spool_index_entry) == 32, "index entry layout");
_Static_assert(sizeof(struct sp_spool_trailer) == 184, "trailer layout");
_Static_assert(sizeof(struct sp_spool_footer) == 24, "footer layout");

/* Writing ----------------------------------------------------------------- */

struct sp_spool_writer;

struct sp_spool_opts {
	int level;		/* zlib level 0..9; SP_SPOOL_LEVEL when opts is NULL */
	uint32_t block_size;	/* SP_SPOOL_BLOCK_MIN..SP_SPOOL_BLOCK_LIMIT */
	uint32_t enc;		/* enum sp_spool_enc */
};

/* The options used when sp_spool_writer_open() is given NULL. */
void sp_spool_opts_init(struct sp_spool_opts *opts);

/*
 * Create (or truncate) path and write the spool header, which holds uh.
 * Returns NULL with errno set (EINVAL for bad opts, ENOSPC, ...).  The
 * caller owns the writer and must sp_spool_writer_close() it.
 */
struct sp_spool_writer *sp_spool_writer_open(const char *path,
					     const struct sp_unw_header *uh,
					     const struct sp_spool_opts *opts);

/*
 * Add one record of the unwound stream (rec->size bytes are copied).  The
 * record is checked as a reader would: framing, known layouts, a SAMPLE's
 * stack defined before it (for the process that has its pid: the stacks of
 * a process are forgotten with it, as alive.h says), nothing after the
 * SUMMARY.  A full block is
 * compressed and written.  Returns 0, -EINVAL for a bad record (see
 * sp_spool_writer_error()) or the -errno of a failed write, after which
 * every call fails the same way.
 */
int sp_spool_writer_add(struct sp_spool_writer *w, const struct sp_rec_hdr *rec);

/* Write the records added since the last block as a block now; 0 or -errno. */
int sp_spool_writer_flush(struct sp_spool_writer *w);

/* Records added but not yet written in a block. */
uint32_t sp_spool_writer_pending(const struct sp_spool_writer *w);

/* What the last -EINVAL from sp_spool_writer_add() was about, or "". */
const char *sp_spool_writer_error(const struct sp_spool_writer *w);

struct sp_spool_stats {
	uint64_t records, samples, stacks;
	uint64_t blocks;
	uint64_t stream_bytes;	/* unwound stream: header + records */
	uint64_t file_bytes;	/* written to the file so far */
};

void sp_spool_writer_stats(const struct sp_spool_writer *w,
			   struct sp_spool_stats *st);

/*
 * Flush the last block, write the trailer if a SUMMARY was added (without
 * one the spool reads as cut after its last block), fsync and close.
 * Frees w whatever happens.  Returns 0 or the first -errno seen, including
 * one of an earlier call.  NULL is a no-op.
 */
int sp_spool_writer_close(struct sp_spool_writer *w);

/* Reading ----------------------------------------------------------------- */

struct sp_spool;

/*
 * Open a spool and check its header, and its trailer when it has one.
 * Returns 0, or -errno: -EBADMSG for a damaged or foreign file, -ENOTSUP
 * for a version from the future, others from open(2).  Either way *rp is
 * set to a reader that the caller owns and must sp_spool_close(), and whose
 * sp_spool_error() says what failed; *rp is NULL only when out of memory.
 */
int sp_spool_open(const char *path, struct sp_spool **rp);

/* The unwound stream header stored in the spool (valid until close). */
const struct sp_unw_header *sp_spool_header(const struct sp_spool *r);

/*
 * Read the next record of the stream, in the order written.  Returns 1 and
 * points *rec at it (valid until the next call), 0 at the end of a complete
 * spool, -ENODATA when the file is cut (every record before the cut has been
 * returned; sp_spool_error() says where: "'x' is cut at byte N after block
 * K: ..."), -EBADMSG on damage ("bad checksum in block K at byte N of
 * 'x'"), -ENOMEM, -EIO.  After an error it returns the same error.
 */
int sp_spool_next(struct sp_spool *r, const struct sp_rec_hdr **rec);

struct sp_spool_sample {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t cpu;
	uint32_t stack_id;
	uint64_t weight;
};

/*
 * Read up to the next SAMPLE record, indexing the STACK records on the
 * way, and fill *s.  Returns as sp_spool_next().
 */
int sp_spool_next_sample(struct sp_spool *r, struct sp_spool_sample *s);

/*
 * Look up the frames of stack id of pid among the STACK records read so
 * far.  Returns 0 and fills *out (valid until close), or -ENOENT.
 */
int sp_spool_stack(const struct sp_spool *r, uint32_t pid, uint32_t id,
		   struct sp_unw_stack_view *out);

/*
 * The summary of the stream from the trailer, without reading any block.
 * Returns 0, or -ENOENT when the spool has no valid trailer (it is cut) or
 * was closed without a summary.
 */
int sp_spool_summary(const struct sp_spool *r, struct sp_unw_summary *out);

/*
 * A summary counted from the records read so far (samples, lost, stacks,
 * threads and processes seen, sample time range, end reasons): what a cut
 * spool's stream gets in place of the summary it lacks.
 */
void sp_spool_tally(const struct sp_spool *r, struct sp_unw_summary *out);

struct sp_spool_info {
	uint64_t file_size;
	uint64_t stream_bytes;	/* of the unwound stream; 0 when not known */
	uint64_t records, samples;
	uint64_t first_time, last_time;	/* of samples */
	uint64_t blocks;
	int indexed;		/* the numbers come from a valid trailer */
};

/*
 * Sizes and counts: from the trailer when the spool has one, otherwise of
 * what has been read so far.
 */
void sp_spool_info(const struct sp_spool *r, struct sp_spool_info *out);

/* Largest stack ID read so far, of any process. */
uint32_t sp_spool_max_stack_id(const struct sp_spool *r);

/* The last error, one line without the program name, or "". */
const char *sp_spool_error(const struct sp_spool *r);

/* Close and free, and every stack it indexed; NULL is a no-op. */
void sp_spool_close(struct sp_spool *r);

#endif
