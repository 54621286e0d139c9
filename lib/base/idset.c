/* SPDX-License-Identifier: MIT */
/* idset.c: sets of 32-bit IDs, a bit each, in pages made on first use. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"

int sp_idset_add(struct sp_idset *s, uint32_t id)
{
	size_t page = id / SP_IDSET_PAGE, bit = id % SP_IDSET_PAGE;
	uint64_t *w, mask = 1ull << (bit % 64);

	if (page >= s->npages) {
		size_t n = s->npages ? s->npages : 1;
		uint64_t **p;

		while (n <= page)
			n *= 2;
		p = realloc(s->pages, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + s->npages, 0, (n - s->npages) * sizeof(*p));
		s->pages = p;
		s->npages = n;
	}
	if (!s->pages[page]) {
		s->pages[page] = calloc(SP_IDSET_PAGE / 64, sizeof(uint64_t));
		if (!s->pages[page])
			return -ENOMEM;
	}
	w = &s->pages[page][bit / 64];
	if (*w & mask)
		return 0;
	*w |= mask;
	s->n++;
	return 1;
}

int sp_idset_has(const struct sp_idset *s, uint32_t id)
{
	size_t page = id / SP_IDSET_PAGE, bit = id % SP_IDSET_PAGE;

	return page < s->npages && s->pages[page] &&
	       (s->pages[page][bit / 64] >> (bit % 64) & 1);
}

void sp_idset_release(struct sp_idset *s)
{
	size_t i;

	for (i = 0; i < s->npages; i++)
		free(s->pages[i]);
	free(s->pages);
	memset(s, 0, sizeof(*s));
}
