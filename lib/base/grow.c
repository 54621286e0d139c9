/* SPDX-License-Identifier: MIT */
/* grow.c: doubling growth of arrays, with overflow checked; prefaulting. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grow.h"

int sp_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (c > SIZE_MAX / elem)
		return -ENOMEM;
	q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

void sp_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from, to;

	from = ((uintptr_t)p + page - 1) & ~(page - 1);
	to = ((uintptr_t)p + n) & ~(page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}
