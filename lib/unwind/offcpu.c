/* SPDX-License-Identifier: MIT */
/* offcpu.c: switch records paired into weighted waits (offcpu.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "offcpu.h"

/* Unsampled time of a thread is written once it spans this much. */
#define UNSAMPLED_SPAN_NS	(100 * 1000 * 1000ull)

struct wait {
	uint32_t pid, tid, cpu;
	uint32_t id;		/* stack of the switch-out; 0: none */
	uint64_t out;		/* switch-out time */
	int open;
	int sampled;		/* a sample, its switch-out record to come */
	int unsure;		/* open since the start, unless it runs */
	uint64_t unsampled;	/* ns not written yet */
	uint64_t since;		/* end of the first of them */
	uint32_t unsampled_cpu;
};

struct sp_offcpu {
	uint64_t start;
	sp_offcpu_emit_fn *emit;
	void *arg;
	struct sp_u64map index;	/* tid -> slot in w */
	struct wait *w;
	size_t n, cap;
	struct sp_offcpu_stats st;
};

struct sp_offcpu *sp_offcpu_new(uint64_t start, sp_offcpu_emit_fn *emit,
				void *arg)
{
	struct sp_offcpu *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->start = start;
	o->emit = emit;
	o->arg = arg;
	return o;
}

void sp_offcpu_free(struct sp_offcpu *o)
{
	if (!o)
		return;
	sp_u64map_release(&o->index);
	free(o->w);
	free(o);
}

void sp_offcpu_stats(const struct sp_offcpu *o, struct sp_offcpu_stats *st)
{
	*st = o->st;
}

static struct wait *find(struct sp_offcpu *o, uint32_t tid)
{
	struct sp_u64slot *s = sp_u64map_find(&o->index, tid);

	return s ? &o->w[s->val] : NULL;
}

/*
 * The thread's state, new when first seen: then it was off the CPU since
 * the recording began (a thread blocked when it was attached to), with no
 * stack.  *is_new says so.
 */
static struct wait *get(struct sp_offcpu *o, uint32_t pid, uint32_t tid,
			int *is_new)
{
	struct sp_u64slot *s;
	struct wait *w;
	int fresh;

	s = sp_u64map_get(&o->index, tid, &fresh);
	if (!s)
		return NULL;
	if (is_new)
		*is_new = fresh;
	if (!fresh)
		return &o->w[s->val];
	if (SP_GROW(o->w, o->cap, o->n + 1)) {
		sp_u64map_del(&o->index, tid);
		return NULL;
	}
	s->val = o->n;
	w = &o->w[o->n++];
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->tid = tid;
	return w;
}

static int put(struct sp_offcpu *o, const struct wait *w, uint32_t cpu,
	       uint64_t time, uint32_t id, uint64_t ns)
{
	struct sp_unw_sample s = { { SP_REC_OFFCPU, sizeof(s) } };

	s.time = time;
	s.pid = w->pid;
	s.tid = w->tid;
	s.cpu = cpu;
	s.stack_id = id;
	s.weight = ns;
	return o->emit(o->arg, &s);
}

static int flush(struct sp_offcpu *o, struct wait *w, uint64_t time)
{
	uint64_t ns = w->unsampled;

	if (!ns)
		return 0;
	w->unsampled = 0;
	w->since = 0;
	return put(o, w, w->unsampled_cpu, time, 0, ns);
}

/* The wait of w ends at time (on cpu). */
static int close_wait(struct sp_offcpu *o, struct wait *w, uint64_t time,
		      uint32_t cpu)
{
	uint64_t ns = time > w->out ? time - w->out : 0;

	w->open = 0;
	w->sampled = 0;
	w->unsure = 0;
	o->st.waits++;
	o->st.ns += ns;
	if (w->id) {
		o->st.sampled++;
		o->st.sampled_ns += ns;
		return put(o, w, cpu, time, w->id, ns);
	}
	if (!w->unsampled)
		w->since = time;
	w->unsampled += ns;
	w->unsampled_cpu = cpu;
	return time - w->since >= UNSAMPLED_SPAN_NS ? flush(o, w, time) : 0;
}

int sp_offcpu_sampled(struct sp_offcpu *o, uint32_t pid, uint32_t tid,
		      uint32_t cpu, uint64_t time, uint32_t id)
{
	struct wait *w = get(o, pid, tid, NULL);

	if (!w)
		return -ENOMEM;
	if (w->open)
		o->st.unpaired++;	/* its switch-in was lost */
	w->pid = pid;
	w->cpu = cpu;
	w->id = id;
	w->out = time;
	w->open = 1;
	w->sampled = 1;
	return 0;
}

int sp_offcpu_switch(struct sp_offcpu *o, const struct sp_switch_rec *r)
{
	int is_new;
	struct wait *w = get(o, r->pid, r->tid, &is_new);

	if (!w)
		return -ENOMEM;
	if (r->flags & SP_SWITCH_OUT) {
		/* the sample of this switch-out came first, if any */
		if (w->sampled) {
			w->sampled = 0;
			return 0;
		}
		if (w->open && !w->unsure)
			o->st.unpaired++;
		w->unsure = 0;
		w->pid = r->pid;
		w->id = 0;
		w->out = r->time;
		w->open = 1;
		return 0;
	}
	if (is_new) {
		/* blocked since before the recording began */
		w->out = o->start;
		w->open = o->start && o->start < r->time;
	}
	return w->open ? close_wait(o, w, r->time, r->cpu) : 0;
}

void sp_offcpu_running(struct sp_offcpu *o, uint32_t tid)
{
	struct wait *w = find(o, tid);

	if (w && w->open) {
		w->open = 0;
		w->sampled = 0;
		o->st.unpaired += !w->unsure;
		w->unsure = 0;
	}
}

int sp_offcpu_fork(struct sp_offcpu *o, uint32_t pid, uint32_t tid,
		   uint64_t time)
{
	struct wait *w = get(o, pid, tid, NULL);

	if (!w)
		return -ENOMEM;
	/* a reused tid: what the old thread left is written first */
	if (w->open && close_wait(o, w, time, w->cpu))
		return -ENOMEM;
	if (flush(o, w, time))
		return -ENOMEM;
	w->pid = pid;
	w->id = 0;
	w->out = time;
	w->open = 1;
	return 0;
}

int sp_offcpu_gone(struct sp_offcpu *o, uint32_t pid, uint64_t time)
{
	size_t i;
	int e = 0;

	for (i = 0; !e && i < o->n; i++) {
		struct wait *w = &o->w[i];

		if (w->pid != pid)
			continue;
		if (w->open)
			e = close_wait(o, w, time, w->cpu);
		if (!e)
			e = flush(o, w, time);
	}
	return e;
}

int sp_offcpu_known(struct sp_offcpu *o, uint32_t pid, uint32_t tid)
{
	struct wait *w;
	int is_new;

	if (!o->start)
		return 0;
	w = get(o, pid, tid, &is_new);
	if (!w)
		return -ENOMEM;
	if (is_new) {
		w->out = o->start;
		w->open = w->unsure = 1;
	}
	return 0;
}

int sp_offcpu_exit(struct sp_offcpu *o, uint32_t tid, uint64_t time)
{
	struct sp_u64slot *s = sp_u64map_find(&o->index, tid);
	struct wait *w;
	size_t i, last;
	int e = 0;

	if (!s)
		return 0;
	i = s->val;
	w = &o->w[i];
	if (w->open)
		e = close_wait(o, w, time, w->cpu);
	if (!e)
		e = flush(o, w, time);
	/* the last slot moves into the hole */
	sp_u64map_del(&o->index, tid);
	last = --o->n;
	if (i != last) {
		o->w[i] = o->w[last];
		s = sp_u64map_find(&o->index, o->w[i].tid);
		if (s)
			s->val = i;
	}
	return e;
}

int sp_offcpu_finish(struct sp_offcpu *o, uint64_t time)
{
	size_t i;
	int e = 0;

	for (i = 0; !e && i < o->n; i++) {
		struct wait *w = &o->w[i];

		if (w->open)
			e = close_wait(o, w, time, w->cpu);
		if (!e)
			e = flush(o, w, time);
	}
	return e;
}
