/* SPDX-License-Identifier: MIT */
/*
 * tail.h: stack tails, the part of a thread's stack beyond a sample's stack
 * copy, read from the live process after the sample (raw stream only).
 *
 * perf copies at most 64 KiB of a sample's user stack, so a deeper stack
 * cannot be unwound to its root from the copy alone.  Its outer part, the
 * callers near the root, is the oldest part and rarely changes while the
 * sample waits in the ring buffer: the recorder reads it from the process
 * when it drains the sample, keeps it only when the bytes where it meets
 * the copy are still the copy's, and writes it as a TAIL record before the
 * sample.  The unwinder reads the stack words beyond the copy from it.
 *
 * A deep stack changes little near its root, so the tails of one thread
 * share most of their bytes: a TAIL record carries only the low end of its
 * tail and takes the rest (kept bytes at its high end) from the thread's
 * previous tail, at the same addresses.  Writer and reader keep the same
 * per-thread state, struct sp_tails, driven by the records in stream
 * order: a TAIL sets its thread's tail, an EXIT of the thread forgets it.
 * docs/streams.md is the grammar.
 */
#ifndef SP_TAIL_H
#define SP_TAIL_H

#include <stddef.h>

#include "records.h"

struct sp_tail_rec {
	struct sp_rec_hdr hdr;	/* SP_REC_TAIL */
	uint64_t time;		/* that of the sample it continues */
	uint32_t pid, tid;
	uint64_t start;		/* first address: where the sample's copy ends */
	uint32_t len;		/* bytes of the tail, [start, start + len) */
	uint32_t kept;		/* of them, the last kept bytes are the
				   thread's previous tail's */
	uint8_t data[];		/* the first len - kept bytes, zero-padded
				   to 8 */
};

_Static_assert(sizeof(struct sp_tail_rec) == 40, "tail layout");

/* The longest tail a stream may hold, bytes. */
#define SP_TAIL_MAX (1u << 24)

/*
 * Check a TAIL record against its own size: the fixed part, len and kept,
 * the bytes it carries.  Returns NULL when sound, else a static
 * description.  Whether the kept bytes exist is sp_tails_decode()'s check.
 */
const char *sp_tail_check(const struct sp_rec_hdr *rec);

/* The current tail of one thread. */
struct sp_tail {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t start;
	uint32_t len;
	uint8_t *bytes;		/* len bytes, owned by the sp_tails */
};

struct sp_tails;

/* An empty set of tails; NULL when out of memory. */
struct sp_tails *sp_tails_new(void);

/* Free every tail; NULL is a no-op. */
void sp_tails_free(struct sp_tails *t);

/*
 * The reader's side: apply a TAIL record (checked here), so that its
 * thread's tail becomes the record's bytes followed by the kept bytes of
 * the thread's previous tail.  Returns 0; -EINVAL with *why set to a static
 * description when the record is damaged or keeps bytes that the thread's
 * previous tail (of the same process) does not hold; -ENOMEM.
 */
int sp_tails_decode(struct sp_tails *t, const struct sp_rec_hdr *rec,
		    const char **why);

/*
 * The writer's side: rec is a whole TAIL record (kept 0, len bytes of data,
 * hdr.size at least 40 + len).  Make its bytes the thread's tail, and
 * shrink rec to what the reader needs after the thread's previous tail:
 * set kept to the bytes at the high end equal to that tail's, and hdr.size
 * to what is left, zero-padded.  Returns 0, or -ENOMEM: rec stays whole and
 * the thread has no tail, so the next record cannot keep bytes of it.
 */
int sp_tails_encode(struct sp_tails *t, struct sp_tail_rec *rec);

/*
 * The current tail of thread tid, or NULL.  Valid until the next call that
 * changes t.
 */
const struct sp_tail *sp_tails_get(const struct sp_tails *t, uint32_t tid);

/* Thread tid has exited: forget its tail. */
void sp_tails_forget(struct sp_tails *t, uint32_t tid);

/* Bytes of the tails held now. */
uint64_t sp_tails_bytes(const struct sp_tails *t);

#endif
