/* SPDX-License-Identifier: MIT */
/*
 * idset.h: a set of 32-bit IDs, as a bitmap in pages made on first use.
 *
 * The recorder counts the distinct thread and process IDs it saw.  A hash
 * table of every ID ever seen grows with each short-lived process for as
 * long as a recording lasts; a bit per ID costs at most the ID space the
 * kernel hands out (4 Mi IDs at most: 512 KiB), however many processes
 * come and go.
 */
#ifndef SP_IDSET_H
#define SP_IDSET_H

#include <stddef.h>
#include <stdint.h>

struct sp_idset {
	uint64_t **pages;	/* SP_IDSET_PAGE IDs each; NULL: none yet */
	size_t npages;
	uint64_t n;		/* IDs in the set */
};

#define SP_IDSET_PAGE	32768u	/* IDs a page holds: 4 KiB of bits */

/* Add id.  Returns 1 when it is new, 0 when it was in the set, -ENOMEM. */
int sp_idset_add(struct sp_idset *s, uint32_t id);

/* Whether id is in the set. */
int sp_idset_has(const struct sp_idset *s, uint32_t id);

/* Free the pages; the set is empty again after. */
void sp_idset_release(struct sp_idset *s);

#endif
