/* SPDX-License-Identifier: MIT */
/* procs.c: processes and their address spaces, replayed from records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/search.h"
#include "base/grow.h"
#include "base/hashtab.h"
#include "buildid.h"
#include "procs.h"
#include "jitdump.h"

struct sp_proc {
	uint32_t pid;
	char comm[16];
	struct sp_map *maps;	/* executable mappings, sorted, disjoint */
	size_t nmaps, capmaps;
	struct sp_map *mods;	/* whole file images, sorted, disjoint */
	size_t nmods, capmods;
	unsigned generation;
	char *jitdump;		/* path of the last jit-PID.dump mapped */
	struct {
		void *data;
		void (*release)(void *);
	} user[SP_PROC_SLOTS];
};

struct sp_procs {
	struct sp_elf_cache *cache;
	struct sp_locator *loc;
	struct sp_u64map index;	/* pid -> struct sp_proc pointer */
	struct sp_alive *alive;	/* which of them live, which to forget */
	void (*on_forget)(void *arg, struct sp_proc *proc);
	void *forget_arg;
	struct sp_elf *vdso;	/* last [vdso] image seen: one per kernel */
	struct sp_strtab missing_keys;	/* "hex build-id path": missing[] */
	struct sp_missing_file *missing;
	size_t nmissing, capmissing;
};

static void forget(void *arg, uint32_t pid);

struct sp_procs *sp_procs_new(struct sp_elf_cache *cache)
{
	struct sp_procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cache = cache;
	p->loc = sp_locator_new(cache);
	p->alive = sp_alive_new(forget, p);
	if (!p->loc || !p->alive) {
		sp_locator_free(p->loc);
		sp_alive_free(p->alive);
		free(p);
		return NULL;
	}
	return p;
}

struct sp_locator *sp_procs_locator(struct sp_procs *p)
{
	return p->loc;
}

const struct sp_missing_file *sp_procs_missing(const struct sp_procs *p,
					       size_t *n)
{
	*n = p->nmissing;
	return p->missing;
}

/* The index + 1 of m's file among the missing ones, added on first sight. */
static int64_t note_missing(struct sp_procs *p, const struct sp_map *m)
{
	char hex[2 * sizeof(m->build_id) + 1], *key;
	struct sp_missing_file *f;
	int64_t i;

	sp_build_id_hex(m->build_id, m->build_id_size, hex);
	if (asprintf(&key, "%s %s", hex, m->name) < 0)
		return -ENOMEM;
	i = sp_strtab_intern(&p->missing_keys, key);
	free(key);
	if (i < 0)
		return -ENOMEM;
	if ((size_t)i < p->nmissing)
		return i + 1;
	if (SP_GROW(p->missing, p->capmissing, p->nmissing + 1))
		return -ENOMEM;
	f = &p->missing[p->nmissing++];
	memset(f, 0, sizeof(*f));
	/* the path is the key's, after the build-id and a space */
	f->path = p->missing_keys.strs[i] + strlen(hex) + 1;
	f->build_id_size = m->build_id_size;
	memcpy(f->build_id, m->build_id, m->build_id_size);
	f->debug_only = m->elf != NULL;
	return i + 1;
}

static void maps_clear(struct sp_map *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free((char *)m[i].name);
}

static void proc_reset(struct sp_proc *proc)
{
	maps_clear(proc->maps, proc->nmaps);
	maps_clear(proc->mods, proc->nmods);
	proc->nmaps = proc->nmods = 0;
	free(proc->jitdump);
	proc->jitdump = NULL;
	proc->generation++;
}

static void proc_free(struct sp_proc *proc)
{
	int i;

	proc_reset(proc);
	free(proc->maps);
	free(proc->mods);
	for (i = 0; i < SP_PROC_SLOTS; i++)
		if (proc->user[i].release)
			proc->user[i].release(proc->user[i].data);
	free(proc);
}

void sp_procs_free(struct sp_procs *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->index.nslots; i++)
		if (p->index.slots[i].used)
			proc_free((struct sp_proc *)(uintptr_t)p->index.slots[i].val);
	sp_u64map_release(&p->index);
	sp_alive_free(p->alive);
	sp_locator_free(p->loc);
	sp_strtab_release(&p->missing_keys);
	free(p->missing);
	free(p);
}

struct sp_proc *sp_procs_find(const struct sp_procs *p, uint32_t pid)
{
	const struct sp_u64slot *slot = sp_u64map_find(&p->index, pid);

	return slot ? (struct sp_proc *)(uintptr_t)slot->val : NULL;
}

size_t sp_procs_count(const struct sp_procs *p)
{
	return p->index.n;
}

void sp_procs_on_forget(struct sp_procs *p,
			void (*fn)(void *arg, struct sp_proc *proc),
			void *arg)
{
	p->on_forget = fn;
	p->forget_arg = arg;
}

struct sp_alive *sp_procs_alive(const struct sp_procs *p)
{
	return p->alive;
}

struct sp_proc *sp_procs_get(struct sp_procs *p, uint32_t pid)
{
	struct sp_u64slot *slot;
	struct sp_proc *proc;
	int is_new;

	slot = sp_u64map_get(&p->index, pid, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return (struct sp_proc *)(uintptr_t)slot->val;
	proc = calloc(1, sizeof(*proc));
	if (!proc || sp_alive_see(p->alive, pid)) {
		sp_u64map_del(&p->index, pid);
		free(proc);
		return NULL;
	}
	proc->pid = pid;
	slot->val = (uint64_t)(uintptr_t)proc;
	return proc;
}

/* The table of which processes live forgets pid: so does this one. */
static void forget(void *arg, uint32_t pid)
{
	struct sp_procs *p = arg;
	struct sp_proc *proc = sp_procs_find(p, pid);

	if (!proc)
		return;
	if (p->on_forget)
		p->on_forget(p->forget_arg, proc);
	sp_u64map_del(&p->index, pid);
	proc_free(proc);
}

uint32_t sp_proc_pid(const struct sp_proc *proc)
{
	return proc->pid;
}

const char *sp_proc_comm(const struct sp_proc *proc)
{
	return proc->comm;
}

unsigned sp_proc_generation(const struct sp_proc *proc)
{
	return proc->generation;
}

const char *sp_proc_jitdump(const struct sp_proc *proc)
{
	return proc->jitdump;
}

void *sp_proc_user(const struct sp_proc *proc, enum sp_proc_slot slot)
{
	return proc->user[slot].data;
}

void sp_proc_set_user(struct sp_proc *proc, enum sp_proc_slot slot,
		      void *data, void (*release)(void *data))
{
	proc->user[slot].data = data;
	proc->user[slot].release = release;
}

/* Index of the last entry starting at or below addr, or n if none. */
static size_t find_le(const struct sp_map *m, size_t n, uint64_t addr)
{
	size_t lo = SP_COUNT_LE(m, n, start, addr);

	return lo ? lo - 1 : n;
}

static const struct sp_map *lookup(const struct sp_map *m, size_t n,
				   uint64_t addr)
{
	size_t i = find_le(m, n, addr);

	return i < n && addr < m[i].end ? &m[i] : NULL;
}

const struct sp_map *sp_proc_map(const struct sp_proc *proc, uint64_t addr)
{
	return lookup(proc->maps, proc->nmaps, addr);
}

const struct sp_map *sp_proc_maps(const struct sp_proc *proc, size_t *n)
{
	*n = proc->nmaps;
	return proc->maps;
}

const struct sp_map *sp_proc_modules(const struct sp_proc *proc, size_t *n)
{
	*n = proc->nmods;
	return proc->mods;
}

const struct sp_map *sp_proc_module(const struct sp_proc *proc,
				    uint64_t addr)
{
	return lookup(proc->mods, proc->nmods, addr);
}

/*
 * Insert m into the sorted, disjoint array, cutting away what it overlaps:
 * a new mapping replaces whatever was mapped there before.  Returns 1 if
 * something was cut, 0 if not, -ENOMEM.
 */
static int insert(struct sp_map **arr, size_t *n, size_t *cap,
		  const struct sp_map *m)
{
	size_t i, j, k = 0;
	int cut = 0;

	/* room for m and for a split into two pieces */
	if (sp_grow((void **)arr, cap, *n + 2, sizeof(**arr)))
		return -ENOMEM;
	for (i = 0; i < *n; i++) {
		struct sp_map *o = &(*arr)[i];

		if (o->end <= m->start || o->start >= m->end)
			continue;
		cut = 1;
		if (o->start < m->start && o->end > m->end) {
			/* m punches a hole: keep both ends */
			struct sp_map tail = *o;

			tail.pgoff += m->end - o->start;
			tail.start = m->end;
			tail.name = strdup(o->name);
			if (!tail.name)
				return -ENOMEM;
			o->end = m->start;
			memmove(o + 2, o + 1, (*n - i - 1) * sizeof(*o));
			o[1] = tail;
			(*n)++;
			i++;
		} else if (o->start < m->start) {
			o->end = m->start;
		} else if (o->end > m->end) {
			o->pgoff += m->end - o->start;
			o->start = m->end;
		} else {
			o->start = o->end = 0;	/* swallowed: removed below */
		}
	}
	/* drop emptied entries */
	for (i = j = 0; i < *n; i++) {
		if ((*arr)[i].start == (*arr)[i].end) {
			free((char *)(*arr)[i].name);
			continue;
		}
		(*arr)[j++] = (*arr)[i];
	}
	*n = j;
	k = find_le(*arr, *n, m->start);
	k = k == *n ? 0 : k + 1;
	memmove(*arr + k + 1, *arr + k, (*n - k) * sizeof(**arr));
	(*arr)[k] = *m;
	(*n)++;
	return cut;
}

static enum sp_map_kind classify(const char *name)
{
	if (!*name || !strcmp(name, "//anon") || !strncmp(name, "/memfd:", 7) ||
	    !strncmp(name, "/dev/zero", 9) || !strcmp(name, "[anon]") ||
	    !strncmp(name, "[anon:", 6))
		return SP_MAP_ANON;
	if (!strcmp(name, "[vdso]"))
		return SP_MAP_IMAGE;
	if (name[0] != '/')
		return SP_MAP_SPECIAL;
	return SP_MAP_FILE;
}

static int add_map(struct sp_procs *p, struct sp_proc *proc,
		   const struct sp_map *tmpl)
{
	struct sp_map m = *tmpl;
	int r, cut;

	m.name = strdup(tmpl->name);
	if (!m.name)
		return -ENOMEM;
	cut = insert(&proc->maps, &proc->nmaps, &proc->capmaps, &m);
	if (cut < 0) {
		free((char *)m.name);
		return cut;
	}
	if (cut)
		proc->generation++;
	if (m.elf) {
		uint64_t lo, hi;
		const struct sp_map *old;

		sp_elf_extent(m.elf, &lo, &hi);
		old = lookup(proc->mods, proc->nmods, m.start);
		if (old && old->elf == m.elf && old->bias == m.bias)
			return 0;
		m.start = lo + m.bias;
		m.end = hi + m.bias;
		/* an image the address space cannot hold has no module */
		if (m.start >= m.end)
			return 0;
		m.pgoff = 0;
		m.name = strdup(tmpl->name);
		if (!m.name)
			return -ENOMEM;
		r = insert(&proc->mods, &proc->nmods, &proc->capmods, &m);
		if (r < 0) {
			free((char *)m.name);
			return r;
		}
	}
	return 0;
}

static int apply_mmap(struct sp_procs *p, const struct sp_mmap_rec *r)
{
	struct sp_proc *proc;
	struct sp_map m = { 0 };

	if (!(r->prot & PROT_EXEC) || !r->len)
		return 0;
	proc = sp_procs_get(p, r->pid);
	if (!proc)
		return -ENOMEM;
	m.start = r->start;
	m.end = r->start + r->len;
	m.pgoff = r->pgoff;
	m.prot = r->prot;
	m.name = r->filename;
	m.build_id_size = r->build_id_size < sizeof(m.build_id) ?
			  r->build_id_size : sizeof(m.build_id);
	memcpy(m.build_id, r->build_id, m.build_id_size);
	m.kind = classify(r->filename);
	if (m.kind == SP_MAP_FILE && sp_jitdump_is_path(r->filename)) {
		char *path = strdup(r->filename);

		if (!path)
			return -ENOMEM;
		free(proc->jitdump);
		proc->jitdump = path;
	}
	if (m.kind == SP_MAP_FILE) {
		enum sp_elf_from from;
		int64_t i;

		m.elf = sp_locate(p->loc, r->filename, m.build_id,
				  m.build_id_size, &from);
		m.from = (uint8_t)from;
		if (!m.elf) {
			m.kind = m.build_id_size ? SP_MAP_MISSING :
				 SP_MAP_UNREADABLE;
		} else if (sp_elf_bias(m.elf, m.start, m.pgoff, &m.bias)) {
			m.elf = NULL;
			m.kind = SP_MAP_UNREADABLE;
		}
		if (m.kind == SP_MAP_MISSING ||
		    (m.elf && !sp_elf_has_code(m.elf))) {
			i = note_missing(p, &m);
			if (i < 0)
				return (int)i;
			m.missing = (uint32_t)i;
		}
	} else if (m.kind == SP_MAP_IMAGE) {
		/* the image record follows; until then use the last one seen */
		m.elf = p->vdso;
		m.bias = m.start;
	}
	return add_map(p, proc, &m);
}

static int apply_image(struct sp_procs *p, const struct sp_image_rec *r)
{
	struct sp_proc *proc = sp_procs_get(p, r->pid);
	const struct sp_map *old;
	struct sp_map m = { 0 };
	struct sp_elf *e;

	if (!proc)
		return -ENOMEM;
	e = sp_elf_cache_image(p->cache, r->data, r->len);
	if (!e)
		return 0;
	p->vdso = e;
	m.start = r->start;
	m.end = r->start + r->len;
	old = lookup(proc->maps, proc->nmaps, r->start);
	if (old && old->kind == SP_MAP_IMAGE) {
		m.start = old->start;
		m.end = old->end;
	}
	m.prot = PROT_READ | PROT_EXEC;
	m.kind = SP_MAP_IMAGE;
	m.name = "[vdso]";
	m.elf = e;
	if (sp_elf_bias(e, m.start, 0, &m.bias))
		m.bias = m.start;
	return add_map(p, proc, &m);
}

static int copy_maps(struct sp_proc *to, const struct sp_proc *from)
{
	struct sp_map *maps, *mods;
	size_t i;

	maps = calloc(from->nmaps + 2, sizeof(*maps));
	mods = calloc(from->nmods + 2, sizeof(*mods));
	if (!maps || !mods)
		goto err;
	/* a process may have no file images (its files were all missing) */
	if (from->nmaps)
		memcpy(maps, from->maps, from->nmaps * sizeof(*maps));
	if (from->nmods)
		memcpy(mods, from->mods, from->nmods * sizeof(*mods));
	for (i = 0; i < from->nmaps; i++)
		maps[i].name = strdup(from->maps[i].name);
	for (i = 0; i < from->nmods; i++)
		mods[i].name = strdup(from->mods[i].name);
	proc_reset(to);
	free(to->maps);
	free(to->mods);
	to->maps = maps;
	to->mods = mods;
	to->nmaps = from->nmaps;
	to->nmods = from->nmods;
	to->capmaps = from->nmaps + 2;
	to->capmods = from->nmods + 2;
	if (from->jitdump && !(to->jitdump = strdup(from->jitdump)))
		return -ENOMEM;
	return 0;
err:
	free(maps);
	free(mods);
	return -ENOMEM;
}

static int apply_comm(struct sp_procs *p, const struct sp_comm_rec *c)
{
	struct sp_proc *proc = sp_procs_get(p, c->pid);

	if (!proc)
		return -ENOMEM;
	if (c->tid != c->pid)
		return 0;
	/* a new program replaces the address space */
	if ((c->flags & SP_COMM_EXEC) && !(c->flags & SP_REC_SYNTH))
		proc_reset(proc);
	memcpy(proc->comm, c->comm, sizeof(proc->comm));
	proc->comm[sizeof(proc->comm) - 1] = 0;
	return 0;
}

static int apply_fork(struct sp_procs *p, const struct sp_task_rec *t)
{
	struct sp_proc *child, *parent;

	child = sp_procs_get(p, t->pid);
	if (!child)
		return -ENOMEM;
	/* a thread shares its process's; a synthesized one has its own */
	if (t->pid == t->ppid || (t->flags & SP_REC_SYNTH))
		return 0;
	parent = sp_procs_find(p, t->ppid);
	if (!parent)
		return 0;
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	return copy_maps(child, parent);
}

int sp_procs_apply(struct sp_procs *p, const struct sp_rec_hdr *rec)
{
	/* first what goes: a process a FORK reuses the pid of, before it */
	int r = sp_alive_apply(p->alive, rec);

	if (r)
		return r;
	switch (rec->type) {
	case SP_REC_MMAP:
		return apply_mmap(p, (const struct sp_mmap_rec *)rec);
	case SP_REC_IMAGE:
		return apply_image(p, (const struct sp_image_rec *)rec);
	case SP_REC_COMM:
		return apply_comm(p, (const struct sp_comm_rec *)rec);
	case SP_REC_FORK:
		return apply_fork(p, (const struct sp_task_rec *)rec);
	default:
		return 0;
	}
}
