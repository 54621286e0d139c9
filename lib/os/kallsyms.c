/* SPDX-License-Identifier: MIT */
/* kallsyms.c: kernel text symbols, ranked and bounded once, looked up by address. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/search.h"
#include "base/grow.h"
#include "base/symrule.h"
#include "kallsyms.h"

/*
 * Names are kept in chunks that never move, the first small (a table of
 * the few kernel symbols a recording met), each next one twice the last,
 * up to CHUNK (the whole of /proc/kallsyms).
 */
#define FIRST_CHUNK (1u << 12)
#define CHUNK (1u << 20)

struct entry {
	struct sp_ksym s;
	uint8_t rank;		/* 0 global, 1 weak, 2 local */
};

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct sp_ksyms {
	struct entry *v;
	size_t n, cap;
	uint64_t *pads;		/* where padding starts: it bounds, then goes */
	size_t npads, padcap;
	int sorted;
	struct chunk *chunks;
};

struct sp_ksyms *sp_ksyms_new(void)
{
	struct sp_ksyms *k = calloc(1, sizeof(*k));

	if (k)
		k->sorted = 1;
	return k;
}

void sp_ksyms_free(struct sp_ksyms *k)
{
	struct chunk *c, *next;

	if (!k)
		return;
	for (c = k->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(k->v);
	free(k->pads);
	free(k);
}

/* A copy of the len bytes at s, NUL-terminated, that lives as long as k. */
static const char *keep(struct sp_ksyms *k, const char *s, size_t len)
{
	struct chunk *c = k->chunks;
	char *p;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = !c ? FIRST_CHUNK : c->cap < CHUNK ? 2 * c->cap :
			     CHUNK;

		if (cap < len + 1)
			cap = len + 1;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = k->chunks;
		k->chunks = c;
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = 0;
	c->used += len + 1;
	return p;
}

static int push(struct sp_ksyms *k, const struct entry *e)
{
	if (SP_GROW(k->v, k->cap, k->n + 1))
		return -ENOMEM;
	k->v[k->n++] = *e;
	k->sorted = 0;
	return 0;
}

/* Padding keeps only its address: half of a kernel's symbols are padding. */
static int push_pad(struct sp_ksyms *k, uint64_t start)
{
	if (SP_GROW(k->pads, k->padcap, k->npads + 1))
		return -ENOMEM;
	k->pads[k->npads++] = start;
	k->sorted = 0;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->s.start != y->s.start)
		return x->s.start < y->s.start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->s.name, y->s.name);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sort v, which /proc/kallsyms gives almost in order (a few names at one
 * address out of rank): insertion sort while it moves few elements, qsort
 * once it has moved 8 per element, so that no input makes it quadratic.
 */
static void sort_mostly_sorted(void *v, size_t n, size_t size,
			       int (*cmp)(const void *, const void *))
{
	char *b = v, tmp[sizeof(struct entry)];
	size_t i, j, moves = 0;

	if (size > sizeof(tmp)) {
		qsort(v, n, size, cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		if (cmp(b + (i - 1) * size, b + i * size) <= 0)
			continue;
		memcpy(tmp, b + i * size, size);
		for (j = i; j > 0 && cmp(b + (j - 1) * size, tmp) > 0; j--)
			moves++;
		memmove(b + (j + 1) * size, b + j * size, (i - j) * size);
		memcpy(b + j * size, tmp, size);
		if (moves > 8 * n) {
			qsort(v, n, size, cmp);
			return;
		}
	}
}

/*
 * Sort; give each symbol without a size the distance to the next address,
 * a symbol's or padding's; keep one symbol per address; drop the padding.
 */
static void finish(struct sp_ksyms *k)
{
	size_t i, j, p = 0, n = 0;
	uint64_t next;

	sort_mostly_sorted(k->v, k->n, sizeof(*k->v), entry_cmp);
	sort_mostly_sorted(k->pads, k->npads, sizeof(*k->pads), u64_cmp);
	for (i = 0; i < k->n; i = j) {
		struct entry *e = &k->v[i];

		for (j = i + 1; j < k->n && k->v[j].s.start == e->s.start; j++)
			;
		while (p < k->npads && k->pads[p] <= e->s.start)
			p++;
		next = j < k->n ? k->v[j].s.start : 0;
		if (p < k->npads && (!next || k->pads[p] < next))
			next = k->pads[p];
		if (!e->s.size && next)
			e->s.size = next - e->s.start;
		k->v[n++] = *e;
	}
	k->n = n;
	free(k->pads);
	k->pads = NULL;
	k->npads = k->padcap = 0;
	k->sorted = 1;
}

int sp_ksyms_load(struct sp_ksyms *k, const char *path)
{
	char *line = NULL;
	size_t lcap = 0, first = k->n, firstpad = k->npads;
	int nonzero = 0, e = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		char *p = line, *end, *name, *mod;
		struct entry en = { 0 };
		unsigned long long a;
		size_t nl, ml;
		char t;

		errno = 0;
		a = strtoull(p, &end, 16);
		if (end == p || *end != ' ' || errno)
			continue;
		t = end[1];
		if ((t != 't' && t != 'T' && t != 'w' && t != 'W') ||
		    end[2] != ' ')
			continue;
		name = end + 3;
		nl = strcspn(name, "\t\n");
		if (!nl)
			continue;
		mod = name[nl] == '\t' ? name + nl + 1 : NULL;
		ml = mod ? strcspn(mod, "\n") : 0;
		nonzero |= a != 0;
		if (sp_sym_is_padding(name)) {
			if ((e = push_pad(k, a)))
				break;
			continue;
		}
		en.s.start = a;
		en.rank = t == 'T' ? 0 : t == 't' ? 2 : 1;
		en.s.name = keep(k, name, nl);
		en.s.module = ml ? keep(k, mod, ml) : NULL;
		if (!en.s.name || (ml && !en.s.module)) {
			e = -ENOMEM;
			break;
		}
		if ((e = push(k, &en)))
			break;
	}
	free(line);
	fclose(f);
	/* kptr_restrict: every address reads as zero, and none means anything */
	if (e || !nonzero) {
		k->n = first;
		k->npads = firstpad;
	}
	return e;
}

int sp_ksyms_add_record(struct sp_ksyms *k, uint64_t start, uint64_t size,
			const char *name)
{
	const char *bra = strstr(name, " [");
	size_t len = strlen(name);
	struct entry en = { 0 };

	if (sp_sym_is_padding(name))
		return push_pad(k, start);
	en.s.start = start;
	en.s.size = size;
	if (bra && name[len - 1] == ']') {
		/* "nvme_irq [nvme]": the module in brackets after the name */
		en.s.name = keep(k, name, (size_t)(bra - name));
		en.s.module = keep(k, bra + 1, len - (size_t)(bra + 1 - name));
	} else {
		en.s.name = keep(k, name, len);
	}
	if (!en.s.name || (bra && !en.s.module && name[len - 1] == ']'))
		return -ENOMEM;
	return push(k, &en);
}

size_t sp_ksyms_count(struct sp_ksyms *k)
{
	if (!k->sorted)
		finish(k);
	return k->n;
}

static const void *find(void *table, uint64_t addr)
{
	const struct sp_ksyms *k = table;
	size_t lo = SP_COUNT_LE(k->v, k->n, s.start, addr);
	const struct sp_ksym *s;

	if (!lo)
		return NULL;
	s = &k->v[lo - 1].s;
	return s->size && addr - s->start >= s->size ? NULL : s;
}

const struct sp_ksym *sp_ksyms_lookup(struct sp_ksyms *k, uint64_t addr,
				      int precise)
{
	if (!k->sorted)
		finish(k);
	return sp_sym_pick(find, k, addr, precise, NULL);
}

size_t sp_ksyms_index(const struct sp_ksyms *k, const struct sp_ksym *s)
{
	return (size_t)((const struct entry *)(const void *)s - k->v);
}

size_t sp_ksym_record_name(const struct sp_ksym *s, char *buf, size_t n)
{
	int len = s->module ? snprintf(buf, n, "%s %s", s->name, s->module) :
			      snprintf(buf, n, "%s", s->name);

	if (len < 0 || !n)
		return 0;	/* nothing written, not even the NUL */
	return (size_t)len < n ? (size_t)len : n - 1;
}
