/* SPDX-License-Identifier: MIT */
/*
 * search.h: binary search of arrays sorted by a 64-bit address, the one
 * lookup every table of symbols, mappings and code ranges starts with.
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

#endif
