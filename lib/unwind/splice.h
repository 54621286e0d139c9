/* SPDX-License-Identifier: MIT */
/*
 * splice.h: a sample's stack copy continued by its tail, the bytes of the
 * thread's stack beyond the copy that the recorder read from the live
 * process (format/tail.h).
 *
 * The unwinder reads stack words from the copy first; a word that is not
 * all inside it is read here, from the copy and the tail together, and the
 * splice remembers that the tail was needed.  A stack that needed its tail
 * and then unwound completely is marked SP_STACK_SPLICED.
 */
#ifndef SP_SPLICE_H
#define SP_SPLICE_H

#include <stdint.h>

#include "format/raw.h"
#include "unwind.h"

struct sp_splice {
	const uint8_t *tail;	/* NULL: none */
	uint64_t tail_len;
	int used;		/* a word came from the tail */
};

/* The splice of sample view v: its tail, not used yet. */
void sp_splice_init(struct sp_splice *s, const struct sp_raw_sample_view *v);

/*
 * Read the 8 bytes at addr from the copy of stack_len bytes at sp followed
 * by the tail.  Returns 0 (and notes that the tail was used) when they all
 * lie in the two and some in the tail, else -1.
 */
int sp_splice_read(struct sp_splice *s, uint64_t sp, const uint8_t *stack,
		   uint32_t stack_len, uint64_t addr, uint64_t *val);

/* After the unwinding: mark out SP_STACK_SPLICED if it used the tail and completed. */
void sp_splice_finish(const struct sp_splice *s, struct sp_frames *out);

#endif
