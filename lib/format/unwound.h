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

/*
 * Version 2: end 0 is a proven end (complete) and STACK records have
 * flags.  In version 1, end 0 ("root") meant only that unwinding stopped.
 * Version 3: STACK records may carry Python frames (nr_py, where version 2
 * had zero padding) and PYCODE records name them.
 */
#define SP_UNW_VERSION 3

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

/*
 * How the unwinding of a stack ended.  Only COMPLETE is a whole stack; every
 * other end is a cut one, shown as such by every later stage.
 */
enum sp_unw_end {
	SP_END_COMPLETE = 0,	/* ended where the code says the stack ends:
				   CFI marks the return address undefined
				   (_start, thread start), or a runtime's
				   outermost frame (Go's runtime.goexit) */
	SP_END_TRUNCATED = 1,	/* ran off the end of the stack copy, or a
				   stack switch it could not follow */
	SP_END_NOINFO = 2,	/* no unwind information for an address */
	SP_END_ERROR = 3,	/* an unreadable register or stack word, or a
				   frame that did not make sense */
	SP_END_DEPTH = 4,	/* hit the frame limit */
	SP_END_NOREGS = 5,	/* no user registers: kernel frames only */
	SP_END_MAX
};

/* Per stack flags: how it was completed, or where exactly it was cut. */
#define SP_STACK_SPLICED	0x1	/* finished with stack bytes read from
					   the live process after the sample */
#define SP_STACK_GO_SWITCH	0x2	/* TRUNCATED at a Go stack switch
					   (systemstack, mcall, morestack) */
#define SP_STACK_NO_BUILDID	0x4	/* NOINFO: no file with the build-id
					   the recording holds for a mapping */
#define SP_STACK_PY_TRUNC	0x8	/* more Python frames than were read */
#define SP_STACK_PY_FAULT	0x10	/* the Python frames stop at a read
					   that failed */

/* Per user frame flags. */
#define SP_FRAME_PRECISE 0x1	/* the exact IP, not a return address */

struct sp_unw_stack {
	struct sp_rec_hdr hdr;
	uint32_t pid;
	uint32_t id;		/* >= 1, unique within pid */
	uint16_t nr_kernel;
	uint16_t nr_user;
	uint8_t end;		/* enum sp_unw_end */
	uint8_t flags;		/* SP_STACK_* */
	uint16_t nr_py;		/* Python frames (format/python.h) */
	/*
	 * uint64_t ips[nr_kernel + nr_user];	kernel leaf first, then user
	 *					leaf first
	 * uint8_t uflags[nr_user];		SP_FRAME_*, zero-padded to 8
	 * uint64_t py[nr_py];			innermost first, the words of
	 *					a PYSTACK record
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
	const uint64_t *py;
};

/* Check a STACK record and locate its parts; NULL when sound. */
const char *sp_unw_stack_parse(const struct sp_rec_hdr *rec,
			       struct sp_unw_stack_view *out);

/* Name of an end reason: "complete", "truncated", ... */
const char *sp_unw_end_name(unsigned end);

/*
 * The SP_STACK_* flags as text, "spliced", "go-switch", "no-build-id",
 * "py-truncated", "py-fault" joined by ",", in buf (at least SP_STACK_FLAGS_TEXT bytes); NULL when
 * none is set.
 */
#define SP_STACK_FLAGS_TEXT 64
const char *sp_unw_flags_text(unsigned flags, char *buf);

/*
 * The synthetic outermost frame that stands for how a cut stack ended:
 * "[truncated]", "[no unwind info]", "[unwind error]", "[go stack switch]";
 * NULL for a complete stack (and for noregs, which
 * has no user part to cut).
 */
const char *sp_unw_end_frame(unsigned end, unsigned flags);

#endif
