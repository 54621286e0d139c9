/* SPDX-License-Identifier: MIT */
/* hashtab.c: string interning and u64 maps with open addressing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"

/* Eight bytes at a time: names and paths are tens of bytes long. */
static uint32_t hash_str(const char *s)
{
	size_t n = strlen(s);
	uint64_t h = n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	return (uint32_t)sp_hash_u64(h ^ w);
}

uint64_t sp_hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	while (n--) {
		h ^= *b++;
		h *= 1099511628211ull;
	}
	return h;
}

uint64_t sp_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int strtab_grow(struct sp_strtab *t)
{
	uint32_t nslots = t->nslots ? t->nslots * 2 : 256, i;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		uint32_t j = hash_str(t->strs[i]) & (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

int64_t sp_strtab_intern(struct sp_strtab *t, const char *s)
{
	uint32_t j;

	if ((t->n + 1) * 2 > t->nslots && strtab_grow(t))
		return -ENOMEM;
	j = hash_str(s) & (t->nslots - 1);
	while (t->slots[j]) {
		if (!strcmp(t->strs[t->slots[j] - 1], s))
			return t->slots[j] - 1;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **strs = realloc(t->strs, cap * sizeof(*strs));

		if (!strs)
			return -ENOMEM;
		t->strs = strs;
		t->cap = cap;
	}
	t->strs[t->n] = strdup(s);
	if (!t->strs[t->n])
		return -ENOMEM;
	t->slots[j] = t->n + 1;
	return t->n++;
}

void sp_strtab_release(struct sp_strtab *t)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

struct sp_u64slot *sp_u64map_find(const struct sp_u64map *m, uint64_t key)
{
	uint32_t j;

	if (!m->nslots)
		return NULL;
	j = (uint32_t)sp_hash_u64(key) & (m->nslots - 1);
	while (m->slots[j].used) {
		if (m->slots[j].key == key)
			return &m->slots[j];
		j = (j + 1) & (m->nslots - 1);
	}
	return NULL;
}

static int u64map_grow(struct sp_u64map *m)
{
	uint32_t nslots = m->nslots ? m->nslots * 2 : 64, i, j;
	struct sp_u64slot *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->nslots; i++) {
		if (!m->slots[i].used)
			continue;
		j = (uint32_t)sp_hash_u64(m->slots[i].key) & (nslots - 1);
		while (slots[j].used)
			j = (j + 1) & (nslots - 1);
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->nslots = nslots;
	return 0;
}

struct sp_u64slot *sp_u64map_get(struct sp_u64map *m, uint64_t key,
				 int *is_new)
{
	uint32_t j;

	if ((m->n + 1) * 2 > m->nslots && u64map_grow(m))
		return NULL;
	j = (uint32_t)sp_hash_u64(key) & (m->nslots - 1);
	while (m->slots[j].used) {
		if (m->slots[j].key == key) {
			if (is_new)
				*is_new = 0;
			return &m->slots[j];
		}
		j = (j + 1) & (m->nslots - 1);
	}
	m->slots[j].used = 1;
	m->slots[j].key = key;
	m->slots[j].val = 0;
	m->n++;
	if (is_new)
		*is_new = 1;
	return &m->slots[j];
}

/* Linear probing deletion: re-place the rest of the cluster. */
void sp_u64map_del(struct sp_u64map *m, uint64_t key)
{
	struct sp_u64slot *slot = sp_u64map_find(m, key);
	uint32_t k;

	if (!slot)
		return;
	slot->used = 0;
	m->n--;
	for (k = ((uint32_t)(slot - m->slots) + 1) & (m->nslots - 1);
	     m->slots[k].used; k = (k + 1) & (m->nslots - 1)) {
		struct sp_u64slot e = m->slots[k];
		uint32_t h;

		m->slots[k].used = 0;
		h = (uint32_t)sp_hash_u64(e.key) & (m->nslots - 1);
		while (m->slots[h].used)
			h = (h + 1) & (m->nslots - 1);
		m->slots[h] = e;
	}
}

void sp_u64map_release(struct sp_u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
