/* SPDX-License-Identifier: MIT */
/*
 * symtab.h: the function symbols of an ELF symbol table (.symtab or
 * .dynsym, of a file, a separate debug file or MiniDebugInfo), sorted for
 * lookups by address, with one ranking of aliases wherever they come from.
 *
 * Several names often share an address (getppid and __GI___getppid, a C++
 * constructor's C1 and C2).  One wins, by: binding (global, then weak, then
 * local: the name a program calls, not the library's internal alias), then
 * the larger size (a sized symbol over an unsized one), then the bytewise
 * smallest name, so the choice is the same on every run.  Synthetic symbols
 * (the PLT stubs of plt.h) rank after all of these: a name the file gives
 * an address wins over one made for it.  Padding symbols (symrule.h) are
 * left out.
 *
 * A sized symbol holds its size and no more.  An unsized symbol (hand-written
 * assembly, crti.o's _init) holds up to the next symbol, at most 4 KiB, and
 * never beyond the end of its own section: _init in .init does not reach
 * into the .plt that follows it.
 *
 * A table read from a file is ranked where it is looked up: one pass over
 * the symbols groups them by address, and a group is sorted and ranked
 * when a lookup first falls into it (node's 110,000 symbols for a
 * recording's few dozen addresses).  So a lookup may write to the table:
 * one table is not for two threads at once.
 */
#ifndef SP_SYMTAB_H
#define SP_SYMTAB_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

#define SP_SYM_UNSIZED_SPAN 4096	/* what an unsized symbol holds at most */

/* sp_sym flags */
#define SP_SYM_SYNTH	0x1	/* made, not read; origin: of its name */
#define SP_SYM_PLT	0x2	/* a PLT stub named "TARGET@plt" (plt.h) */

struct sp_sym {
	uint64_t start, size;	/* file virtual address; size 0: unknown */
	const char *name;	/* not owned: the ELF's string table, or the
				   names of the file's PLT (plt.h) */
	uint8_t rank;		/* of aliases: 0 global, 1 weak, 2 local,
				   3 synthetic */
	uint8_t origin;		/* SP_SYM_SYNTH: an enum sp_frame_origin */
	uint8_t flags;		/* SP_SYM_* */
	uint32_t span;		/* unsized: bytes it holds at most (to its
				   section's end); 0: SP_SYM_UNSIZED_SPAN */
};

struct sp_symtab;

/*
 * The function symbols of the first section of type (SHT_SYMTAB or
 * SHT_DYNSYM) of e.  Returns NULL when there are none or memory ran out;
 * the names point into e, which must outlive the table.
 */
struct sp_symtab *sp_symtab_read(Elf *e, GElf_Word type);

/*
 * A table of n symbols copied from v, ranked as above (for symbols that
 * come from elsewhere, and for tests).  NULL when out of memory.
 */
struct sp_symtab *sp_symtab_from(const struct sp_sym *v, size_t n);

/*
 * Adds n symbols copied from v to t and ranks them with the others (the
 * names must outlive t).  Returns 0, or -ENOMEM with t unchanged.
 */
int sp_symtab_add(struct sp_symtab *t, const struct sp_sym *v, size_t n);

/* The symbol starting exactly at vaddr, NULL if none (t may be NULL). */
const struct sp_sym *sp_symtab_at(const struct sp_symtab *t, uint64_t vaddr);

void sp_symtab_free(struct sp_symtab *t);

/* Number of symbols after ranking. */
size_t sp_symtab_count(const struct sp_symtab *t);

/* The symbol holding vaddr, NULL if none (t may be NULL). */
const struct sp_sym *sp_symtab_find(const struct sp_symtab *t, uint64_t vaddr);

/*
 * The symbol naming a frame at vaddr (precise: a leaf's exact address, else
 * a return address) by the rule of symrule.h; *at gets the address matched.
 */
const struct sp_sym *sp_symtab_lookup(const struct sp_symtab *t,
				      uint64_t vaddr, int precise,
				      uint64_t *at);

#endif
