/* SPDX-License-Identifier: MIT */
/*
 * unwound.h: the unwound stream, from sp-unwind to sp-symbolize (and what a
 * spool file stores).
 *
 * Samples do not carry frames: each refers to a stack ID, and a STACK record
 * defines an ID the first time its frame list appears in a process.  Hot code
 * produces the same few stacks over and over, so the stream grows by 40 bytes
 * per sample once its stacks are known, and every later stage can cache its
 * work per (pid, stack ID).  The stream is:
 *
 *	unwound-stream = sp_unw_header *record sp_unw_summary
 *
 * where a STACK precedes every SAMPLE that refers to it, and the records of
 * records.h (mappings, names, images, thread lifetimes) come in time order.
 */
#ifndef SP_UNWOUND_H
#define SP_UNWOUND_H

#include <stddef.h>

#include "records.h"

#define SP_UNW_VERSION 1

struct sp_unw_header {
	struct sp_stream_header h;
	struct sp_event_info ev;
	/*
	 * CLOCK_REALTIME ns at ev.start_time, 0 unknown (from the raw
	 * header).  Headers written before it end at SP_UNW_HEADER_MIN.
	 */
	uint64_t start_realtime;
};

#define SP_UNW_HEADER_MIN offsetof(struct sp_unw_header, start_realtime)

/* How the unwinding of a stack ended. */
enum sp_unw_end {
	SP_END_ROOT = 0,	/* reached the outermost frame */
	SP_END_TRUNCATED = 1,	/* ran off the end of the stack copy */
	SP_END_NOINFO = 2,	/* no unwind information for a frame */
	SP_END_ERROR = 3,	/* a frame did not make sense */
	SP_END_DEPTH = 4,	/* hit the frame limit */
	SP_END_NOREGS = 5,	/* no user registers: kernel frames only */
	SP_END_MAX
};

/* Per user frame flags. */
#define SP_FRAME_PRECISE 0x1	/* the exact IP, not a return address */

struct sp_unw_stack {
	struct sp_rec_hdr hdr;
	uint32_t pid;
	uint32_t id;		/* >= 1, unique within pid */
	uint16_t nr_kernel;
	uint16_t nr_user;
	uint8_t end;		/* enum sp_unw_end */
	uint8_t pad[3];
	/*
	 * uint64_t ips[nr_kernel + nr_user];	kernel leaf first, then user
	 *					leaf first
	 * uint8_t uflags[nr_user];		SP_FRAME_*, zero-padded to 8
	 */
};

struct sp_unw_sample {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint32_t pid, tid;
	uint32_t cpu;
	uint32_t stack_id;
	uint64_t weight;	/* the sample period */
};

struct sp_unw_summary {
	struct sp_rec_hdr hdr;
	uint64_t samples;
	uint64_t lost;
	uint64_t stacks;	/* distinct stacks */
	uint64_t threads, processes;
	uint64_t start_time, end_time, duration_ns;
	uint64_t ends[SP_END_MAX];	/* samples per enum sp_unw_end */
};

_Static_assert(sizeof(struct sp_unw_header) == 96, "unwound header layout");
_Static_assert(sizeof(struct sp_unw_stack) == 24, "stack layout");
_Static_assert(sizeof(struct sp_unw_sample) == 40, "unwound sample layout");
_Static_assert(sizeof(struct sp_unw_summary) == 120, "unwound summary layout");

struct sp_unw_stack_view {
	const struct sp_unw_stack *s;
	const uint64_t *kernel_ips;
	const uint64_t *user_ips;
	const uint8_t *uflags;
};

/* Check a STACK record and locate its parts; NULL when sound. */
const char *sp_unw_stack_parse(const struct sp_rec_hdr *rec,
			       struct sp_unw_stack_view *out);

/* Name of an end reason: "root", "truncated", ... */
const char *sp_unw_end_name(unsigned end);

#endif
