/* SPDX-License-Identifier: MIT */
/* grow.c: doubling growth of arrays, with overflow checked. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

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
