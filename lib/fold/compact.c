/* SPDX-License-Identifier: MIT */
/*
 * compact.c: letting go of what processes and threads that ended left in a
 * fold (the stream's gone lines), and compaction: copying what is still
 * reachable into a new model once what was let go weighs as much.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "model.h"

static struct sp_u64map *owned_table(struct sp_fold *f, uint8_t kind)
{
	switch (kind) {
	case SP_FOLD_OWN_COMM:
		return &f->comms;
	case SP_FOLD_OWN_PREFIX:
		return &f->prefixes;
	case SP_FOLD_OWN_OFFSTACK:
		return &f->offstacks;
	default:
		return &f->stack_ids;
	}
}

/* Take key out of table if there: a key a live process held, let go. */
static void let_go(struct sp_fold *f, struct sp_u64map *table, uint64_t key)
{
	if (!sp_u64map_find(table, key))
		return;
	sp_u64map_del(table, key);
	f->live_keys--;
	f->dead_keys++;
}

/*
 * Take what pid put in the tables out of them: a later line with its pid
 * is of another process.  With a tid, only that thread's name and prefix
 * (the process's list of keys keeps them until compact() makes it anew).
 * What they pointed to waits for compact().
 */
void sp_fold_gone(struct sp_fold *f, const struct sp_st_gone *g)
{
	struct sp_u64slot *slot = sp_u64map_find(&f->pid_owned, g->pid);
	struct sp_fold_space *sp;
	struct sp_fold_owned *o;
	size_t i;

	if (g->has_tid) {
		let_go(f, &f->comms, sp_fold_key2(g->pid, g->tid));
		let_go(f, &f->prefixes, sp_fold_key2(g->pid, g->tid));
		return;
	}
	if (slot) {
		o = &f->owned[slot->val];
		for (i = 0; i < o->n; i++)
			let_go(f, owned_table(f, o->ents[i].kind),
			       sp_fold_key2(g->pid, o->ents[i].id));
		free(o->ents);
		memset(o, 0, sizeof(*o));
		sp_u64map_del(&f->pid_owned, g->pid);
	}
	if ((sp = sp_fold_space_of(f, g->pid, 0))) {
		f->dead_keys += sp->n;
		free(sp->maps);
		memset(sp, 0, sizeof(*sp));
		sp_u64map_del(&f->spaces, g->pid);
	}
}

/* Copies from one fold into another: old index -> new, NONE not yet. */
struct copy {
	struct sp_fold *from, *to;
	uint32_t *maps, *frames;
};

/* The string id in to of string id in from; -ENOMEM. */
static int64_t copy_str(struct copy *c, uint32_t id)
{
	return id == SP_FOLD_NONE ? SP_FOLD_NONE :
	       sp_strtab_intern(&c->to->strs, c->from->strs.strs[id]);
}

static int64_t copy_map(struct copy *c, uint32_t i)
{
	struct sp_fold_map m = c->from->maps[i];
	int64_t path, bid, id;

	if (c->maps[i] != SP_FOLD_NONE)
		return c->maps[i];
	path = copy_str(c, m.path);
	bid = copy_str(c, m.build_id);
	if (path < 0 || bid < 0)
		return -ENOMEM;
	m.path = (uint32_t)path;
	m.build_id = (uint32_t)bid;
	id = sp_fold_add_map(c->to, &m);
	if (id >= 0)
		c->maps[i] = (uint32_t)id;
	return id;
}

static int64_t copy_frame(struct copy *c, uint32_t i)
{
	struct sp_fold_frame fr = c->from->frames[i];
	int64_t s[6], id, map = SP_FOLD_NONE;
	size_t k;
	int is_new;

	if (c->frames[i] != SP_FOLD_NONE)
		return c->frames[i];
	s[0] = copy_str(c, fr.name);
	s[1] = copy_str(c, fr.full);
	s[2] = copy_str(c, fr.file);
	s[3] = copy_str(c, fr.module);
	s[4] = copy_str(c, fr.symbol);
	s[5] = copy_str(c, fr.folded);
	if (fr.map != SP_FOLD_NONE)
		map = copy_map(c, fr.map);
	for (k = 0; k < 6; k++)
		if (s[k] < 0)
			return -ENOMEM;
	if (map < 0)
		return -ENOMEM;
	fr.name = (uint32_t)s[0];
	fr.full = (uint32_t)s[1];
	fr.file = (uint32_t)s[2];
	fr.module = (uint32_t)s[3];
	fr.symbol = (uint32_t)s[4];
	fr.folded = (uint32_t)s[5];
	fr.map = (uint32_t)map;
	/* two frames that differed only in what was dropped are one now */
	id = sp_fold_frame_add(c->to, &fr, &is_new);
	if (id < 0)
		return id;
	c->frames[i] = (uint32_t)id;
	return id;
}

/* The stack of (pid, id) at index i of from, into to's table of kind. */
static int copy_stack(struct copy *c, uint32_t pid, uint32_t id, uint32_t i,
		      uint8_t kind)
{
	const struct sp_fold_stack *st = &c->from->stacks[i];
	struct sp_fold *to = c->to;
	struct sp_u64slot *slot;
	int64_t folded, fid;
	uint32_t k, off = (uint32_t)to->nframe_ids;

	folded = copy_str(c, st->folded);
	if (folded < 0 || SP_GROW(to->frame_ids, to->frame_idcap,
				  to->nframe_ids + st->n) ||
	    SP_GROW(to->stacks, to->stackcap, to->nstacks + 1))
		return -ENOMEM;
	for (k = 0; k < st->n; k++) {
		fid = copy_frame(c, c->from->frame_ids[st->off + k]);
		if (fid < 0)
			return -ENOMEM;
		to->frame_ids[to->nframe_ids++] = (uint32_t)fid;
	}
	slot = sp_u64map_get(owned_table(to, kind), sp_fold_key2(pid, id), NULL);
	if (!slot)
		return -ENOMEM;
	slot->val = to->nstacks;
	to->stacks[to->nstacks++] = (struct sp_fold_stack){ .pid = pid,
		.folded = (uint32_t)folded, .off = off, .n = st->n,
		.end = st->end, .offcpu = st->offcpu, .base = SP_FOLD_NONE };
	return sp_fold_own(to, pid, id, kind);
}

/* What f's tables reach, copied into to (a new fold). */
static int copy_live(struct copy *c)
{
	struct sp_fold *f = c->from, *to = c->to;
	struct sp_fold_space *sp, *tsp;
	struct sp_u64slot *slot;
	int64_t id, m;
	size_t i, k;

	id = copy_str(c, f->event);
	if (id < 0)
		return -ENOMEM;
	to->event = (uint32_t)id;
	for (i = 0; i < f->nlabels; i += 2)
		if (sp_fold_add_label(to, f->strs.strs[f->labels[i]],
				      f->strs.strs[f->labels[i + 1]]))
			return -ENOMEM;
	for (i = 0; i < f->spaces.nslots; i++) {
		if (!f->spaces.slots[i].used)
			continue;
		sp = &f->space[f->spaces.slots[i].val];
		tsp = sp_fold_space_of(to, (uint32_t)f->spaces.slots[i].key, 1);
		if (!tsp || SP_GROW(tsp->maps, tsp->cap, sp->n))
			return -ENOMEM;
		for (k = 0; k < sp->n; k++) {
			if ((m = copy_map(c, sp->maps[k])) < 0)
				return -ENOMEM;
			tsp->maps[tsp->n++] = (uint32_t)m;
		}
	}
	for (i = 0; i < f->comms.nslots; i++) {
		slot = &f->comms.slots[i];
		if (!slot->used)
			continue;
		if ((id = copy_str(c, (uint32_t)slot->val)) < 0)
			return -ENOMEM;
		if (!(slot = sp_u64map_get(&to->comms, f->comms.slots[i].key,
					   NULL)))
			return -ENOMEM;
		slot->val = (uint64_t)id;
		if (sp_fold_own(to, (uint32_t)(slot->key >> 32), (uint32_t)slot->key,
			SP_FOLD_OWN_COMM))
			return -ENOMEM;
	}
	/* the prefixes are made again from the names, at the next sample */
	for (i = 0; i < f->stack_ids.nslots; i++) {
		slot = &f->stack_ids.slots[i];
		if (slot->used &&
		    copy_stack(c, (uint32_t)(slot->key >> 32),
			       (uint32_t)slot->key, (uint32_t)slot->val,
			       SP_FOLD_OWN_STACK))
			return -ENOMEM;
	}
	for (i = 0; i < f->offstacks.nslots; i++) {
		slot = &f->offstacks.slots[i];
		if (slot->used &&
		    copy_stack(c, (uint32_t)(slot->key >> 32),
			       (uint32_t)slot->key, (uint32_t)slot->val,
			       SP_FOLD_OWN_OFFSTACK))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Between profiles (no count, no stack half read): once the processes
 * gone have let go of as much as the live ones hold, copy what is
 * reachable into a new fold and free the rest.  Memory stays within about
 * twice what the live processes need, and each thing is copied a bounded
 * number of times on average.  Out of memory, f stays as it was.
 */
void sp_fold_compact(struct sp_fold *f)
{
	struct sp_fold *to;
	struct copy c = { .from = f };
	int r = -ENOMEM;

	if (f->pending || f->nsamples_seen || f->dead_keys < 1024 ||
	    f->dead_keys < f->live_keys)
		return;
	to = sp_fold_new(f->flags);
	c.to = to;
	c.maps = f->nmaps ? malloc(f->nmaps * sizeof(*c.maps)) : NULL;
	c.frames = f->nframes ? malloc(f->nframes * sizeof(*c.frames)) : NULL;
	if (to && (c.maps || !f->nmaps) && (c.frames || !f->nframes)) {
		if (f->nmaps)
			memset(c.maps, 0xff, f->nmaps * sizeof(*c.maps));
		if (f->nframes)
			memset(c.frames, 0xff, f->nframes * sizeof(*c.frames));
		r = copy_live(&c);
	}
	free(c.maps);
	free(c.frames);
	if (r) {
		sp_fold_free(to);
		return;
	}
	to->freq = f->freq;
	to->event_value = f->event_value;
	to->have_start = f->have_start;
	to->start_time = f->start_time;
	to->start_realtime = f->start_realtime;
	to->duration_ns = f->duration_ns;
	to->range_start = f->range_start;
	to->range_end = f->range_end;
	to->compactions = f->compactions + 1;
	sp_fold_release(f);
	*f = *to;
	free(to);
}

uint64_t sp_fold_compactions(const struct sp_fold *f)
{
	return f->compactions;
}
