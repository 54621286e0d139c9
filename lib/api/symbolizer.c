/* SPDX-License-Identifier: MIT */
/* symbolizer.c: the public symbolizer: a spool's stacks, named and kept by (pid, ID). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/grow.h"
#include "base/hashtab.h"
#include "stackpulse.h"
#include "symbolize/symstream.h"

struct cached_stack {
	struct sp_perf_frame *frames;
	size_t n;
};

struct sp_perf_symbolizer {
	struct sp_spool *spool;		/* our own reader of the file */
	struct sp_elf_cache *cache;
	struct sp_procs *procs;
	struct sp_symbolizer *sym;
	struct sp_symstream *ss;
	struct sp_u64map index;		/* pid << 32 | id -> stacks[] */
	struct cached_stack *stacks;
	size_t nstacks, cap;
	struct cached_stack *filling;	/* the stack whose frames come now */
	int done;			/* the reader reached the end */
	struct sp_err err;
};

static uint64_t key_of(uint32_t pid, uint32_t id)
{
	return (uint64_t)pid << 32 | id;
}

/*
 * The symbolized stream of the spool, as sp-symbolize would write it: keep
 * the frames of each stack the first time it is defined.
 */
static int keep(void *arg, const struct sp_st_rec *rec)
{
	struct sp_perf_symbolizer *s = arg;
	const struct sp_st_frame *fr = &rec->u.frame;
	struct sp_perf_frame *p;
	struct sp_u64slot *slot;
	struct cached_stack *c;
	int is_new;

	switch (rec->type) {
	case SP_ST_STACK:
		s->filling = NULL;
		slot = sp_u64map_get(&s->index, key_of(rec->u.stack.pid,
						       rec->u.stack.id), &is_new);
		if (!slot)
			return -ENOMEM;
		if (!is_new)
			return 0;	/* defined twice: the first one stands */
		if (SP_GROW(s->stacks, s->cap, s->nstacks + 1))
			return -ENOMEM;
		c = &s->stacks[s->nstacks];
		c->n = rec->u.stack.nframes;
		c->frames = calloc(c->n ? c->n : 1, sizeof(*c->frames));
		if (!c->frames)
			return -ENOMEM;
		slot->val = s->nstacks++;
		s->filling = c;
		return 0;
	case SP_ST_FRAME:
		if (!s->filling || fr->index >= s->filling->n)
			return 0;
		p = &s->filling->frames[fr->index];
		p->func_name = fr->f.function;
		p->module = fr->f.module;
		p->file = fr->f.file;
		p->line = fr->f.line;
		p->kind = fr->f.kind;
		p->origin = fr->f.origin;
		p->flags = fr->f.flags;
		p->addr = fr->f.addr;
		return 0;
	default:
		return 0;
	}
}

/* Read the spool on until (pid, id) is defined or the spool ends. */
static int read_until(struct sp_perf_symbolizer *s, uint64_t key)
{
	while (!s->done && !sp_u64map_find(&s->index, key)) {
		const struct sp_rec_hdr *rec;
		int e = sp_spool_next(s->spool, &rec);

		if (e <= 0) {
			s->done = 1;
			if (e == 0 || e == -ENODATA)
				break;	/* a cut spool: use what it has */
			return sp_err_set(&s->err, e, "%s",
					  sp_spool_error(s->spool));
		}
		e = sp_symstream_feed(s->ss, rec);
		if (e == -EINVAL)
			return sp_err_set(&s->err, -EBADMSG, "%s",
					  sp_symstream_error(s->ss));
		if (e)
			return sp_err_set(&s->err, e, "%s", strerror(-e));
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
	if (e)
		return sp_err_set(&s->err, e, "%s", s->spool ?
				  sp_spool_error(s->spool) : strerror(-e));
	s->cache = sp_elf_cache_new();
	s->procs = s->cache ? sp_procs_new(s->cache) : NULL;
	s->sym = s->procs ? sp_symbolizer_new(s->procs) : NULL;
	s->ss = s->sym ? sp_symstream_new(s->sym, keep, s) : NULL;
	if (!s->ss)
		return sp_err_set(&s->err, -ENOMEM, "out of memory");
	return 0;
}

int sp_perf_symbolizer_for_each_frame(struct sp_perf_symbolizer *s,
				      uint32_t pid, uint32_t stack_id,
				      int (*fn)(void *arg,
						const struct sp_perf_frame *f),
				      void *arg)
{
	uint64_t key = key_of(pid, stack_id);
	const struct sp_u64slot *slot;
	const struct cached_stack *c;
	size_t i;
	int e;

	if (!s->ss)
		return -EINVAL;
	e = read_until(s, key);
	if (e)
		return e;
	slot = sp_u64map_find(&s->index, key);
	if (!slot)
		return sp_err_set(&s->err, -ENOENT, "no stack %u of pid %u",
				  stack_id, pid);
	c = &s->stacks[slot->val];
	for (i = 0; i < c->n; i++)
		if ((e = fn(arg, &c->frames[i])))
			return e;
	return 0;
}

const char *sp_perf_symbolizer_error(const struct sp_perf_symbolizer *s)
{
	return s->err.msg;
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
	sp_symstream_free(s->ss);
	sp_symbolizer_free(s->sym);
	sp_procs_free(s->procs);
	sp_elf_cache_free(s->cache);
	sp_spool_close(s->spool);
	free(s);
}
