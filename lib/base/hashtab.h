/* SPDX-License-Identifier: MIT */
/*
 * hashtab.h: the two hash tables the stages keep their caches in.
 *
 * A string table interns each distinct string once and gives it a dense
 * index that never changes; a u64 map maps 64-bit keys (a pid and a stack
 * ID, a pointer) to 64-bit values.  Both use open addressing with linear
 * probing and stay at most half full, so a lookup is a hash and a probe or
 * two.  The structs are public so that they can be embedded; zero is empty.
 */
#ifndef SP_HASHTAB_H
#define SP_HASHTAB_H

#include <stdint.h>

struct sp_strtab {
	char **strs;		/* strs[index], owned */
	uint32_t n, cap;
	uint32_t *slots;	/* index + 1, 0 empty */
	uint32_t nslots;	/* a power of two */
};

/* The index of s, which is copied on first sight; -ENOMEM. */
int64_t sp_strtab_intern(struct sp_strtab *t, const char *s);

/* Free every string and the table; it is empty again after. */
void sp_strtab_release(struct sp_strtab *t);

struct sp_u64slot {
	uint64_t key, val;
	int used;
};

struct sp_u64map {
	struct sp_u64slot *slots;
	uint32_t n, nslots;
};

/* The slot of key, or NULL. */
struct sp_u64slot *sp_u64map_find(const struct sp_u64map *m, uint64_t key);

/*
 * The slot of key, added with val 0 when new (then *is_new is set, if
 * is_new is not NULL).  NULL when out of memory.  Slots move when the map
 * grows: do not keep a slot across calls.
 */
struct sp_u64slot *sp_u64map_get(struct sp_u64map *m, uint64_t key,
				 int *is_new);

/* Remove key if present. */
void sp_u64map_del(struct sp_u64map *m, uint64_t key);

void sp_u64map_release(struct sp_u64map *m);

/* A well-mixed hash of x. */
uint64_t sp_hash_u64(uint64_t x);

/* FNV-1a of n bytes: a fingerprint of text, not for hash tables' keys. */
uint64_t sp_hash_bytes(const void *p, size_t n);

#endif
