/* SPDX-License-Identifier: MIT */
/* fold.c: folding symbolized stacks into counted FlameGraph lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "model.h"
#include "names.h"

/* The fold */

struct sp_fold *sp_fold_new(unsigned flags)
{
	struct sp_fold *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->flags = flags;
	f->event = SP_FOLD_NONE;
	return f;
}

/* Free what f holds, not f. */
void sp_fold_release(struct sp_fold *f)
{
	size_t i;

	sp_strtab_release(&f->strs);
	sp_u64map_release(&f->comms);
	sp_u64map_release(&f->short_names);
	sp_u64map_release(&f->prefixes);
	free(f->maps);
	for (i = 0; i < f->nspace; i++)
		free(f->space[i].maps);
	free(f->space);
	sp_u64map_release(&f->spaces);
	free(f->frame_slots);
	free(f->frames);
	free(f->frame_ids);
	free(f->stacks);
	sp_u64map_release(&f->stack_ids);
	sp_u64map_release(&f->offstacks);
	sp_u64map_release(&f->counts);
	free(f->samples);
	sp_u64map_release(&f->sample_ids);
	for (i = 0; i < f->nthreads; i++)
		free(f->threads[i].runs);
	free(f->threads);
	sp_u64map_release(&f->thread_ids);
	free(f->labels);
	for (i = 0; i < f->nowned; i++)
		free(f->owned[i].ents);
	free(f->owned);
	sp_u64map_release(&f->pid_owned);
}

void sp_fold_free(struct sp_fold *f)
{
	if (!f)
		return;
	sp_fold_release(f);
	free(f);
}

uint64_t sp_fold_samples(const struct sp_fold *f)
{
	return f->nsamples_seen;
}

uint64_t sp_fold_realtime(const struct sp_fold *f, uint64_t time)
{
	if (!f->have_start || !f->start_realtime)
		return 0;
	/* a record stamped before the start line's time (synthesized) */
	if (time < f->start_time)
		return f->start_realtime - (f->start_time - time);
	return f->start_realtime + (time - f->start_time);
}

uint64_t sp_fold_end_realtime(const struct sp_fold *f)
{
	if (f->duration_ns)
		return sp_fold_realtime(f, f->start_time + f->duration_ns);
	return f->last_time ? sp_fold_realtime(f, f->last_time) : 0;
}

void sp_fold_set_range(struct sp_fold *f, uint64_t start, uint64_t end)
{
	f->range_start = start;
	f->range_end = end;
}

void sp_fold_clear_counts(struct sp_fold *f)
{
	size_t i;

	sp_u64map_release(&f->counts);
	sp_u64map_release(&f->sample_ids);
	f->nsamples = 0;
	for (i = 0; i < f->nthreads; i++)
		free(f->threads[i].runs);
	f->nthreads = 0;
	sp_u64map_release(&f->thread_ids);
	f->total = 0;
	memset(f->ends, 0, sizeof(f->ends));
	f->nsamples_seen = 0;
	f->weight_seen = 0;
	f->offcpu_seen = 0;
	f->first_time = f->last_time = 0;
	sp_fold_compact(f);
}

int sp_fold_add_label(struct sp_fold *f, const char *key, const char *value)
{
	int64_t k = sp_strtab_intern(&f->strs, key);
	int64_t v = sp_strtab_intern(&f->strs, value);

	if (k < 0 || v < 0 || SP_GROW(f->labels, f->labelcap, f->nlabels + 2))
		return -ENOMEM;
	f->labels[f->nlabels++] = (uint32_t)k;
	f->labels[f->nlabels++] = (uint32_t)v;
	return 0;
}

const char *sp_fold_error(const struct sp_fold *f)
{
	return f->err;
}

uint64_t sp_fold_total(const struct sp_fold *f)
{
	return f->total;
}

int sp_fold_time_event(const struct sp_fold *f)
{
	const char *ev = f->event == SP_FOLD_NONE ? "" : f->strs.strs[f->event];

	/* the software clocks count nanoseconds: their period is time */
	return !strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock") ||
	       !strcmp(ev, "context-switches");	/* waits only: in ns */
}

int sp_fold_fail(struct sp_fold *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->err, sizeof(f->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int64_t sp_fold_intern(struct sp_fold *f, const char *s)
{
	return s ? sp_strtab_intern(&f->strs, s) : SP_FOLD_NONE;
}

int64_t sp_fold_intern_free(struct sp_fold *f, char *s)
{
	int64_t id;

	if (!s)
		return -ENOMEM;
	id = sp_strtab_intern(&f->strs, s);
	free(s);
	return id;
}

/* Note that process pid put key (pid, id) into the table of kind. */
int sp_fold_own(struct sp_fold *f, uint32_t pid, uint32_t id, uint8_t kind)
{
	struct sp_fold_owned *o;
	struct sp_u64slot *slot;
	int is_new;

	if (SP_GROW(f->owned, f->ownedcap, f->nowned + 1))
		return -ENOMEM;
	slot = sp_u64map_get(&f->pid_owned, pid, &is_new);
	if (!slot)
		return -ENOMEM;
	if (is_new) {
		slot->val = f->nowned;
		memset(&f->owned[f->nowned++], 0, sizeof(*o));
	}
	o = &f->owned[slot->val];
	if (SP_GROW(o->ents, o->cap, o->n + 1))
		return -ENOMEM;
	o->ents[o->n++] = (struct sp_fold_own){ .id = id, .kind = kind };
	f->live_keys++;
	return 0;
}

/* The first frame of a thread's folded lines ("comm", "comm-PID", ...). */
static int64_t make_prefix(struct sp_fold *f, uint32_t pid, uint32_t tid)
{
	struct sp_u64slot *c = sp_u64map_find(&f->comms, sp_fold_key2(pid, tid));
	char *comm, *s;
	int n;

	if (!c)
		c = sp_u64map_find(&f->comms, sp_fold_key2(pid, pid));
	comm = sp_fold_comm_name(c ? f->strs.strs[c->val] : NULL);
	if (!comm)
		return -ENOMEM;
	if (f->flags & SP_FOLD_TID)
		n = asprintf(&s, "%s-%" PRIu32 "/%" PRIu32, comm, pid, tid);
	else if (f->flags & SP_FOLD_PID)
		n = asprintf(&s, "%s-%" PRIu32, comm, pid);
	else
		n = asprintf(&s, "%s", comm);
	free(comm);
	return sp_fold_intern_free(f, n < 0 ? NULL : s);
}

static int apply_event(struct sp_fold *f, const struct sp_st_event *e)
{
	int64_t id = sp_fold_intern(f, e->name);

	if (id < 0)
		return (int)id;
	f->event = (uint32_t)id;
	f->freq = e->freq;
	f->event_value = e->value;
	return 0;
}

static int apply_comm(struct sp_fold *f, const struct sp_st_comm *c)
{
	struct sp_u64slot *slot, *p;
	int64_t id = sp_fold_intern(f, c->name ? c->name : "");
	int is_new;

	if (id < 0)
		return (int)id;
	slot = sp_u64map_get(&f->comms, sp_fold_key2(c->pid, c->tid), &is_new);
	if (!slot)
		return -ENOMEM;
	slot->val = (uint64_t)id;
	if (is_new && sp_fold_own(f, c->pid, c->tid, SP_FOLD_OWN_COMM))
		return -ENOMEM;
	/* an exec replaces the address space: its mappings come anew */
	if (c->exec && c->pid == c->tid) {
		struct sp_fold_space *sp = sp_fold_space_of(f, c->pid, 0);

		if (sp)
			sp->n = 0;
	}
	/* later samples of the thread carry the new name */
	p = sp_u64map_find(&f->prefixes, sp_fold_key2(c->pid, c->tid));
	if (p) {
		id = make_prefix(f, c->pid, c->tid);
		if (id < 0)
			return (int)id;
		p = sp_u64map_find(&f->prefixes, sp_fold_key2(c->pid, c->tid));
		p->val = (uint64_t)id;
	}
	return 0;
}

/* Mappings */

struct sp_fold_space *sp_fold_space_of(struct sp_fold *f, uint32_t pid,
				       int create)
{
	struct sp_u64slot *slot;
	int is_new;

	if (!create) {
		slot = sp_u64map_find(&f->spaces, pid);
		return slot ? &f->space[slot->val] : NULL;
	}
	if (SP_GROW(f->space, f->spacecap, f->nspace + 1))
		return NULL;
	slot = sp_u64map_get(&f->spaces, pid, &is_new);
	if (!slot)
		return NULL;
	if (is_new) {
		slot->val = f->nspace;
		memset(&f->space[f->nspace++], 0, sizeof(*f->space));
	}
	return &f->space[slot->val];
}

/* Index in sp->maps of the first mapping that ends after addr. */
static size_t space_search(const struct sp_fold *f,
			   const struct sp_fold_space *sp, uint64_t addr)
{
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->maps[sp->maps[mid]].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Append a mapping; its index, or -ENOMEM. */
int64_t sp_fold_add_map(struct sp_fold *f, const struct sp_fold_map *m)
{
	if (SP_GROW(f->maps, f->mapcap, f->nmaps + 1))
		return -ENOMEM;
	f->maps[f->nmaps] = *m;
	return (int64_t)f->nmaps++;
}

/*
 * A new mapping replaces what it overlaps, as mmap(2) does.  A neighbour it
 * covers in part stays as a trimmed copy, so that the frames already named
 * by the neighbour keep the whole of it.
 */
static int apply_map(struct sp_fold *f, const struct sp_st_map *m)
{
	struct sp_fold_map nm, left, right;
	struct sp_fold_space *sp;
	int64_t path, bid, ids[3];
	size_t lo, hi, k = 0, i;

	if (m->end <= m->start)
		return sp_fold_fail(f, "mapping 0x%" PRIx64 "-0x%" PRIx64 " is empty",
			    m->start, m->end);
	path = sp_fold_intern(f, m->path ? m->path : "");
	bid = sp_fold_intern(f, m->build_id);
	sp = sp_fold_space_of(f, m->pid, 1);
	if (path < 0 || bid < 0 || !sp || SP_GROW(sp->maps, sp->cap, sp->n + 3))
		return -ENOMEM;
	nm = (struct sp_fold_map){ .pid = m->pid, .start = m->start,
		.end = m->end, .pgoff = m->pgoff, .build_id = (uint32_t)bid,
		.path = (uint32_t)path };
	lo = space_search(f, sp, m->start);
	for (hi = lo; hi < sp->n && f->maps[sp->maps[hi]].start < m->end; hi++)
		;
	if (lo < hi && f->maps[sp->maps[lo]].start < m->start) {
		left = f->maps[sp->maps[lo]];
		left.end = m->start;
		if ((ids[k++] = sp_fold_add_map(f, &left)) < 0)
			return -ENOMEM;
	}
	if ((ids[k++] = sp_fold_add_map(f, &nm)) < 0)
		return -ENOMEM;
	if (lo < hi && f->maps[sp->maps[hi - 1]].end > m->end) {
		right = f->maps[sp->maps[hi - 1]];
		right.pgoff += m->end - right.start;
		right.start = m->end;
		if ((ids[k++] = sp_fold_add_map(f, &right)) < 0)
			return -ENOMEM;
	}
	memmove(&sp->maps[lo + k], &sp->maps[hi],
		(sp->n - hi) * sizeof(*sp->maps));
	sp->n = sp->n - (hi - lo) + k;
	for (i = 0; i < k; i++)
		sp->maps[lo + i] = (uint32_t)ids[i];
	return 0;
}

/* The mapping of pid that holds addr, or SP_FOLD_NONE. */
static uint32_t map_of(struct sp_fold *f, uint32_t pid, uint64_t addr)
{
	const struct sp_fold_space *sp = sp_fold_space_of(f, pid, 0);
	size_t i;

	if (!sp)
		return SP_FOLD_NONE;
	i = space_search(f, sp, addr);
	if (i < sp->n && f->maps[sp->maps[i]].start <= addr)
		return sp->maps[i];
	return SP_FOLD_NONE;
}

/* Frames and stacks */

/* All frames are in: join their folded names root first and intern them. */
static int finish_stack(struct sp_fold *f)
{
	uint32_t n = (uint32_t)(f->nframe_ids - f->pend_off), i;
	/* no frame kept yet at all: frame_ids is NULL, not to be offset */
	const uint32_t *ids = n ? f->frame_ids + f->pend_off : NULL;
	struct sp_fold_stack *st;
	struct sp_u64slot *slot;
	size_t len = 0, at = 0;
	int64_t id;
	int is_new;
	char *s;

	for (i = 0; i < n; i++)
		len += strlen(f->strs.strs[f->frames[ids[i]].folded]) + 1;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	for (i = n; i--; ) {
		const char *name = f->strs.strs[f->frames[ids[i]].folded];
		size_t k = strlen(name);

		if (at)
			s[at++] = ';';
		memcpy(s + at, name, k);
		at += k;
	}
	s[at] = 0;
	id = sp_fold_intern_free(f, s);
	if (id < 0 || SP_GROW(f->stacks, f->stackcap, f->nstacks + 1))
		return -ENOMEM;
	/* a redefinition (the pid was reused) replaces the old stack */
	slot = sp_u64map_get(&f->stack_ids, sp_fold_key2(f->pend_pid, f->pend_id),
			     &is_new);
	if (!slot)
		return -ENOMEM;
	slot->val = f->nstacks;
	if (is_new && sp_fold_own(f, f->pend_pid, f->pend_id, SP_FOLD_OWN_STACK))
		return -ENOMEM;
	st = &f->stacks[f->nstacks++];
	*st = (struct sp_fold_stack){ .pid = f->pend_pid,
		.folded = (uint32_t)id, .off = f->pend_off, .n = n,
		.end = f->pend_end, .base = SP_FOLD_NONE };
	f->pending = 0;
	return 0;
}

static int apply_stack(struct sp_fold *f, const struct sp_st_stack *st)
{
	unsigned i;

	if (st->nframes > (1u << 20))
		return sp_fold_fail(f, "stack %" PRIu32 "/%" PRIu32 " has too many frames (%" PRIu32 ")",
			    st->pid, st->id, st->nframes);
	if (f->nframe_ids > UINT32_MAX - (1u << 20))
		return -ENOMEM;
	f->pending = 1;
	f->pend_pid = st->pid;
	f->pend_id = st->id;
	f->pend_n = st->nframes;
	f->pend_got = 0;
	f->pend_off = (uint32_t)f->nframe_ids;
	f->pend_end = SP_END_MAX;
	for (i = 0; i < SP_END_MAX; i++)
		if (st->end && !strcmp(st->end, sp_unw_end_name(i)))
			f->pend_end = (uint8_t)i;
	/* the name of stackpulse 0.1 for an end it could not prove */
	if (st->end && !strcmp(st->end, "root"))
		f->pend_end = SP_END_MAX;
	if (!st->nframes)
		return finish_stack(f);
	return 0;
}

static uint32_t frame_hash(const struct sp_fold_frame *fr)
{
	uint64_t h;

	h = sp_hash_u64(fr->addr ^ ((uint64_t)fr->pid << 40) ^ fr->kind);
	h = sp_hash_u64(h ^ fr->name ^ (uint64_t)fr->file << 32);
	h = sp_hash_u64(h ^ fr->module ^ (uint64_t)fr->line << 32);
	h = sp_hash_u64(h ^ fr->symbol ^ (uint64_t)fr->decl_line << 32);
	return (uint32_t)h;
}

static int same_frame(const struct sp_fold_frame *a,
		      const struct sp_fold_frame *b)
{
	return a->addr == b->addr && a->pid == b->pid && a->kind == b->kind &&
	       a->name == b->name && a->file == b->file &&
	       a->module == b->module && a->line == b->line &&
	       a->symbol == b->symbol && a->decl_line == b->decl_line;
}

static int frame_slots_grow(struct sp_fold *f)
{
	uint32_t n = f->nframe_slots ? f->nframe_slots * 2 : 1024, j;
	uint32_t *slots;
	size_t i;

	if (!n)
		return -ENOMEM;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < f->nframes; i++) {
		j = frame_hash(&f->frames[i]) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(f->frame_slots);
	f->frame_slots = slots;
	f->nframe_slots = n;
	return 0;
}

int64_t sp_fold_frame_add(struct sp_fold *f, const struct sp_fold_frame *fr,
			  int *is_new)
{
	uint32_t j;

	*is_new = 0;
	if (f->nframes >= UINT32_MAX / 2)
		return -ENOMEM;
	if ((f->nframes + 1) * 2 > f->nframe_slots && frame_slots_grow(f))
		return -ENOMEM;
	j = frame_hash(fr) & (f->nframe_slots - 1);
	while (f->frame_slots[j]) {
		if (same_frame(&f->frames[f->frame_slots[j] - 1], fr))
			return f->frame_slots[j] - 1;
		j = (j + 1) & (f->nframe_slots - 1);
	}
	if (SP_GROW(f->frames, f->framecap, f->nframes + 1))
		return -ENOMEM;
	f->frames[f->nframes] = *fr;
	f->frame_slots[j] = (uint32_t)f->nframes + 1;
	*is_new = 1;
	return (int64_t)f->nframes++;
}

/* The index of the frame fr describes, added on first sight. */
static int64_t frame_id(struct sp_fold *f, const struct sp_st_frame *fr)
{
	const struct sp_frame *sf = &fr->f;
	uint32_t pid = sf->kind == SP_FK_KERNEL ? 0 : fr->pid;
	int64_t full, name, file, module, symbol, folded, id;
	struct sp_u64slot *slot;
	char *shortname;
	int is_new;

	full = sp_fold_intern(f, sf->function ? sf->function : "");
	file = sp_fold_intern(f, sf->file);
	module = sp_fold_intern(f, sf->module);
	symbol = sp_fold_intern(f, sf->symbol);
	if (full < 0 || file < 0 || module < 0 || symbol < 0)
		return -ENOMEM;
	name = full;
	if ((f->flags & SP_FOLD_SHORT) && sf->function) {
		/* each name is shortened once */
		slot = sp_u64map_get(&f->short_names, (uint64_t)full, &is_new);
		if (!slot)
			return -ENOMEM;
		if (is_new) {
			shortname = sp_name_short(sf->function);
			name = shortname ? sp_fold_intern(f, shortname) : -ENOMEM;
			free(shortname);
			if (name < 0) {
				sp_u64map_del(&f->short_names, (uint64_t)full);
				return -ENOMEM;
			}
			slot->val = (uint64_t)name;
		}
		name = (int64_t)slot->val;
	}
	id = sp_fold_frame_add(f, &(struct sp_fold_frame){ .addr = sf->addr,
		.pid = pid, .name = (uint32_t)name, .full = (uint32_t)full,
		.file = (uint32_t)file, .module = (uint32_t)module,
		.line = sf->line, .symbol = (uint32_t)symbol,
		.decl_line = sf->decl_line, .kind = sf->kind,
		.origin = sf->origin, .map = SP_FOLD_NONE }, &is_new);
	if (id < 0 || !is_new)
		return id;
	folded = sp_fold_intern_free(f, sp_fold_name(f->strs.strs[name], sf->kind,
					     sf->origin));
	if (folded < 0)
		return -ENOMEM;
	f->frames[id].folded = (uint32_t)folded;
	if (sf->kind != SP_FK_KERNEL)
		f->frames[id].map = map_of(f, fr->pid, sf->addr);
	return id;
}

static int apply_frame(struct sp_fold *f, const struct sp_st_frame *fr)
{
	int64_t id;

	if (!f->pending)
		return sp_fold_fail(f, "frame line without its stack line");
	if (fr->pid != f->pend_pid || fr->id != f->pend_id ||
	    fr->index != f->pend_got)
		return sp_fold_fail(f, "frame %" PRIu32 "/%" PRIu32 " #%" PRIu32 " out of order: expected %" PRIu32 "/%" PRIu32 " #%" PRIu32,
			    fr->pid, fr->id, fr->index, f->pend_pid,
			    f->pend_id, f->pend_got);
	f->pend_got++;
	if (!(fr->f.flags & SP_SYMF_HIDDEN) || (f->flags & SP_FOLD_HIDDEN)) {
		id = frame_id(f, fr);
		if (id < 0)
			return (int)id;
		if (SP_GROW(f->frame_ids, f->frame_idcap, f->nframe_ids + 1))
			return -ENOMEM;
		f->frame_ids[f->nframe_ids++] = (uint32_t)id;
	}
	if (f->pend_got == f->pend_n)
		return finish_stack(f);
	return 0;
}

/* Samples */

static int count_pprof(struct sp_fold *f, const struct sp_st_sample *sa,
		       uint32_t stack, uint32_t comm, uint32_t prefix)
{
	struct sp_u64slot *slot;
	struct sp_fold_sample *e;
	uint32_t i, prev;
	int is_new;

	slot = sp_u64map_get(&f->sample_ids, sp_fold_key2(sa->tid, stack), &is_new);
	if (!slot)
		return -ENOMEM;
	if (is_new)
		slot->val = SP_FOLD_NONE;
	/* one entry per name the thread had: an exec renames it */
	prev = SP_FOLD_NONE;
	for (i = (uint32_t)slot->val; i != SP_FOLD_NONE; i = e->next) {
		e = &f->samples[i];
		if (e->comm == comm && e->pid == sa->pid)
			goto count;
		prev = i;
	}
	/* by index, not pointer: the grow below may move f->samples */
	if (SP_GROW(f->samples, f->samplecap, f->nsamples + 1))
		return -ENOMEM;
	i = (uint32_t)f->nsamples++;
	if (prev != SP_FOLD_NONE)
		f->samples[prev].next = i;
	else
		sp_u64map_find(&f->sample_ids, sp_fold_key2(sa->tid, stack))->val = i;
	f->samples[i] = (struct sp_fold_sample){ .pid = sa->pid,
		.tid = sa->tid, .comm = comm, .prefix = prefix,
		.stack = stack, .next = SP_FOLD_NONE };
count:
	e = &f->samples[i];
	e->count++;
	e->weight += sa->weight;
	return 0;
}

/* Whether stacks a and b have the same frames (hidden ones left out). */
static int same_frames(const struct sp_fold *f, uint32_t a, uint32_t b)
{
	const struct sp_fold_stack *x = &f->stacks[a], *y = &f->stacks[b];

	/* no frames: frame_ids may still be NULL, which memcmp may not get */
	return a == b || (x->n == y->n &&
			  (!x->n || !memcmp(f->frame_ids + x->off,
					    f->frame_ids + y->off,
					    x->n * sizeof(*f->frame_ids))));
}

static int count_timeline(struct sp_fold *f, const struct sp_st_sample *sa,
			  uint32_t stack, uint32_t comm)
{
	struct sp_fold_thread *t;
	struct sp_u64slot *slot;
	struct sp_fold_run *run;
	int is_new;

	if (SP_GROW(f->threads, f->threadcap, f->nthreads + 1))
		return -ENOMEM;
	slot = sp_u64map_get(&f->thread_ids, sp_fold_key2(sa->pid, sa->tid), &is_new);
	if (!slot)
		return -ENOMEM;
	if (is_new) {
		slot->val = f->nthreads;
		f->threads[f->nthreads++] = (struct sp_fold_thread){
			.pid = sa->pid, .tid = sa->tid, .comm = SP_FOLD_NONE,
			.first = sa->time };
	}
	t = &f->threads[slot->val];
	/*
	 * the name it ends with: a new thread is often sampled before it
	 * names itself, and an exec renames it for the rest of its life
	 */
	if (comm != SP_FOLD_NONE)
		t->comm = comm;
	t->last = sa->time;
	t->count++;
	t->weight += sa->weight;
	run = t->nruns ? &t->runs[t->nruns - 1] : NULL;
	if (!run || !same_frames(f, run->stack, stack)) {
		if (SP_GROW(t->runs, t->cap, t->nruns + 1))
			return -ENOMEM;
		run = &t->runs[t->nruns++];
		*run = (struct sp_fold_run){ .stack = stack };
	}
	run->count++;
	run->weight += sa->weight;
	return 0;
}

static int apply_sample(struct sp_fold *f, const struct sp_st_sample *sa,
			int off)
{
	struct sp_u64slot *st, *pre, *cnt, *c;
	uint32_t stack, prefix, comm = SP_FOLD_NONE;
	uint64_t n = (f->flags & SP_FOLD_WEIGHT) ? sa->weight : 1;
	int64_t id;
	int r;

	if (off) {
		if ((id = sp_fold_off_stack(f, sa->pid, sa->id)) < 0)
			return (int)id;
		stack = (uint32_t)id;
		f->offcpu_seen++;
	} else {
		st = sp_u64map_find(&f->stack_ids, sp_fold_key2(sa->pid, sa->id));
		if (!st)
			return sp_fold_fail(f, "sample of undefined stack %" PRIu32 "/%" PRIu32,
				    sa->pid, sa->id);
		stack = (uint32_t)st->val;
	}
	pre = sp_u64map_find(&f->prefixes, sp_fold_key2(sa->pid, sa->tid));
	if (!pre) {
		id = make_prefix(f, sa->pid, sa->tid);
		if (id < 0)
			return (int)id;
		pre = sp_u64map_get(&f->prefixes, sp_fold_key2(sa->pid, sa->tid), NULL);
		if (!pre)
			return -ENOMEM;
		pre->val = (uint64_t)id;
		if (sp_fold_own(f, sa->pid, sa->tid, SP_FOLD_OWN_PREFIX))
			return -ENOMEM;
		pre = sp_u64map_find(&f->prefixes, sp_fold_key2(sa->pid, sa->tid));
	}
	prefix = (uint32_t)pre->val;
	cnt = sp_u64map_get(&f->counts, sp_fold_key2(prefix,
					     f->stacks[stack].folded), NULL);
	if (!cnt)
		return -ENOMEM;
	cnt->val += n;
	f->total += n;
	f->ends[f->stacks[stack].end] += n;
	f->nsamples_seen++;
	f->weight_seen += sa->weight;
	if (!f->first_time || sa->time < f->first_time)
		f->first_time = sa->time;
	if (sa->time > f->last_time)
		f->last_time = sa->time;
	if (f->flags & (SP_FOLD_SAMPLES | SP_FOLD_TIMELINE)) {
		c = sp_u64map_find(&f->comms, sp_fold_key2(sa->pid, sa->tid));
		if (!c)
			c = sp_u64map_find(&f->comms, sp_fold_key2(sa->pid, sa->pid));
		comm = c ? (uint32_t)c->val : SP_FOLD_NONE;
	}
	if ((f->flags & SP_FOLD_SAMPLES) &&
	    (r = count_pprof(f, sa, stack, comm, prefix)))
		return r;
	if ((f->flags & SP_FOLD_TIMELINE) &&
	    (r = count_timeline(f, sa, stack, comm)))
		return r;
	return 0;
}

int sp_fold_apply(struct sp_fold *f, const struct sp_st_rec *rec)
{
	if (f->pending && rec->type != SP_ST_FRAME &&
	    rec->type != SP_ST_UNKNOWN)
		return sp_fold_fail(f, "stack %" PRIu32 "/%" PRIu32 " ends after %" PRIu32 " of its %" PRIu32 " frames",
			    f->pend_pid, f->pend_id, f->pend_got, f->pend_n);
	switch (rec->type) {
	case SP_ST_EVENT:
		return apply_event(f, &rec->u.event);
	case SP_ST_START:
		f->have_start = 1;
		f->start_time = rec->u.start.time;
		f->start_realtime = rec->u.start.realtime;
		return 0;
	case SP_ST_MAP:
		return apply_map(f, &rec->u.map);
	case SP_ST_COMM:
		return apply_comm(f, &rec->u.comm);
	case SP_ST_STACK:
		return apply_stack(f, &rec->u.stack);
	case SP_ST_FRAME:
		return apply_frame(f, &rec->u.frame);
	case SP_ST_SAMPLE:
		return apply_sample(f, &rec->u.sample, 0);
	case SP_ST_OFFCPU:
		return apply_sample(f, &rec->u.sample, 1);
	case SP_ST_SUMMARY:
		f->duration_ns = rec->u.summary.duration_ns;
		return 0;
	case SP_ST_GONE:
		sp_fold_gone(f, &rec->u.gone);
		return 0;
	default:
		return 0;
	}
}

/* Output */

struct line {
	char *s;
	uint64_t count;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->s, y->s);
}

static void lines_free(struct line *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(l[i].s);
	free(l);
}

/* The counted stacks as "prefix;folded" strings, sorted. */
static int collect(struct sp_fold *f, struct line **out, size_t *nout)
{
	struct line *l = calloc(f->counts.n ? f->counts.n : 1, sizeof(*l));
	size_t n = 0;
	uint32_t i;

	if (!l)
		return -ENOMEM;
	for (i = 0; i < f->counts.nslots; i++) {
		const struct sp_u64slot *c = &f->counts.slots[i];
		const char *pre, *st;

		if (!c->used)
			continue;
		pre = f->strs.strs[c->key >> 32];
		st = f->strs.strs[(uint32_t)c->key];
		if (asprintf(&l[n].s, "%s%s%s", pre, *st ? ";" : "", st) < 0) {
			lines_free(l, n);
			return -ENOMEM;
		}
		l[n++].count = c->val;
	}
	qsort(l, n, sizeof(*l), line_cmp);
	*out = l;
	*nout = n;
	return 0;
}

int sp_fold_write(struct sp_fold *f, struct sp_out *out)
{
	struct line *l;
	size_t n, i;
	int r;

	r = collect(f, &l, &n);
	if (r)
		return r;
	for (i = 0; !r && i < n; i++)
		r = sp_out_printf(out, "%s %" PRIu64 "\n", l[i].s, l[i].count);
	lines_free(l, n);
	return r;
}
