/* SPDX-License-Identifier: MIT */
/*
 * outermost.c: does the code say that a stack ends at this frame?
 *
 * libunwind stops for several reasons that look alike from outside (the
 * return address is undefined, a frame-pointer chain met a zero, a return
 * address read as zero), and only the first is a proof.  glibc's _start and
 * its thread start (clone, clone3) say in their CFI that the caller's
 * return address is undefined: there is no caller.  That rule, read with
 * libdw from the file's .eh_frame, is what makes a stack complete.
 */
#include "outermost.h"

/* Cached answers are kept +1, so that 0 means "not asked yet". */
static int ask(struct sp_elf *e, uint64_t vaddr)
{
	Dwarf_CFI *cfi = sp_elf_cfi(e);
	Dwarf_Frame *frame = NULL;
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	int ra, r = SP_OUTERMOST_NOCFI;

	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &frame) || !frame)
		return SP_OUTERMOST_NOCFI;
	ra = dwarf_frame_info(frame, NULL, NULL, NULL);
	if (ra >= 0 && dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) == 0)
		/* libdw: no operations at ops_mem is the undefined rule */
		r = nops == 0 && ops == ops_mem ? SP_OUTERMOST_YES :
		    SP_OUTERMOST_NO;
	free(frame);
	return r;
}

int sp_outermost(struct sp_u64map *cache, struct sp_elf *e, uint64_t vaddr)
{
	uint64_t key = sp_hash_u64((uint64_t)(uintptr_t)e) ^ vaddr;
	struct sp_u64slot *slot = sp_u64map_find(cache, key);
	int r;

	/* a slot holds the file it was asked for: a colliding key asks again */
	if (slot && slot->val >> 2 == (uint64_t)(uintptr_t)e >> 2 &&
	    (slot->val & 3))
		return (int)(slot->val & 3) - 1;
	r = ask(e, vaddr);
	slot = sp_u64map_get(cache, key, NULL);
	if (slot)
		slot->val = ((uint64_t)(uintptr_t)e & ~3ull) | (uint64_t)(r + 1);
	return r;
}
