/* SPDX-License-Identifier: MIT */
/* flame.c: the merged tree of frames: stacks added, siblings sorted. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "tree.h"

#define HUGE_PAGE (2u << 20)

static uint64_t child_hash(uint32_t parent, uint32_t name)
{
	return sp_hash_u64((uint64_t)parent << 32 | name);
}

static int new_node(struct sp_flame *f, uint32_t parent, uint32_t name)
{
	struct node *n;

	if (f->n >= NONE - 1)
		return -ENOMEM;
	if (SP_GROW(f->nodes, f->cap, f->n + 1))
		return -ENOMEM;
	n = &f->nodes[f->n];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->parent = parent;
	n->child = n->last = n->next = NONE;
	if (parent != NONE) {
		struct node *p = &f->nodes[parent];

		n->depth = p->depth + 1;
		if (p->last == NONE)
			p->child = (uint32_t)f->n;
		else
			f->nodes[p->last].next = (uint32_t)f->n;
		p->last = (uint32_t)f->n;
	}
	if (n->depth > f->max_depth)
		f->max_depth = n->depth;
	f->n++;
	return 0;
}

static int grow_slots(struct sp_flame *f)
{
	size_t nslots = f->nslots ? f->nslots * 2 : 1024, i, j;
	size_t size = nslots * sizeof(struct slot);
	struct slot *slots;

	/*
	 * Every probe lands somewhere else in a table of megabytes: in huge
	 * pages the TLB misses fewer of them (where the kernel has them).
	 */
	if (size >= HUGE_PAGE) {
		void *p;

		if (posix_memalign(&p, HUGE_PAGE, size))
			return -ENOMEM;
		madvise(p, size, MADV_HUGEPAGE);
		memset(p, 0, size);
		slots = p;
	} else {
		slots = calloc(nslots, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
	}
	for (i = 0; i < f->nslots; i++) {
		const struct slot *s = &f->slots[i];

		if (!s->node)
			continue;
		j = child_hash(s->parent, s->name) & (nslots - 1);
		while (slots[j].node)
			j = (j + 1) & (nslots - 1);
		slots[j] = *s;
	}
	free(f->slots);
	f->slots = slots;
	f->nslots = nslots;
	return 0;
}

/* The child of parent called name, added when new; NONE when out of memory. */
static uint32_t child_of(struct sp_flame *f, uint32_t parent, uint32_t name)
{
	struct node *p = &f->nodes[parent];
	size_t j;

	if (f->flags & SP_FLAME_CHART) {
		/* a flame chart merges a frame with the one before only */
		if (p->last != NONE && f->nodes[p->last].name == name)
			return p->last;
		return new_node(f, parent, name) ? NONE : (uint32_t)f->n - 1;
	}
	if ((f->n + 1) * 2 > f->nslots && grow_slots(f))
		return NONE;
	j = child_hash(parent, name) & (f->nslots - 1);
	while (f->slots[j].node) {
		if (f->slots[j].parent == parent && f->slots[j].name == name)
			return f->slots[j].node - 1;
		j = (j + 1) & (f->nslots - 1);
	}
	if (new_node(f, parent, name))
		return NONE;
	f->slots[j].parent = parent;
	f->slots[j].name = name;
	f->slots[j].node = (uint32_t)f->n;
	return (uint32_t)f->n - 1;
}

struct sp_flame *sp_flame_new(unsigned flags)
{
	struct sp_flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->flags = flags;
	/* the root, "all", is node 0 and has the name of index 0 */
	if (sp_strtab_intern(&f->names, "all") != 0 || new_node(f, NONE, 0))
		goto err;
	return f;
err:
	sp_flame_free(f);
	return NULL;
}

void sp_flame_free(struct sp_flame *f)
{
	if (!f)
		return;
	free(f->nodes);
	sp_strtab_release(&f->names);
	free(f->slots);
	free(f->frames);
	free(f->path);
	free(f);
}

int sp_flame_add(struct sp_flame *f, char *stack, double count, double base)
{
	size_t n = 0, i;
	uint32_t at = 0;
	char *p = stack;

	for (;;) {
		char *semi = strchr(p, ';');

		if (SP_GROW(f->frames, f->frames_cap, n + 1))
			return -ENOMEM;
		f->frames[n++] = p;
		if (!semi)
			break;
		*semi = 0;
		p = semi + 1;
	}
	if (SP_GROW(f->path, f->path_cap, n))
		return -ENOMEM;
	f->nodes[0].count += count;
	f->nodes[0].base += base;
	for (i = 0; i < n; i++) {
		const char *name = f->frames[f->flags & SP_FLAME_REVERSE ?
					     n - 1 - i : i];
		int64_t id;

		/*
		 * Input sorted by stack, and stacks of one thread, share their
		 * first frames with the stack before: no lookup for those.
		 */
		if (i < f->path_n &&
		    !strcmp(name, f->names.strs[f->nodes[f->path[i]].name])) {
			at = f->path[i];
		} else {
			f->path_n = i;
			id = sp_strtab_intern(&f->names, name);
			if (id < 0)
				return -ENOMEM;
			at = child_of(f, at, (uint32_t)id);
			if (at == NONE)
				return -ENOMEM;
		}
		f->path[i] = at;
		f->nodes[at].count += count;
		f->nodes[at].base += base;
	}
	f->path_n = n;
	f->nodes[at].delta += count - base;
	return 0;
}

double sp_flame_total(const struct sp_flame *f)
{
	return f->nodes[0].count;
}

double sp_flame_base_total(const struct sp_flame *f)
{
	return f->nodes[0].base;
}

size_t sp_flame_frames(const struct sp_flame *f)
{
	return f->n;
}

/* Sorting siblings by name ------------------------------------------------ */

static const struct sp_flame *sort_tree;

static int cmp_names(const void *a, const void *b)
{
	const struct node *na = &sort_tree->nodes[*(const uint32_t *)a];
	const struct node *nb = &sort_tree->nodes[*(const uint32_t *)b];

	return strcmp(sort_tree->names.strs[na->name],
		      sort_tree->names.strs[nb->name]);
}

int sp_flame_sort(struct sp_flame *f)
{
	uint32_t *kids = NULL;
	size_t cap = 0, i;

	sort_tree = f;
	for (i = 0; i < f->n; i++) {
		struct node *p = &f->nodes[i];
		size_t k = 0, j;
		uint32_t c;

		if (p->child == NONE || f->nodes[p->child].next == NONE)
			continue;
		for (c = p->child; c != NONE; c = f->nodes[c].next) {
			if (SP_GROW(kids, cap, k + 1)) {
				free(kids);
				return -ENOMEM;
			}
			kids[k++] = c;
		}
		qsort(kids, k, sizeof(*kids), cmp_names);
		p->child = kids[0];
		p->last = kids[k - 1];
		for (j = 0; j + 1 < k; j++)
			f->nodes[kids[j]].next = kids[j + 1];
		f->nodes[kids[k - 1]].next = NONE;
	}
	free(kids);
	sort_tree = NULL;
	return 0;
}
