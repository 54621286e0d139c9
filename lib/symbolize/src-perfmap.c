/* SPDX-License-Identifier: MIT */
/* src-perfmap.c: JIT frames named by perf-PID.map, from the stream or the file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "os/perfmap.h"
#include "source.h"

struct src_perfmap_proc {
	uint32_t pid;
	int loaded;
	int snapshot;		/* from the recorder's PERFMAP records: never reread */
	uint64_t snapshot_time;	/* when the recorder read the last of them */
	off_t size;		/* of the file when loaded, -1 absent */
	struct timespec mtime;
	struct sp_perfmap *map;
};

void src_perfmap_release(struct src_perfmap *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		sp_perfmap_free(p->procs[i].map);
	free(p->procs);
	sp_u64map_release(&p->index);
	free(p->dir);
}

static struct src_perfmap_proc *proc_of(struct src_perfmap *p, uint32_t pid,
					int create)
{
	struct src_perfmap_proc *pm;
	struct sp_u64slot *slot;
	int is_new;

	if (!create) {
		slot = sp_u64map_find(&p->index, pid);
		return slot ? &p->procs[slot->val] : NULL;
	}
	slot = sp_u64map_get(&p->index, pid, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return &p->procs[slot->val];
	if (SP_GROW(p->procs, p->cap, p->n + 1))
		goto nomem;
	pm = &p->procs[p->n];
	memset(pm, 0, sizeof(*pm));
	pm->pid = pid;
	pm->size = -1;
	pm->map = sp_perfmap_new();
	if (!pm->map)
		goto nomem;
	slot->val = p->n++;
	return pm;
nomem:
	sp_u64map_del(&p->index, pid);
	return NULL;
}

/* Read the file anew; none (or one we may not trust) leaves the map empty. */
static int load(struct sp_symbolizer *s, struct src_perfmap_proc *pm)
{
	struct stat sb;
	int fd, e;

	sp_perfmap_clear(pm->map);
	pm->loaded = 1;
	pm->size = -1;
	fd = sp_perfmap_open(s->perfmap.dir, pm->pid, SP_PERFMAP_ANY_OWNER, &sb);
	if (fd < 0)
		return 0;
	pm->size = sb.st_size;
	pm->mtime = sb.st_mtim;
	s->st.perf_map_loads++;
	e = sp_perfmap_read(pm->map, fd);
	close(fd);
	return e == -ENOMEM ? e : 0;
}

/* Whether the file changed since it was loaded. */
static int changed(struct sp_symbolizer *s, struct src_perfmap_proc *pm)
{
	char path[4096];
	struct stat sb;

	if (sp_perfmap_path(path, sizeof(path), s->perfmap.dir, pm->pid) ||
	    stat(path, &sb) || !S_ISREG(sb.st_mode))
		return 0;
	return sb.st_size != pm->size || sb.st_mtim.tv_sec != pm->mtime.tv_sec ||
	       sb.st_mtim.tv_nsec != pm->mtime.tv_nsec;
}

int src_perfmap_add_record(struct sp_symbolizer *s, uint32_t pid,
			   uint64_t time, const char *text, size_t len,
			   int reset)
{
	struct src_perfmap_proc *pm = proc_of(&s->perfmap, pid, 1);

	if (!pm)
		return -ENOMEM;
	if (reset || !pm->snapshot)
		sp_perfmap_clear(pm->map);
	pm->loaded = 1;
	pm->snapshot = 1;
	if (time > pm->snapshot_time)
		pm->snapshot_time = time;
	if (!len)
		return 0;
	s->st.perf_map_loads++;
	return sp_perfmap_add(pm->map, text, len);
}

void src_perfmap_forget(struct sp_symbolizer *s, uint32_t pid)
{
	struct src_perfmap *p = &s->perfmap;
	struct sp_u64slot *slot = sp_u64map_find(&p->index, pid);
	size_t i;

	if (!slot)
		return;
	i = slot->val;
	sp_u64map_del(&p->index, pid);
	sp_perfmap_free(p->procs[i].map);
	/* the last one takes its place */
	p->procs[i] = p->procs[--p->n];
	if (i < p->n && (slot = sp_u64map_find(&p->index, p->procs[i].pid)))
		slot->val = i;
}

void src_perfmap_exec(struct sp_symbolizer *s, uint32_t pid, uint64_t time)
{
	struct src_perfmap_proc *pm = proc_of(&s->perfmap, pid, 0);

	/*
	 * The recorder writes a map's text as soon as it reads it, ahead of
	 * the records it holds back to sort: text read after the exec is
	 * the new program's, though it comes first in the stream.
	 */
	if (pm && !(pm->snapshot && pm->snapshot_time >= time)) {
		sp_perfmap_clear(pm->map);
		pm->loaded = 0;
	}
}

/* The process's map: for addresses in no mapping or in anonymous memory. */
static void *table(struct sp_symbolizer *s, const struct sp_symq *q, int *err)
{
	struct src_perfmap_proc *pm;

	if (q->kernel || (q->map && q->map->kind != SP_MAP_ANON))
		return NULL;
	pm = proc_of(&s->perfmap, q->pid, 1);
	if (!pm) {
		*err = -ENOMEM;
		return NULL;
	}
	if (!pm->loaded && (*err = load(s, pm)))
		return NULL;
	return pm;
}

static int lookup(struct sp_symbolizer *s, void *table,
		  const struct sp_symq *q, struct sp_frame *out, unsigned max)
{
	struct src_perfmap_proc *pm = table;
	const struct sp_pmsym *e;
	int r;

	e = sp_perfmap_lookup(pm->map, q->addr, q->precise);
	if (!e && !pm->snapshot && changed(s, pm)) {
		/* the JIT has written more since we read it */
		if ((r = load(s, pm)))
			return r;
		e = sp_perfmap_lookup(pm->map, q->addr, q->precise);
	}
	if (!e)
		return 0;
	out[0] = (struct sp_frame){ .kind = SP_FK_JIT, .origin = SP_FO_PERFMAP,
		.function = sp_sym_intern(s, e->name) };
	return out[0].function ? 1 : -ENOMEM;
}

const struct sp_source sp_src_perfmap = {
	.name = "perf-map",
	.table = table,
	.lookup = lookup,
};
