/* SPDX-License-Identifier: MIT */
/*
 * search.h: binary search of arrays sorted by a 64-bit address, the one
 * lookup every table of symbols, mappings and code ranges starts with; and
 * the reach of ranges that may overlap (JIT code written over old code).
 */
#ifndef SP_SEARCH_H
#define SP_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * How many of the n elements of v (each size bytes, sorted ascending by
 * the uint64_t at byte off of each) have that key at most key: the index
 * after the last element starting at or below key.
 */
static inline size_t sp_count_le(const void *v, size_t n, size_t size,
				 size_t off, uint64_t key)
{
	const uint8_t *b = v;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, b + mid * size + off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* sp_count_le() over an array of structs whose member field is the key. */
#define SP_COUNT_LE(v, n, field, key) \
	sp_count_le((v), (n), sizeof(*(v)), offsetof(__typeof__(*(v)), field), (key))

/*
 * For ranges that may overlap (each size bytes of v, sorted by the start at
 * byte start_off, with a length at byte size_off), set reach[i] for i from
 * from to n to the last byte any of the ranges 0..i covers; reach[from - 1]
 * must hold already.  A lookup walking down from the last range starting at
 * or below an address stops at the first whose reach is below it: nothing
 * further down holds the address.  A range of length 0 covers nothing; one
 * running past the top of the address space reaches the top.
 */
static inline void sp_reach_fill(uint64_t *reach, const void *v, size_t n,
				 size_t size, size_t start_off,
				 size_t size_off, size_t from)
{
	const uint8_t *b = v;
	uint64_t top = from ? reach[from - 1] : 0, start, len, last;
	size_t i;

	for (i = from; i < n; i++) {
		memcpy(&start, b + i * size + start_off, sizeof(start));
		memcpy(&len, b + i * size + size_off, sizeof(len));
		last = start + (len - 1);
		if (len && last < start)
			last = UINT64_MAX;
		if (len && last > top)
			top = last;
		reach[i] = top;
	}
}

/* sp_reach_fill() over an array of structs with members start and size. */
#define SP_REACH_FILL(reach, v, n, start, size, from) \
	sp_reach_fill((reach), (v), (n), sizeof(*(v)), \
		      offsetof(__typeof__(*(v)), start), \
		      offsetof(__typeof__(*(v)), size), (from))

#endif
