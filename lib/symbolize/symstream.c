/* SPDX-License-Identifier: MIT */
/* symstream.c: unwound records in, symbolized records out. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/python.h"
#include "symstream.h"

struct sp_symstream {
	struct sp_symbolizer *sym;
	sp_symstream_emit_fn *emit;
	void *arg;
	uint64_t ends[SP_END_MAX];	/* samples by how their stack ended */
	uint64_t spliced;
	uint64_t no_build_id;	/* samples of SP_STACK_NO_BUILDID stacks */
	int unproven;		/* a version 1 stream: end 0 proves nothing */
	int have_summary;
	uint64_t time;		/* of the record being applied */
	int gone_err;		/* the first error of a gone line */
	char error[96];
};

/* The symbolizer forgot pid (or its thread tid): the readers may too. */
static void gone(void *arg, uint32_t pid, uint32_t tid)
{
	struct sp_symstream *ss = arg;
	struct sp_st_rec rec;
	int r;

	if (ss->gone_err)
		return;
	rec.type = SP_ST_GONE;
	rec.u.gone = (struct sp_st_gone){ .time = ss->time, .pid = pid,
		.tid = tid, .has_tid = tid != 0 };
	if ((r = ss->emit(ss->arg, &rec)))
		ss->gone_err = r;
}

/*
 * Apply h (MMAP, COMM, FORK, EXIT, IMAGE: each has its time first) to the
 * symbolizer, writing a gone line for each process it forgets.
 */
static int apply(struct sp_symstream *ss, const struct sp_rec_hdr *h,
		 struct sp_st_comm *comm)
{
	int r;

	ss->time = ((const struct sp_task_rec *)h)->time;
	r = sp_symbolizer_apply(ss->sym, h, comm);
	if (ss->gone_err)
		return ss->gone_err;
	return r;
}

struct sp_symstream *sp_symstream_new(struct sp_symbolizer *sym,
				      sp_symstream_emit_fn *emit, void *arg)
{
	struct sp_symstream *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->sym = sym;
	ss->emit = emit;
	ss->arg = arg;
	sp_symbolizer_on_gone(sym, gone, ss);
	return ss;
}

void sp_symstream_free(struct sp_symstream *ss)
{
	if (!ss)
		return;
	sp_symbolizer_on_gone(ss->sym, NULL, NULL);
	free(ss);
}

const char *sp_symstream_error(const struct sp_symstream *ss)
{
	return ss->error;
}

static int refuse(struct sp_symstream *ss, const char *why)
{
	snprintf(ss->error, sizeof(ss->error), "%s", why);
	return -EINVAL;
}

int sp_symstream_header(struct sp_symstream *ss, const struct sp_unw_header *h)
{
	char name[sizeof(h->ev.name) + 1];
	struct sp_st_rec rec;
	int r;

	ss->unproven = h->h.version < 2;
	memcpy(name, h->ev.name, sizeof(h->ev.name));
	name[sizeof(h->ev.name)] = 0;
	rec.type = SP_ST_EVENT;
	rec.u.event = (struct sp_st_event){ .name = name,
		.freq = !!(h->ev.flags & SP_EV_FREQ),
		.value = h->ev.freq_or_period };
	r = ss->emit(ss->arg, &rec);
	if (r)
		return r;
	rec.type = SP_ST_START;
	rec.u.start = (struct sp_st_start){ .time = h->ev.start_time,
		.realtime = h->start_realtime };
	return ss->emit(ss->arg, &rec);
}

static int emit_stack(struct sp_symstream *ss, const struct sp_unw_stack_view *v)
{
	const struct sp_frame *frames;
	char flags[SP_STACK_FLAGS_TEXT];
	const char *end = sp_unw_end_name(v->s->end);
	struct sp_st_rec rec;
	size_t n, i;
	int r;

	r = sp_symbolize_stack(ss->sym, v, &frames, &n);
	if (r)
		return r;
	rec.type = SP_ST_STACK;
	/* stackpulse 0.1's name for a stop it could not vouch for */
	if (ss->unproven && v->s->end == SP_END_COMPLETE)
		end = "root";
	rec.u.stack = (struct sp_st_stack){ .pid = v->s->pid, .id = v->s->id,
		.nframes = (uint32_t)n, .end = end,
		.flags = sp_unw_flags_text(v->s->flags, flags) };
	r = ss->emit(ss->arg, &rec);
	rec.type = SP_ST_FRAME;
	for (i = 0; !r && i < n; i++) {
		rec.u.frame = (struct sp_st_frame){ .pid = v->s->pid,
			.id = v->s->id, .index = (uint32_t)i, .f = frames[i] };
		r = ss->emit(ss->arg, &rec);
	}
	return r;
}

/* A map line of pid for mapping m, at time. */
static int emit_map(struct sp_symstream *ss, uint32_t pid, uint64_t time,
		    const struct sp_map *m)
{
	char bid[2 * sizeof(m->build_id) + 1];
	struct sp_st_rec rec;
	unsigned i, n = m->build_id_size;

	if (n > sizeof(m->build_id))
		n = sizeof(m->build_id);
	for (i = 0; i < n; i++)
		snprintf(bid + 2 * i, 3, "%02x", m->build_id[i]);
	bid[2 * n] = 0;
	rec.type = SP_ST_MAP;
	rec.u.map = (struct sp_st_map){ .time = time, .pid = pid,
		.start = m->start, .end = m->end, .pgoff = m->pgoff,
		.build_id = n ? bid : NULL, .path = m->name };
	return ss->emit(ss->arg, &rec);
}

/*
 * The map lines a record makes, for writers that describe mappings
 * (pprof): an executable MMAP's mapping; for the FORK of a new process,
 * every mapping it inherits, since its frames are in them.
 */
static int emit_maps(struct sp_symstream *ss, const struct sp_rec_hdr *h)
{
	const struct sp_procs *procs = sp_symbolizer_procs(ss->sym);
	const struct sp_mmap_rec *mm = (const void *)h;
	const struct sp_task_rec *t = (const void *)h;
	const struct sp_proc *proc;
	const struct sp_map *m;
	size_t i, n;
	int r;

	if (h->type == SP_REC_MMAP) {
		if (!(mm->prot & PROT_EXEC) || !mm->len)
			return 0;
		proc = sp_procs_find(procs, mm->pid);
		m = proc ? sp_proc_map(proc, mm->start) : NULL;
		return m ? emit_map(ss, mm->pid, mm->time, m) : 0;
	}
	/* a thread shares its process's; a synthesized one has its own */
	if (h->type != SP_REC_FORK || t->pid == t->ppid ||
	    (t->flags & SP_REC_SYNTH))
		return 0;
	proc = sp_procs_find(procs, t->pid);
	m = proc ? sp_proc_maps(proc, &n) : NULL;
	for (i = 0; m && i < n; i++)
		if ((r = emit_map(ss, t->pid, t->time, &m[i])))
			return r;
	return 0;
}

int sp_symstream_feed(struct sp_symstream *ss, const struct sp_rec_hdr *h)
{
	const struct sp_unw_sample *sa = (const void *)h;
	const struct sp_unw_summary *su = (const void *)h;
	const struct sp_lost_rec *lo = (const void *)h;
	const struct sp_ksym_rec *k = (const void *)h;
	const struct sp_perfmap_rec *pm = (const void *)h;
	struct sp_symbolize_stats st;
	struct sp_unw_stack_view v;
	struct sp_st_rec rec;
	const char *bad;
	char what[96];
	unsigned flags;
	int r, end;

	if (ss->have_summary)
		return refuse(ss, "record after the SUMMARY record");
	switch (h->type) {
	case SP_REC_MMAP:
		if ((bad = sp_rec_check_common(h)))
			return refuse(ss, bad);
		r = apply(ss, h, &rec.u.comm);
		if (r < 0)
			return r;
		return emit_maps(ss, h);
	case SP_REC_COMM:
	case SP_REC_FORK:
	case SP_REC_EXIT:
	case SP_REC_IMAGE:
		if ((bad = sp_rec_check_common(h)))
			return refuse(ss, bad);
		r = apply(ss, h, &rec.u.comm);
		if (r < 0)
			return r;
		if (r > 0) {
			rec.type = SP_ST_COMM;
			if ((r = ss->emit(ss->arg, &rec)))
				return r;
		}
		return emit_maps(ss, h);
	case SP_REC_LOST:
		if ((bad = sp_rec_check_common(h)))
			return refuse(ss, bad);
		rec.type = SP_ST_LOST;
		rec.u.lost = (struct sp_st_lost){ .time = lo->time,
			.count = lo->lost };
		return ss->emit(ss->arg, &rec);
	case SP_REC_THROTTLE:
		return (bad = sp_rec_check_common(h)) ? refuse(ss, bad) : 0;
	case SP_REC_KSYM:
		if ((bad = sp_rec_check_common(h)))
			return refuse(ss, bad);
		return sp_symbolizer_add_ksym(ss->sym, k->start, k->size, k->name);
	case SP_REC_PERFMAP:
		if ((bad = sp_rec_check_common(h)))
			return refuse(ss, bad);
		/* it makes its process known, as to every reader */
		if (sp_procs_apply(sp_symbolizer_procs(ss->sym), h))
			return -ENOMEM;
		return sp_symbolizer_add_perf_map(ss->sym, pm->pid, pm->time,
						  pm->text, pm->len,
						  pm->flags & SP_PERFMAP_RESET);
	case SP_REC_PYCODE: {
		struct sp_pycode_view pv;

		if ((bad = sp_pycode_parse(h, &pv)))
			return refuse(ss, bad);
		if (sp_procs_apply(sp_symbolizer_procs(ss->sym), h))
			return -ENOMEM;
		return sp_symbolizer_add_pycode(ss->sym, &pv);
	}
	case SP_REC_STACK:
		if ((bad = sp_unw_stack_parse(h, &v)))
			return refuse(ss, bad);
		return emit_stack(ss, &v);
	case SP_REC_SAMPLE:
		if (h->size < sizeof(*sa))
			return refuse(ss, "SAMPLE record too short");
		end = sp_symbolizer_stack_end(ss->sym, sa->pid, sa->stack_id,
					      &flags);
		if (end < 0) {
			snprintf(what, sizeof(what),
				 "SAMPLE of undefined stack %" PRIu32 "/%" PRIu32,
				 sa->pid, sa->stack_id);
			return refuse(ss, what);
		}
		if (!ss->unproven || end != SP_END_COMPLETE)
			ss->ends[end]++;
		if (flags & SP_STACK_SPLICED)
			ss->spliced++;
		if (flags & SP_STACK_NO_BUILDID)
			ss->no_build_id++;
		/* against the files its frames are missing from */
		sp_symbolizer_sample(ss->sym, sa->pid, sa->stack_id);
		rec.type = SP_ST_SAMPLE;
		rec.u.sample = (struct sp_st_sample){ .time = sa->time,
			.pid = sa->pid, .tid = sa->tid, .cpu = sa->cpu,
			.id = sa->stack_id, .weight = sa->weight };
		return ss->emit(ss->arg, &rec);
	case SP_REC_OFFCPU:
		if (h->size < sizeof(*sa))
			return refuse(ss, "OFFCPU record too short");
		/* stack 0: a wait whose stack nobody sampled */
		if (sa->stack_id &&
		    sp_symbolizer_stack_end(ss->sym, sa->pid, sa->stack_id,
					    &flags) < 0) {
			snprintf(what, sizeof(what),
				 "OFFCPU of undefined stack %" PRIu32 "/%" PRIu32,
				 sa->pid, sa->stack_id);
			return refuse(ss, what);
		}
		if (sa->stack_id)
			sp_symbolizer_sample(ss->sym, sa->pid, sa->stack_id);
		rec.type = SP_ST_OFFCPU;
		rec.u.sample = (struct sp_st_sample){ .time = sa->time,
			.pid = sa->pid, .tid = sa->tid, .cpu = sa->cpu,
			.id = sa->stack_id, .weight = sa->weight };
		return ss->emit(ss->arg, &rec);
	case SP_REC_SUMMARY:
		if (h->size < sizeof(*su))
			return refuse(ss, "SUMMARY record too short");
		ss->have_summary = 1;
		sp_symbolizer_stats(ss->sym, &st);
		rec.type = SP_ST_SUMMARY;
		rec.u.summary = (struct sp_st_summary){ .samples = su->samples,
			.lost = su->lost, .stacks = su->stacks,
			.threads = su->threads, .processes = su->processes,
			.duration_ns = su->duration_ns, .frames = st.frames,
			.unresolved = st.unresolved,
			.complete = ss->ends[SP_END_COMPLETE],
			.truncated = ss->ends[SP_END_TRUNCATED],
			.noinfo = ss->ends[SP_END_NOINFO],
			.error = ss->ends[SP_END_ERROR],
			.depth = ss->ends[SP_END_DEPTH],
			.noregs = ss->ends[SP_END_NOREGS],
			.spliced = ss->spliced,
			.no_build_id = ss->no_build_id };
		return ss->emit(ss->arg, &rec);
	default:
		/* a record of a later version: skip it */
		return 0;
	}
}

int sp_symstream_finish(struct sp_symstream *ss)
{
	return ss->have_summary ? 0 :
	       refuse(ss, "truncated stream: no SUMMARY record");
}
