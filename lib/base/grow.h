/* SPDX-License-Identifier: MIT */
/*
 * grow.h: arrays that grow by doubling, the one way every module of lib/
 * makes room (git's ALLOC_GROW).
 *
 *	struct thing *v = NULL;
 *	size_t n = 0, cap = 0;
 *
 *	if (SP_GROW(v, cap, n + 1))
 *		return -ENOMEM;
 *	v[n++] = x;
 */
#ifndef SP_GROW_H
#define SP_GROW_H

#include <stddef.h>

/*
 * Make *p hold at least need elements of elem bytes: when *cap is smaller,
 * realloc to the first of 16, 32, ... (doubling *cap) that fits.  Returns 0,
 * or -ENOMEM with *p and *cap unchanged.
 */
int sp_grow(void **p, size_t *cap, size_t need, size_t elem);

/* sp_grow() for an array p of capacity cap (a size_t lvalue). */
#define SP_GROW(p, cap, need) \
	sp_grow((void **)&(p), &(cap), (need), sizeof(*(p)))

/*
 * Make the whole pages of [p, p + n) present and writable in one system
 * call (MADV_POPULATE_WRITE), before a buffer of megabytes is written
 * front to back: one page fault per 4 KiB is most of the cost of filling
 * fresh memory, in a virtual machine above all.  A hint: on a kernel
 * without it (before 5.14) the pages fault in as they are written.
 */
void sp_prefault(void *p, size_t n);

#endif
