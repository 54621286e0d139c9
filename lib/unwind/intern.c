/* SPDX-License-Identifier: MIT */
/* intern.c: stack interning by hash of the whole frame list. */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "intern.h"

struct entry {
	uint64_t hash;
	size_t off;		/* of the stored key in the arena, in words */
	uint32_t id;
};

struct sp_intern {
	struct entry *slots;
	size_t nslots, count;
	uint64_t *arena;	/* header word, Python frame count, kernel ips,
				   user ips, flag words, Python frames */
	size_t len, cap;
};

struct sp_intern *sp_intern_new(void)
{
	struct sp_intern *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->nslots = 16;		/* most processes have few stacks */
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void sp_intern_free(struct sp_intern *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t->arena);
	free(t);
}

uint64_t sp_intern_count(const struct sp_intern *t)
{
	return t->count;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t head_word(const struct sp_stack_key *k)
{
	return (uint64_t)k->pid << 32 |
	       (uint64_t)((k->end & 7) | (k->flags & 0x1f) << 3) << 24 |
	       (uint64_t)(k->nr_kernel & 0xfff) << 12 | (k->nr_user & 0xfff);
}

static uint64_t key_hash(const struct sp_stack_key *k)
{
	uint64_t h = mix(0, head_word(k));
	unsigned i;

	for (i = 0; i < k->nr_kernel; i++)
		h = mix(h, k->kernel_ips[i]);
	for (i = 0; i < k->nr_user; i++)
		h = mix(h, k->user_ips[i] ^ (uint64_t)k->uflags[i] << 63);
	h = mix(h, k->nr_py);
	for (i = 0; i < k->nr_py; i++)
		h = mix(h, k->py[i]);
	return h;
}

static size_t key_words(const struct sp_stack_key *k)
{
	return 2 + k->nr_kernel + k->nr_user + (k->nr_user + 7) / 8 + k->nr_py;
}

static int key_equal(const uint64_t *w, const struct sp_stack_key *k)
{
	const uint8_t *flags;

	if (w[0] != head_word(k) || (w[0] >> 32) != k->pid || w[1] != k->nr_py)
		return 0;
	w += 2;
	if (k->nr_kernel && memcmp(w, k->kernel_ips, 8u * k->nr_kernel))
		return 0;
	w += k->nr_kernel;
	if (k->nr_user && memcmp(w, k->user_ips, 8u * k->nr_user))
		return 0;
	w += k->nr_user;
	flags = (const uint8_t *)w;
	if (k->nr_user && memcmp(flags, k->uflags, k->nr_user))
		return 0;
	w += (k->nr_user + 7) / 8;
	return !k->nr_py || !memcmp(w, k->py, 8u * k->nr_py);
}

static int rehash(struct sp_intern *t)
{
	size_t n = t->nslots * 2, i;
	struct entry *s = calloc(n, sizeof(*s));

	if (!s)
		return -1;
	for (i = 0; i < t->nslots; i++) {
		size_t j;

		if (!t->slots[i].id)
			continue;
		j = t->slots[i].hash & (n - 1);
		while (s[j].id)
			j = (j + 1) & (n - 1);
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

uint32_t sp_intern_stack(struct sp_intern *t, const struct sp_stack_key *k,
			 uint32_t *last, int *is_new)
{
	uint64_t h = key_hash(k);
	size_t i = h & (t->nslots - 1), words = key_words(k);
	uint64_t *w;

	*is_new = 0;
	for (; t->slots[i].id; i = (i + 1) & (t->nslots - 1))
		if (t->slots[i].hash == h &&
		    key_equal(t->arena + t->slots[i].off, k))
			return t->slots[i].id;
	if (*last == UINT32_MAX || SP_GROW(t->arena, t->cap, t->len + words))
		return 0;
	w = t->arena + t->len;
	*w++ = head_word(k);
	*w++ = k->nr_py;
	if (k->nr_kernel)
		memcpy(w, k->kernel_ips, 8u * k->nr_kernel);
	w += k->nr_kernel;
	if (k->nr_user) {
		memcpy(w, k->user_ips, 8u * k->nr_user);
		w += k->nr_user;
		w[(k->nr_user + 7) / 8 - 1] = 0;	/* the flag bytes' padding */
		memcpy(w, k->uflags, k->nr_user);
		w += (k->nr_user + 7) / 8;
	}
	if (k->nr_py)
		memcpy(w, k->py, 8u * k->nr_py);
	t->slots[i].hash = h;
	t->slots[i].off = t->len;
	t->slots[i].id = ++*last;
	t->count++;
	t->len += words;
	*is_new = 1;
	if (t->count * 2 > t->nslots && rehash(t))
		return 0;
	return *last;
}
