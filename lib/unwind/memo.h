/* SPDX-License-Identifier: MIT */
/*
 * memo.h: a thread's last unwinding, kept so that the next sample of the
 * thread can take the part of it above a restart point instead of stepping
 * through it again.
 *
 * The unwinder restarts libunwind from a few registers where it leaves
 * code without CFI (Python's perf trampolines, Go's stack steps): from
 * there on, what it does depends only on those registers, on what it reads,
 * on whether a read past the stack copy failed before (which makes a stack
 * that ends in an error a truncated one) and on the process's files and
 * mappings.  A memo keeps, for each restart
 * of one unwinding, the registers it restarted from and every read after
 * it whose answer can change from sample to sample (stack words, reads
 * that failed) with the answer; reads of the files are left out.  When a
 * later unwinding of the same thread restarts from the same registers and
 * every one of those reads answers the same, the rest of the stack is the
 * memo's, frame for frame: the same steps would be taken over the same
 * answers.
 */
#ifndef SP_MEMO_H
#define SP_MEMO_H

#include <stdint.h>
#include <stddef.h>

#include "format/unwound.h"

#define SP_MEMO_REGS 17		/* libunwind's x86-64 registers, RAX..RIP */

/* What a restart began from. */
struct sp_memo_state {
	uint32_t have;			/* bit per register of regs */
	uint32_t truncated;		/* a read past the copy failed before */
	uint64_t regs[SP_MEMO_REGS];	/* 0 where not in have */
};

struct sp_memo_restart {
	uint32_t frame;		/* index of the frame it began */
	uint32_t read;		/* reads before it */
	struct sp_memo_state st;
};

struct sp_memo_read {
	uint64_t addr, val;
	uint8_t kind, outcome;	/* the unwinder's: how it read, what came */
};

/* One unwinding. */
struct sp_memo_run {
	uint32_t tid;
	unsigned generation;	/* of the process's mappings */
	int valid;
	unsigned nframes;
	enum sp_unw_end end;
	uint64_t *ips;
	uint8_t *flags;
	size_t capips, capflags;
	struct sp_memo_restart *rs;
	size_t nrs, caprs;
	struct sp_memo_read *reads;
	size_t nreads, capreads;
	int full;		/* a read or restart did not fit: not kept */
};

/* Up to SP_MEMO_THREADS threads of one process, each its last run. */
#define SP_MEMO_THREADS 4
/* Reads kept of one run, at most. */
#define SP_MEMO_READS 4096

struct sp_memo {
	struct sp_memo_run last[SP_MEMO_THREADS];
	struct sp_memo_run scratch;	/* the run under way */
	unsigned next;			/* the slot a new thread takes */
};

void sp_memo_release(struct sp_memo *m);

/* Start a run of thread tid in m->scratch. */
void sp_memo_begin(struct sp_memo *m, uint32_t tid);

/* The last run of tid, or NULL. */
const struct sp_memo_run *sp_memo_last(const struct sp_memo *m, uint32_t tid,
				       unsigned generation);

/* Note a restart at frame of the run under way, or a read after one. */
void sp_memo_restart(struct sp_memo_run *r, uint32_t frame,
		     const struct sp_memo_state *st);
void sp_memo_read(struct sp_memo_run *r, uint64_t addr, uint64_t val,
		  uint8_t kind, uint8_t outcome);

/*
 * The run under way took the rest of last from its restart rs at its own
 * frame: note last's later restarts and reads as its own.
 */
void sp_memo_take(struct sp_memo_run *r, const struct sp_memo_run *last,
		  const struct sp_memo_restart *rs, uint32_t frame);

/*
 * The run under way ended with n frames (ips, flags) and end: keep it as
 * the last of its thread, in place of the one before.  A run without a
 * restart is not kept (nothing could be taken from it), nor one that did
 * not fit.
 */
void sp_memo_end(struct sp_memo *m, unsigned generation, const uint64_t *ips,
		 const uint8_t *flags, unsigned n, enum sp_unw_end end);

#endif
