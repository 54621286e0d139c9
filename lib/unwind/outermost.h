/* SPDX-License-Identifier: MIT */
/*
 * outermost.h: whether the unwind information of a file says that a frame
 * is the outermost one of its stack (its return address is undefined).
 */
#ifndef SP_OUTERMOST_H
#define SP_OUTERMOST_H

#include <stdint.h>
#include <stdlib.h>

#include "base/hashtab.h"
#include "elf/elfcache.h"

enum {
	SP_OUTERMOST_NO = 0,	/* the CFI has a rule for the return address */
	SP_OUTERMOST_YES = 1,	/* it says the return address is undefined */
	SP_OUTERMOST_NOCFI = 2,	/* no CFI covers the address */
};

/*
 * Ask the CFI of e at file address vaddr (for a return address, the call
 * before it: address - 1).  Answers are kept in cache (the caller's, empty
 * at first, released with sp_u64map_release()), so each address of each
 * file is looked up once.  Returns an SP_OUTERMOST_* value.
 */
int sp_outermost(struct sp_u64map *cache, struct sp_elf *e, uint64_t vaddr);

#endif
