/* SPDX-License-Identifier: MIT */
/*
 * dwarfinfo.h: source lines and inline chains of a module from its DWARF.
 *
 * One struct sp_dwarf per ELF that holds .debug_info (the file itself or
 * its separate debug file), opened once.  On first use it indexes the
 * address ranges of every compilation unit into one sorted array, so a
 * lookup is a binary search to the CU, then the line table of that CU
 * (read once, by dwline.h; by libdw when that cannot), searched by
 * address, and the scopes holding the address.  Callers cache results per
 * address; nothing here runs per sample.
 */
#ifndef SP_DWARFINFO_H
#define SP_DWARFINFO_H

#include <stdint.h>
#include <gelf.h>

struct sp_dwarf;

/* One function of an address's inline chain. */
struct sp_src_frame {
	const char *function;	/* linkage name if any (mangled), else name */
	const char *file;	/* source file, NULL if unknown */
	uint32_t line;		/* 0 if unknown */
	uint32_t decl_line;	/* the function's own first line, 0 if unknown */
	int inlined;		/* an inlined instance, not the real frame */
};

#define SP_DWARF_INLINES 0x1	/* expand inline chains */
#define SP_DWARF_LINES	 0x2	/* fill file and line */

/*
 * Returns the DWARF of e (not owned; it must outlive the result), NULL
 * when e has no DWARF or memory ran out.
 */
struct sp_dwarf *sp_dwarf_open(Elf *e);
void sp_dwarf_free(struct sp_dwarf *d);

/*
 * Resolve file vaddr pc into at most max frames, innermost first: the
 * inlined functions (with SP_DWARF_INLINES), then the function that holds
 * them; each with the file and line being executed in it (the call site,
 * for all but the innermost).  Strings belong to the sp_dwarf.  Returns the
 * number of frames, 0 when no CU covers pc.
 */
int sp_dwarf_lookup(struct sp_dwarf *d, uint64_t pc, unsigned flags,
		    struct sp_src_frame *out, unsigned max);

/* Compilation units indexed (0 before the first lookup). */
unsigned sp_dwarf_units(const struct sp_dwarf *d);

/*
 * Of compressed debug sections: the bytes inflated so far and what they
 * hold uncompressed (0 and 0 when libdw read the file by itself).
 */
void sp_dwarf_inflated(const struct sp_dwarf *d, size_t *done, size_t *total);

#endif
