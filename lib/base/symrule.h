/* SPDX-License-Identifier: MIT */
/*
 * symrule.h: which symbol holds the address of a frame, one rule for every
 * symbol source (kernel, ELF, JIT).
 *
 * The leaf frame's address is exact (precise): the symbol holding it.  Any
 * other frame's address is a return address, just after its call, and the
 * call may be the last instruction of its function, so the caller is the
 * symbol holding addr - 1.  Not every address in a caller position is one:
 * a kernel callchain lists an interrupted IP, V8 pushes a builtin's entry
 * as a return address.  At a function's first byte, addr - 1 falls into the
 * padding before it (the kernel's __pfx_ symbols) or into a gap between
 * symbols; then the symbol holding addr itself is meant.  So a return
 * address is named by addr - 1 when a symbol holds it, else by addr.
 *
 * Padding symbols never answer: a table drops them once they have bounded
 * their neighbours (sp_sym_is_padding()).
 */
#ifndef SP_SYMRULE_H
#define SP_SYMRULE_H

#include <stdint.h>
#include <string.h>

/*
 * The symbol of table holding addr, or NULL.  table is whatever the caller
 * passed to sp_sym_pick(): a table, or a search over several that notes
 * which one answered.
 */
typedef const void *sp_sym_find_fn(void *table, uint64_t addr);

/*
 * The symbol naming a frame at addr by the rule above, or NULL; *at (may be
 * NULL) gets the address that was matched, which is also where lines and
 * inline chains are to be looked up: addr - 1 for a return address that
 * matched nothing.
 */
static inline const void *sp_sym_pick(sp_sym_find_fn *find, void *table,
				      uint64_t addr, int precise, uint64_t *at)
{
	const void *s = NULL;

	if (at)
		*at = precise || !addr ? addr : addr - 1;
	if (!precise && addr && (s = find(table, addr - 1)))
		return s;
	if ((s = find(table, addr)) && at)
		*at = addr;
	return s;
}

/*
 * Whether name is padding in front of a function rather than a function:
 * the kernel's __pfx_ (call padding) and __cfi_ (kCFI preamble) symbols.
 */
static inline int sp_sym_is_padding(const char *name)
{
	/* most names fail at their first byte: no call for them */
	return name[0] == '_' && name[1] == '_' &&
	       (!strncmp(name + 2, "pfx_", 4) || !strncmp(name + 2, "cfi_", 4));
}

#endif
