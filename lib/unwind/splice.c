/* SPDX-License-Identifier: MIT */
/* splice.c: stack words beyond a sample's copy, from its tail. */
#include <string.h>

#include "splice.h"

void sp_splice_init(struct sp_splice *s, const struct sp_raw_sample_view *v)
{
	s->tail = v->tail;
	s->tail_len = v->tail ? v->tail_len : 0;
	s->used = 0;
}

int sp_splice_read(struct sp_splice *s, uint64_t sp, const uint8_t *stack,
		   uint32_t stack_len, uint64_t addr, uint64_t *val)
{
	uint64_t off, end = (uint64_t)stack_len + s->tail_len;
	uint8_t w[8];
	unsigned k;

	if (!s->tail || addr < sp)
		return -1;
	off = addr - sp;
	if (off > end || end - off < 8 || off + 8 <= stack_len)
		return -1;
	/* a word may straddle the end of the copy */
	for (k = 0; k < 8; k++)
		w[k] = off + k < stack_len ? stack[off + k] :
		       s->tail[off + k - stack_len];
	memcpy(val, w, 8);
	s->used = 1;
	return 0;
}

void sp_splice_finish(const struct sp_splice *s, struct sp_frames *out)
{
	if (s->used && out->end == SP_END_COMPLETE)
		out->stack_flags |= SP_STACK_SPLICED;
}
