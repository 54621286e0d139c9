/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h: the waits of each thread, from its switch records, weighted in
 * nanoseconds.
 *
 * A thread's wait runs from its switch-out to its next switch-in.  When the
 * recorder sampled the switch-out (an OFFCPU raw sample), the wait belongs
 * to that sample's stack; otherwise (not permitted, or a wait shorter than
 * the recorder's minimum) to no stack: its time is summed per thread and
 * written now and then as one OFFCPU sample of stack ID 0, so that a
 * thread's time adds up without blocked time ever being put on a stack
 * nobody saw.  A wait still open at the thread's EXIT ends there; at the
 * end of the stream, at its end.  Each OFFCPU sample is stamped with the
 * time its wait ended.
 */
#ifndef SP_UNWIND_OFFCPU_H
#define SP_UNWIND_OFFCPU_H

#include <stdint.h>

#include "format/records.h"
#include "format/unwound.h"

struct sp_offcpu;

/* Called with each OFFCPU sample; returns 0 or -errno, passed back. */
typedef int sp_offcpu_emit_fn(void *arg, const struct sp_unw_sample *s);

/* Waits counted from start (the recording's start); NULL: out of memory. */
struct sp_offcpu *sp_offcpu_new(uint64_t start, sp_offcpu_emit_fn *emit,
				void *arg);
void sp_offcpu_free(struct sp_offcpu *o);

/* The switch-out of tid at time was sampled with stack id. */
int sp_offcpu_sampled(struct sp_offcpu *o, uint32_t pid, uint32_t tid,
		      uint32_t cpu, uint64_t time, uint32_t id);

/* A SWITCH record. */
int sp_offcpu_switch(struct sp_offcpu *o, const struct sp_switch_rec *w);

/* A CPU sample of tid: it runs, so a wait still open was never closed. */
void sp_offcpu_running(struct sp_offcpu *o, uint32_t tid);

/* A new thread at time: it waits for its first switch-in from then. */
int sp_offcpu_fork(struct sp_offcpu *o, uint32_t pid, uint32_t tid,
		   uint64_t time);

/*
 * Thread tid existed when the recording began: off the CPU since then
 * unless a switch-out or a CPU sample shows that it was running.  A thread
 * blocked throughout has no switch at all, and gets the whole recording.
 */
int sp_offcpu_known(struct sp_offcpu *o, uint32_t pid, uint32_t tid);

/* Thread tid ended at time: its open wait ends, its sum is written. */
int sp_offcpu_exit(struct sp_offcpu *o, uint32_t tid, uint64_t time);

/*
 * Process pid is gone at time (a new one took its pid): the open waits of
 * its threads end and their sums are written, while their stacks are
 * still defined.
 */
int sp_offcpu_gone(struct sp_offcpu *o, uint32_t pid, uint64_t time);

/* The stream ended at time: every open wait ends, every sum is written. */
int sp_offcpu_finish(struct sp_offcpu *o, uint64_t time);

struct sp_offcpu_stats {
	uint64_t waits;		/* waits ended */
	uint64_t sampled;	/* of them, with a stack */
	uint64_t unpaired;	/* switch-outs never seen back (lost records) */
	uint64_t ns, sampled_ns;	/* their time */
};

void sp_offcpu_stats(const struct sp_offcpu *o, struct sp_offcpu_stats *st);

#endif
