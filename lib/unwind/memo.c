/* SPDX-License-Identifier: MIT */
/* memo.c: a thread's last unwinding, for the next (memo.h). */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "memo.h"

static void run_release(struct sp_memo_run *r)
{
	free(r->ips);
	free(r->flags);
	free(r->rs);
	free(r->reads);
	memset(r, 0, sizeof(*r));
}

void sp_memo_release(struct sp_memo *m)
{
	unsigned i;

	for (i = 0; i < SP_MEMO_THREADS; i++)
		run_release(&m->last[i]);
	run_release(&m->scratch);
}

void sp_memo_begin(struct sp_memo *m, uint32_t tid)
{
	struct sp_memo_run *r = &m->scratch;

	r->tid = tid;
	r->valid = 0;
	r->nrs = r->nreads = 0;
	r->full = 0;
}

const struct sp_memo_run *sp_memo_last(const struct sp_memo *m, uint32_t tid,
				       unsigned generation)
{
	unsigned i;

	for (i = 0; i < SP_MEMO_THREADS; i++)
		if (m->last[i].valid && m->last[i].tid == tid)
			return m->last[i].generation == generation ?
			       &m->last[i] : NULL;
	return NULL;
}

void sp_memo_restart(struct sp_memo_run *r, uint32_t frame,
		     const struct sp_memo_state *st)
{
	if (r->full)
		return;
	if (SP_GROW(r->rs, r->caprs, r->nrs + 1)) {
		r->full = 1;
		return;
	}
	r->rs[r->nrs++] = (struct sp_memo_restart){ .frame = frame,
		.read = (uint32_t)r->nreads, .st = *st };
}

void sp_memo_read(struct sp_memo_run *r, uint64_t addr, uint64_t val,
		  uint8_t kind, uint8_t outcome)
{
	if (r->full || !r->nrs)
		return;		/* nothing before the first restart is asked */
	if (r->nreads == SP_MEMO_READS ||
	    SP_GROW(r->reads, r->capreads, r->nreads + 1)) {
		r->full = 1;
		return;
	}
	r->reads[r->nreads++] = (struct sp_memo_read){ addr, val, kind,
						       outcome };
}

void sp_memo_take(struct sp_memo_run *r, const struct sp_memo_run *last,
		  const struct sp_memo_restart *rs, uint32_t frame)
{
	size_t first = (size_t)(rs - last->rs), nrs = last->nrs - first;
	size_t nreads = last->nreads - rs->read, i;
	uint32_t base = (uint32_t)r->nreads;

	if (r->full)
		return;
	if (r->nreads + nreads > SP_MEMO_READS ||
	    SP_GROW(r->rs, r->caprs, r->nrs + nrs) ||
	    SP_GROW(r->reads, r->capreads, r->nreads + nreads)) {
		r->full = 1;
		return;
	}
	for (i = 0; i < nrs; i++) {
		struct sp_memo_restart *d = &r->rs[r->nrs++];

		*d = rs[i];
		d->frame = rs[i].frame - rs->frame + frame;
		d->read = rs[i].read - rs->read + base;
	}
	if (nreads)
		memcpy(r->reads + r->nreads, last->reads + rs->read,
		       nreads * sizeof(*r->reads));
	r->nreads += nreads;
}

void sp_memo_end(struct sp_memo *m, unsigned generation, const uint64_t *ips,
		 const uint8_t *flags, unsigned n, enum sp_unw_end end)
{
	struct sp_memo_run *r = &m->scratch, tmp;
	unsigned i;

	if (r->full || !r->nrs || !n)
		return;
	if (SP_GROW(r->ips, r->capips, n) ||
	    SP_GROW(r->flags, r->capflags, n)) {
		r->full = 1;
		return;
	}
	memcpy(r->ips, ips, n * sizeof(*ips));
	memcpy(r->flags, flags, n);
	r->nframes = n;
	r->end = end;
	r->generation = generation;
	r->valid = 1;
	/* the thread's slot, else the next in turn */
	for (i = 0; i < SP_MEMO_THREADS; i++)
		if (m->last[i].valid && m->last[i].tid == r->tid)
			break;
	if (i == SP_MEMO_THREADS) {
		i = m->next;
		m->next = (m->next + 1) % SP_MEMO_THREADS;
	}
	tmp = m->last[i];
	m->last[i] = *r;
	*r = tmp;
	r->valid = 0;
}
