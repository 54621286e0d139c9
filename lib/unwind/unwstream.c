/* SPDX-License-Identifier: MIT */
/* unwstream.c: raw records in, unwound records out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "format/python.h"
#include "format/tail.h"
#include "intern.h"
#include "missing.h"
#include "offcpu.h"
#include "unwind.h"
#include "unwstream.h"

struct sp_unwstream {
	struct sp_raw_header rh;
	sp_unwstream_emit_fn *emit;
	void *arg;
	struct sp_elf_cache *cache;
	int own_cache;		/* made here, freed here */
	struct sp_procs *procs;
	struct sp_unwinder *unw;
	uint32_t last_id;	/* of the stacks of every process */
	struct sp_tails *tails;	/* per thread, from TAIL records */
	struct sp_frames frames;
	struct sp_unw_summary sum;
	struct sp_unwstream_stats st;
	uint64_t *missing;	/* samples per sp_procs_missing() file */
	size_t cap_missing;
	struct sp_raw_summary raw_sum;
	int have_summary;
	const char *error;
	uint8_t *rec;		/* scratch for STACK records */
	size_t reccap;
	struct sp_offcpu *off;	/* waits, from the first SWITCH or OFFCPU */
	uint64_t now;		/* time of the record the process table takes */
	int forget_err;		/* of emitting a forgotten process's waits */
	/* the last PYSTACK: the Python frames of the sample after it */
	struct sp_pystack_rec py;
	uint64_t *py_frames;
	size_t py_cap;
	int py_set;
};

/*
 * The process table forgets proc, before the record that made it so goes
 * out: its waits go out first, while every reader still knows the stacks
 * they name (a thread with no EXIT in the stream keeps its wait open).
 */
static void forgotten(void *arg, struct sp_proc *proc)
{
	struct sp_unwstream *u = arg;

	if (u->off && !u->forget_err)
		u->forget_err = sp_offcpu_gone(u->off, sp_proc_pid(proc), u->now);
}

struct sp_unwstream *sp_unwstream_new(const struct sp_raw_header *rh,
				      sp_unwstream_emit_fn *emit, void *arg)
{
	return sp_unwstream_new_cached(rh, NULL, emit, arg);
}

struct sp_unwstream *sp_unwstream_new_cached(const struct sp_raw_header *rh,
					     struct sp_elf_cache *cache,
					     sp_unwstream_emit_fn *emit,
					     void *arg)
{
	struct sp_unwstream *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->rh = *rh;
	u->emit = emit;
	u->arg = arg;
	u->own_cache = !cache;
	u->cache = cache ? cache : sp_elf_cache_new();
	u->procs = u->cache ? sp_procs_new(u->cache) : NULL;
	u->unw = u->procs ? sp_unwinder_new(rh) : NULL;
	u->tails = sp_tails_new();
	if (!u->unw || !u->tails) {
		sp_unwstream_free(u);
		return NULL;
	}
	sp_procs_on_forget(u->procs, forgotten, u);
	u->sum.hdr.type = SP_REC_SUMMARY;
	u->sum.hdr.size = sizeof(u->sum);
	return u;
}

void sp_unwstream_free(struct sp_unwstream *u)
{
	if (!u)
		return;
	free(u->rec);
	free(u->py_frames);
	sp_offcpu_free(u->off);
	sp_tails_free(u->tails);
	free(u->missing);
	sp_unwinder_free(u->unw);
	sp_procs_free(u->procs);
	if (u->own_cache)
		sp_elf_cache_free(u->cache);
	free(u);
}

void sp_unwstream_header(const struct sp_unwstream *u,
			 struct sp_unw_header *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->h.magic, SP_UNW_MAGIC, SP_MAGIC_LEN);
	out->h.version = SP_UNW_VERSION;
	out->h.header_size = sizeof(*out);
	out->ev = u->rh.ev;
	out->start_realtime = u->rh.start_realtime;
}

const struct sp_unw_summary *sp_unwstream_summary(const struct sp_unwstream *u)
{
	return &u->sum;
}

void sp_unwstream_set_memo(struct sp_unwstream *u, int on)
{
	sp_unwinder_set_memo(u->unw, on);
}

const struct sp_unwstream_stats *sp_unwstream_stats(const struct sp_unwstream *u)
{
	return &u->st;
}

struct sp_locator *sp_unwstream_locator(struct sp_unwstream *u)
{
	return sp_procs_locator(u->procs);
}

const struct sp_missing_file *sp_unwstream_missing(const struct sp_unwstream *u,
						   size_t *n)
{
	return sp_procs_missing(u->procs, n);
}

uint64_t sp_unwstream_missing_samples(const struct sp_unwstream *u, size_t i)
{
	return i < u->cap_missing ? u->missing[i] : 0;
}

/* A sample's stack ended at a file that is not at hand: count it there. */
static int count_missing(struct sp_unwstream *u, uint32_t pid)
{
	long i = sp_unwind_missing_file(u->procs, pid, &u->frames);
	size_t old = u->cap_missing;

	if (i < 0)
		return 0;
	if ((size_t)i >= u->cap_missing) {
		if (SP_GROW(u->missing, u->cap_missing, (size_t)i + 1))
			return -ENOMEM;
		memset(u->missing + old, 0,
		       (u->cap_missing - old) * sizeof(*u->missing));
	}
	u->missing[i]++;
	return 0;
}

const char *sp_unwstream_error(const struct sp_unwstream *u)
{
	return u->error ? u->error : "";
}

static int refuse(struct sp_unwstream *u, const char *why)
{
	u->error = why;
	return -EINVAL;
}

static int emit_stack(struct sp_unwstream *u, uint32_t id,
		      const struct sp_raw_sample_view *v,
		      const struct sp_stack_key *k)
{
	const struct sp_frames *f = &u->frames;
	size_t n = v->s->nr_kernel + f->nr_user;
	size_t size = sizeof(struct sp_unw_stack) + 8 * n + sp_align8(f->nr_user) +
		      8u * k->nr_py;
	struct sp_unw_stack *s;
	uint64_t *ips;

	if (size > u->reccap) {
		free(u->rec);
		u->rec = malloc(size);
		u->reccap = u->rec ? size : 0;
		if (!u->rec)
			return -ENOMEM;
	}
	memset(u->rec, 0, size);
	s = (struct sp_unw_stack *)u->rec;
	s->hdr.type = SP_REC_STACK;
	s->hdr.size = (uint32_t)size;
	s->pid = v->s->pid;
	s->id = id;
	s->nr_kernel = v->s->nr_kernel;
	s->nr_user = (uint16_t)f->nr_user;
	s->end = (uint8_t)f->end;
	s->flags = k->flags;
	s->nr_py = k->nr_py;
	ips = (uint64_t *)(s + 1);
	if (v->s->nr_kernel)
		memcpy(ips, v->kernel_ips, 8u * v->s->nr_kernel);
	if (f->nr_user) {
		memcpy(ips + v->s->nr_kernel, f->ips, 8u * f->nr_user);
		memcpy(ips + n, f->flags, f->nr_user);
	}
	if (k->nr_py)
		memcpy((uint8_t *)(ips + n) + sp_align8(f->nr_user), k->py,
		       8u * k->nr_py);
	return u->emit(u->arg, &s->hdr);
}

/* Keep a PYSTACK for the sample that follows it. */
static int take_pystack(struct sp_unwstream *u, const struct sp_rec_hdr *rec)
{
	const struct sp_pystack_rec *p = (const void *)rec;
	const char *bad = sp_pystack_check(rec);

	if (bad)
		return refuse(u, bad);
	if (p->n > u->py_cap) {
		uint64_t *v = realloc(u->py_frames, 8u * p->n);

		if (!v)
			return -ENOMEM;
		u->py_frames = v;
		u->py_cap = p->n;
	}
	u->py = *p;
	if (p->n)
		memcpy(u->py_frames, p + 1, 8u * p->n);
	u->py_set = 1;
	return 0;
}

/* The Python frames of the sample s, when a PYSTACK was made for it. */
static void use_pystack(struct sp_unwstream *u, const struct sp_raw_sample *s,
			struct sp_stack_key *k)
{
	k->nr_py = 0;
	k->py = NULL;
	if (!u->py_set || u->py.tid != s->tid || u->py.pid != s->pid ||
	    u->py.time != s->time)
		return;
	u->py_set = 0;
	k->nr_py = u->py.n;
	k->py = u->py_frames;
	if (u->py.flags & SP_PYS_TRUNC)
		k->flags |= SP_STACK_PY_TRUNC;
	if (u->py.flags & SP_PYS_FAULT)
		k->flags |= SP_STACK_PY_FAULT;
}

/*
 * The thread's tail continues this sample when it was read for it: same
 * process and time, and it starts where the copy ends.
 */
static void use_tail(struct sp_unwstream *u, struct sp_raw_sample_view *v)
{
	const struct sp_tail *t = sp_tails_get(u->tails, v->s->tid);
	int sp = sp_raw_reg_index(u->rh.regs_mask, SP_RAW_REG_SP);
	uint64_t at;

	if (!t || t->pid != v->s->pid || t->time != v->s->time || sp < 0 ||
	    sp >= v->s->nr_regs)
		return;
	at = v->regs[sp] + v->s->stack_len;
	if (at != t->start || at < v->regs[sp])
		return;
	v->tail = t->bytes;
	v->tail_len = t->len;
}

static void release_stacks(void *data)
{
	sp_intern_free(data);
}

/* The stacks of proc: they go with it when it is forgotten. */
static struct sp_intern *stacks_of(struct sp_proc *proc)
{
	struct sp_intern *t = sp_proc_user(proc, SP_PROC_STACKS);

	if (!t && (t = sp_intern_new()))
		sp_proc_set_user(proc, SP_PROC_STACKS, t, release_stacks);
	return t;
}

static int emit_offcpu(void *arg, const struct sp_unw_sample *s)
{
	struct sp_unwstream *u = arg;

	return u->emit(u->arg, &s->hdr);
}

/* The waits' bookkeeping, made when the stream first needs it. */
static struct sp_offcpu *waits(struct sp_unwstream *u)
{
	if (!u->off)
		u->off = sp_offcpu_new(u->rh.ev.start_time, emit_offcpu, u);
	return u->off;
}

/*
 * Unwind a SAMPLE or OFFCPU record into v and u->frames, and intern its
 * stack (emitted when new) into *id.  0 or -errno.
 */
static int unwind_one(struct sp_unwstream *u, const struct sp_rec_hdr *rec,
		      struct sp_raw_sample_view *vp, uint32_t *idp)
{
	struct sp_raw_sample_view v;
	struct sp_stack_key k;
	struct sp_intern *stacks;
	struct sp_proc *proc;
	const char *bad;
	uint32_t id;
	int is_new, r;

	bad = sp_raw_sample_parse(&u->rh, rec, &v);
	if (bad)
		return refuse(u, bad);
	use_tail(u, &v);
	proc = sp_procs_get(u->procs, v.s->pid);
	stacks = proc ? stacks_of(proc) : NULL;
	if (!stacks || sp_unwind_sample(u->unw, proc, &v, &u->frames))
		return -ENOMEM;
	k.pid = v.s->pid;
	k.end = (uint8_t)u->frames.end;
	k.flags = u->frames.stack_flags;
	k.nr_kernel = v.s->nr_kernel;
	k.nr_user = (uint16_t)u->frames.nr_user;
	k.kernel_ips = v.kernel_ips;
	k.user_ips = u->frames.ips;
	k.uflags = u->frames.flags;
	use_pystack(u, v.s, &k);
	id = sp_intern_stack(stacks, &k, &u->last_id, &is_new);
	if (!id)
		return -ENOMEM;
	if (is_new && (r = emit_stack(u, id, &v, &k)))
		return r;
	*vp = v;
	*idp = id;
	return 0;
}

static int do_sample(struct sp_unwstream *u, const struct sp_rec_hdr *rec)
{
	struct sp_unw_sample out = { { SP_REC_SAMPLE, sizeof(out) } };
	struct sp_raw_sample_view v;
	uint32_t id;
	int r;

	if ((r = unwind_one(u, rec, &v, &id)))
		return r;
	if (u->off)
		sp_offcpu_running(u->off, v.s->tid);
	out.time = v.s->time;
	out.pid = v.s->pid;
	out.tid = v.s->tid;
	out.cpu = v.s->cpu;
	out.stack_id = id;
	out.weight = v.s->period;
	u->sum.samples++;
	u->sum.ends[u->frames.end]++;
	if (u->frames.stack_flags & SP_STACK_SPLICED)
		u->st.spliced++;
	if (u->frames.stack_flags & SP_STACK_NO_BUILDID) {
		u->st.no_buildid++;
		if (count_missing(u, v.s->pid))
			return -ENOMEM;
	}
	return u->emit(u->arg, &out.hdr);
}

/* A stack at a switch-out: its wait's weight comes with the switch-in. */
static int do_offcpu(struct sp_unwstream *u, const struct sp_rec_hdr *rec)
{
	struct sp_raw_sample_view v;
	uint32_t id;
	int r;

	if ((r = unwind_one(u, rec, &v, &id)))
		return r;
	if (!waits(u))
		return -ENOMEM;
	return sp_offcpu_sampled(u->off, v.s->pid, v.s->tid, v.s->cpu,
				 v.s->time, id);
}

/* The time of a record the process table follows, else when. */
static uint64_t follow_time(const struct sp_rec_hdr *rec, uint64_t when)
{
	switch (rec->type) {
	case SP_REC_MMAP:
		return ((const struct sp_mmap_rec *)rec)->time;
	case SP_REC_IMAGE:
		return ((const struct sp_image_rec *)rec)->time;
	case SP_REC_COMM:
		return ((const struct sp_comm_rec *)rec)->time;
	case SP_REC_FORK:
	case SP_REC_EXIT:
		return ((const struct sp_task_rec *)rec)->time;
	default:
		return when;
	}
}

int sp_unwstream_feed(struct sp_unwstream *u, const struct sp_rec_hdr *rec)
{
	const struct sp_task_rec *t = (const void *)rec;
	const char *bad;
	int r;

	if (u->have_summary)
		return refuse(u, "record after the summary");
	switch (rec->type) {
	case SP_REC_SAMPLE:
		return do_sample(u, rec);
	case SP_REC_SUMMARY:
		if (rec->size < sizeof(u->raw_sum))
			return refuse(u, "SUMMARY record too short");
		memcpy(&u->raw_sum, rec, sizeof(u->raw_sum));
		u->have_summary = 1;
		return 0;
	case SP_REC_STACK:
		return refuse(u, "STACK record in a raw stream");
	case SP_REC_PYSTACK:
		/* the recorder's: put into the next sample's STACK */
		return take_pystack(u, rec);
	case SP_REC_TAIL:
		/* the recorder's: used by the samples, not passed on */
		r = sp_tails_decode(u->tails, rec, &bad);
		return r == -EINVAL ? refuse(u, bad) : r;
	case SP_REC_OFFCPU:
		return do_offcpu(u, rec);
	case SP_REC_SWITCH:
		/* the recorder's: made into OFFCPU weights, not passed on */
		if (rec->size < sizeof(struct sp_switch_rec))
			return refuse(u, "SWITCH record too short");
		if (!waits(u))
			return -ENOMEM;
		return sp_offcpu_switch(u->off, (const void *)rec);
	case SP_REC_FORK:
		if (rec->size < sizeof(*t))
			break;
		/*
		 * a new process with the pid of one that ended: the old
		 * one's waits go before the FORK that makes readers forget
		 * its stacks
		 */
		if (u->off && !(t->flags & SP_REC_SYNTH) && t->pid != t->ppid &&
		    (r = sp_offcpu_gone(u->off, t->pid, t->time)))
			return r;
		if (!(u->rh.ev.flags & SP_EV_SWITCH))
			break;
		if (!waits(u))
			return -ENOMEM;
		/* one that /proc showed at the start, or one made since */
		r = (t->flags & SP_REC_SYNTH) ?
		    sp_offcpu_known(u->off, t->pid, t->tid) :
		    sp_offcpu_fork(u->off, t->pid, t->tid, t->time);
		if (r)
			return r;
		break;
	case SP_REC_EXIT:
		if (rec->size < sizeof(*t))
			break;
		sp_tails_forget(u->tails, t->tid);
		/* its last wait goes before its EXIT */
		if (u->off && (r = sp_offcpu_exit(u->off, t->tid, t->time)))
			return r;
		break;
	default:
		break;
	}
	if (rec->type >= SP_REC_TYPE_MAX)
		return 0;	/* a later version's record: not ours to read */
	bad = sp_rec_check_common(rec);
	if (bad)
		return refuse(u, bad);
	u->now = follow_time(rec, u->now);
	if (sp_procs_apply(u->procs, rec))
		return -ENOMEM;
	if (u->forget_err) {
		r = u->forget_err;
		u->forget_err = 0;
		return r;
	}
	return u->emit(u->arg, rec);
}

int sp_unwstream_finish(struct sp_unwstream *u)
{
	const struct sp_raw_summary *rs = &u->raw_sum;

	int r;

	if (!u->have_summary)
		return refuse(u, "truncated stream: no summary record");
	if (u->off && (r = sp_offcpu_finish(u->off, rs->end_time)))
		return r;
	u->sum.lost = rs->lost;
	u->sum.stacks = u->last_id;
	u->sum.threads = rs->threads;
	u->sum.processes = rs->processes;
	u->sum.start_time = rs->start_time;
	u->sum.end_time = rs->end_time;
	u->sum.duration_ns = rs->duration_ns;
	return u->emit(u->arg, &u->sum.hdr);
}
