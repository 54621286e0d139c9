/* SPDX-License-Identifier: MIT */
/* api.c: the public recorder: record, unwind and spool in one process. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashtab.h"
#include "base/io.h"
#include "os/procfs.h"
#include "record/record.h"
#include "stackpulse.h"
#include "symbolize/symbolize.h"
#include "unwind/unwstream.h"

struct sp_perf_recorder {
	struct sp_recorder *rec;
	struct sp_out *out;		/* hands the raw stream to on_raw() */
	struct sp_unwstream *unw;
	struct sp_spool_writer *spool;
	char *path;
	int finished;
	char err[256];
};

const char *sp_version(void)
{
	return SP_VERSION;
}

void sp_perf_recorder_options_init(struct sp_perf_recorder_options *o)
{
	memset(o, 0, sizeof(*o));
	o->frequency = SP_RECORD_DEFAULT_FREQ;
	o->stack_size = SP_RECORD_DEFAULT_STACK;
	o->kernel = SP_KERNEL_AUTO;
}

static int fail(struct sp_perf_recorder *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sp_perf_recorder *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return err;
}

static int to_spool(void *arg, const struct sp_rec_hdr *rec)
{
	struct sp_perf_recorder *r = arg;
	int e = sp_spool_writer_add(r->spool, rec);

	if (e)
		fail(r, e, "cannot write '%s': %s", r->path,
		     e == -EINVAL ? sp_spool_writer_error(r->spool) :
		     strerror(-e));
	return e;
}

/* The recorder's raw stream, one piece at a time: unwind it into the spool. */
static int on_raw(void *arg, const void *data, size_t len)
{
	struct sp_perf_recorder *r = arg;
	const struct sp_rec_hdr *rec = data;
	struct sp_unw_header uh;
	int e;

	if (!r->unw) {
		struct sp_raw_header rh;

		memset(&rh, 0, sizeof(rh));
		memcpy(&rh, data, len < sizeof(rh) ? len : sizeof(rh));
		r->unw = sp_unwstream_new(&rh, to_spool, r);
		if (!r->unw)
			return fail(r, -ENOMEM, "out of memory");
		sp_unwstream_header(r->unw, &uh);
		r->spool = sp_spool_writer_open(r->path, &uh, NULL);
		if (!r->spool)
			return fail(r, -errno, "cannot create '%s': %s",
				    r->path, strerror(errno));
		return 0;
	}
	e = sp_unwstream_feed(r->unw, rec);
	if (!e && rec->type == SP_REC_SUMMARY)
		e = sp_unwstream_finish(r->unw);
	if (e == -EINVAL && !r->err[0])
		fail(r, e, "%s", sp_unwstream_error(r->unw));
	return e;
}

int sp_perf_recorder_attach(pid_t pid, const char *spool_path,
			    enum sp_attach_mode mode,
			    const struct sp_perf_recorder_options *o,
			    struct sp_perf_recorder **rp)
{
	struct sp_perf_recorder_options defaults;
	struct sp_record_opts ro;
	struct sp_perf_recorder *r;
	int e;

	*rp = r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (!o) {
		sp_perf_recorder_options_init(&defaults);
		o = &defaults;
	}
	sp_record_opts_init(&ro);
	if (o->frequency)
		ro.frequency = o->frequency;
	if (o->stack_size)
		ro.stack_size = o->stack_size;
	if (o->event)
		ro.event = o->event;
	ro.pages = o->buffer_pages;
	ro.kernel = o->kernel == SP_KERNEL_OFF ? SP_RECORD_KERNEL_OFF :
		    o->kernel == SP_KERNEL_ON ? SP_RECORD_KERNEL_ON :
		    SP_RECORD_KERNEL_AUTO;
	switch (mode) {
	case SP_ATTACH_STOP:
		ro.attach = SP_RECORD_ATTACH_STOP;
		break;
	case SP_ATTACH_LIVE:
		ro.attach = SP_RECORD_ATTACH_LIVE;
		break;
	case SP_ATTACH_ENABLE_ON_EXEC:
		ro.attach = SP_RECORD_ATTACH_ON_EXEC;
		break;
	default:
		return fail(r, -EINVAL, "invalid attach mode %d", (int)mode);
	}
	r->path = strdup(spool_path);
	r->out = sp_out_records(on_raw, r);
	if (!r->path || !r->out)
		return fail(r, -ENOMEM, "out of memory");
	r->rec = sp_recorder_new(&ro, r->out);
	if (!r->rec)
		return fail(r, -errno, "cannot record: %s", strerror(errno));
	e = sp_recorder_attach(r->rec, &pid, 1);
	if (e && !r->err[0])
		fail(r, e, "%s", sp_recorder_error(r->rec));
	return e;
}

int sp_perf_recorder_wait(struct sp_perf_recorder *r, int timeout_ms)
{
	return sp_recorder_wait(r->rec, timeout_ms);
}

int sp_perf_recorder_consume_available(struct sp_perf_recorder *r)
{
	int e = sp_recorder_consume(r->rec);

	if (e && !r->err[0])
		fail(r, e, "%s", sp_recorder_error(r->rec));
	return e;
}

int sp_perf_recorder_process_is_active(struct sp_perf_recorder *r, pid_t pid)
{
	return sp_procfs_alive(pid) > 0;
}

int sp_perf_recorder_disable(struct sp_perf_recorder *r)
{
	return sp_recorder_disable(r->rec);
}

int sp_perf_recorder_finish(struct sp_perf_recorder *r,
			    struct sp_perf_summary *s)
{
	struct sp_record_stats st;
	int e, e2;

	if (r->finished)
		return fail(r, -EINVAL, "already finished");
	r->finished = 1;
	e = sp_recorder_finish(r->rec, &st);
	if (e && !r->err[0])
		fail(r, e, "%s", sp_recorder_error(r->rec));
	e2 = sp_spool_writer_close(r->spool);
	r->spool = NULL;
	if (e2 && !e)
		e = fail(r, e2, "cannot write '%s': %s", r->path, strerror(-e2));
	if (s) {
		const struct sp_unw_summary *u = r->unw ?
			sp_unwstream_summary(r->unw) : NULL;

		memset(s, 0, sizeof(*s));
		s->samples = st.samples;
		s->lost_events = st.lost;
		s->stacks = u ? u->stacks : 0;
		s->threads = st.threads;
		s->processes = st.processes;
		s->duration_ns = st.duration_ns;
	}
	return e;
}

const char *sp_perf_recorder_error(const struct sp_perf_recorder *r)
{
	return r->err;
}

void sp_perf_recorder_free(struct sp_perf_recorder *r)
{
	if (!r)
		return;
	sp_recorder_free(r->rec);
	sp_out_close(r->out);
	sp_spool_writer_close(r->spool);
	sp_unwstream_free(r->unw);
	free(r->path);
	free(r);
}

/* The public symbolizer --------------------------------------------------- */

struct cached_stack {
	struct sp_perf_frame *frames;
	size_t n;
};

struct sp_perf_symbolizer {
	struct sp_spool *spool;		/* our own reader of the file */
	struct sp_elf_cache *cache;
	struct sp_procs *procs;
	struct sp_symbolizer *sym;
	struct sp_u64map index;		/* pid << 32 | id -> stacks[] */
	struct cached_stack *stacks;
	size_t nstacks, cap;
	int done;			/* the reader reached the end */
	char err[256];
};

/* Resolve a STACK record and keep its frames under (pid, id). */
static int cache_stack(struct sp_perf_symbolizer *s,
		       const struct sp_unw_stack_view *v)
{
	uint64_t key = (uint64_t)v->s->pid << 32 | v->s->id;
	struct sp_u64slot *slot;
	const struct sp_frame *f;
	struct cached_stack *c;
	size_t n, i;
	int e, is_new;

	if (sp_u64map_find(&s->index, key))
		return 0;	/* defined twice: the first one stands */
	e = sp_symbolize_stack(s->sym, v, &f, &n);
	if (e)
		return e;
	if (s->nstacks == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct cached_stack *p = realloc(s->stacks, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->stacks = p;
		s->cap = cap;
	}
	c = &s->stacks[s->nstacks];
	c->frames = calloc(n ? n : 1, sizeof(*c->frames));
	slot = sp_u64map_get(&s->index, key, &is_new);
	if (!c->frames || !slot) {
		free(c->frames);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct sp_perf_frame *p = &c->frames[i];

		p->func_name = f[i].function;
		p->module = f[i].module;
		p->file = f[i].file;
		p->line = f[i].line;
		p->kind = f[i].kind;
		p->origin = f[i].origin;
		p->flags = f[i].flags;
		p->addr = f[i].addr;
	}
	c->n = n;
	slot->val = s->nstacks++;
	return 0;
}

/* Read the spool on until (pid, id) is defined or the spool ends. */
static int read_until(struct sp_perf_symbolizer *s, uint64_t key)
{
	while (!s->done && !sp_u64map_find(&s->index, key)) {
		const struct sp_rec_hdr *rec;
		struct sp_unw_stack_view v;
		struct sp_st_comm comm;
		const char *bad;
		int e = sp_spool_next(s->spool, &rec);

		if (e <= 0) {
			s->done = 1;
			if (e == 0 || e == -ENODATA)
				break;	/* a cut spool: use what it has */
			snprintf(s->err, sizeof(s->err), "%s",
				 sp_spool_error(s->spool));
			return e;
		}
		switch (rec->type) {
		case SP_REC_STACK:
			if ((bad = sp_unw_stack_parse(rec, &v))) {
				snprintf(s->err, sizeof(s->err), "%s", bad);
				return -EBADMSG;
			}
			e = cache_stack(s, &v);
			break;
		case SP_REC_KSYM: {
			const struct sp_ksym_rec *k = (const void *)rec;

			e = sp_symbolizer_add_ksym(s->sym, k->start, k->size,
						   k->name);
			break;
		}
		case SP_REC_PERFMAP: {
			const struct sp_perfmap_rec *m = (const void *)rec;

			e = sp_symbolizer_add_perf_map(s->sym, m->pid, m->text,
						       m->len,
						       m->flags & SP_PERFMAP_RESET);
			break;
		}
		case SP_REC_MMAP:
		case SP_REC_COMM:
		case SP_REC_FORK:
		case SP_REC_EXIT:
		case SP_REC_IMAGE:
			e = sp_symbolizer_apply(s->sym, rec, &comm);
			e = e < 0 ? e : 0;
			break;
		default:
			e = 0;
		}
		if (e) {
			if (!s->err[0])
				snprintf(s->err, sizeof(s->err), "%s",
					 strerror(-e));
			return e;
		}
	}
	return 0;
}

int sp_perf_symbolizer_for_spool(const char *path,
				 struct sp_perf_symbolizer **sp)
{
	struct sp_perf_symbolizer *s;
	int e;

	*sp = s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	e = sp_spool_open(path, &s->spool);
	if (e) {
		snprintf(s->err, sizeof(s->err), "%s",
			 s->spool ? sp_spool_error(s->spool) : strerror(-e));
		return e;
	}
	s->cache = sp_elf_cache_new();
	s->procs = s->cache ? sp_procs_new(s->cache) : NULL;
	s->sym = s->procs ? sp_symbolizer_new(s->procs) : NULL;
	if (!s->sym) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int sp_perf_symbolizer_for_each_frame(struct sp_perf_symbolizer *s,
				      uint32_t pid, uint32_t stack_id,
				      int (*fn)(void *arg,
						const struct sp_perf_frame *f),
				      void *arg)
{
	uint64_t key = (uint64_t)pid << 32 | stack_id;
	const struct sp_u64slot *slot;
	const struct cached_stack *c;
	size_t i;
	int e;

	if (!s->sym)
		return -EINVAL;
	e = read_until(s, key);
	if (e)
		return e;
	slot = sp_u64map_find(&s->index, key);
	if (!slot) {
		snprintf(s->err, sizeof(s->err), "no stack %u of pid %u",
			 stack_id, pid);
		return -ENOENT;
	}
	c = &s->stacks[slot->val];
	for (i = 0; i < c->n; i++)
		if ((e = fn(arg, &c->frames[i])))
			return e;
	return 0;
}

const char *sp_perf_symbolizer_error(const struct sp_perf_symbolizer *s)
{
	return s->err;
}

void sp_perf_symbolizer_free(struct sp_perf_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nstacks; i++)
		free(s->stacks[i].frames);
	free(s->stacks);
	sp_u64map_release(&s->index);
	sp_symbolizer_free(s->sym);
	sp_procs_free(s->procs);
	sp_elf_cache_free(s->cache);
	sp_spool_close(s->spool);
	free(s);
}
