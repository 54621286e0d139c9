/* SPDX-License-Identifier: MIT */
/*
 * dwslice.h: the DWARF of a file whose debug sections are compressed,
 * inflated only as far as the lookups need.
 *
 * Distributions ship debug files with every .debug_* section compressed
 * (SHF_COMPRESSED, zlib), and libdw inflates all of them when it opens
 * one: about 10 MB for libc, most of a short recording's symbolizing
 * time, to name a handful of addresses.  A slice instead copies the
 * sections into an image of its own (elf_memory), where each section has
 * its full size reserved but untouched, and libdw reads that:
 *
 *   - .debug_aranges (read whole, parsed here) says which unit holds an
 *     address;
 *   - .debug_info, .debug_abbrev and .debug_line are inflated from their
 *     start up to the end of what that unit uses (libdw reads the unit
 *     headers before it in order, so a prefix is what it needs), never
 *     moved, so the Dwarf handle stays valid as they grow;
 *   - the string, range and address sections are inflated whole (small);
 *   - location lists, frame tables and macros are left out.
 *
 * A unit whose abbreviations can point outside it (DW_FORM_ref_addr and
 * the like), an address no .debug_aranges entry covers, or a file without
 * a usable .debug_aranges, makes the slice inflate everything, which is
 * what libdw would have done.  Each section is followed by a NUL in the
 * image, so that a string libdw reads past a section's end (elfutils 0.188
 * does, in a damaged line table) ends there.  The inflated prefix is
 * checked by the deflate stream's structure only: its check sum is at the
 * end of the stream.
 *
 * Inflating is ISA-L's (igzip), not zlib's: the same streams, the same
 * checks, in about half the time, the most of it for the units at the end
 * of libc's .debug_info (clone3, which every thread's stack ends at, is
 * 4 MB into its 5.8).
 */
#ifndef SP_DWSLICE_H
#define SP_DWSLICE_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <gelf.h>

struct sp_dwslice;

/*
 * A slice of e's DWARF, or NULL when it would not help (its .debug_info is
 * not zlib-compressed) or cannot be made (a supplementary or type-unit
 * section, a 32-bit or foreign-endian file, a damaged stream, no memory):
 * open e with libdw instead.  e must outlive the slice, which owns its
 * Dwarf.
 */
struct sp_dwslice *sp_dwslice_open(Elf *e);
void sp_dwslice_free(struct sp_dwslice *s);

/* The Dwarf over the slice's image (owned by the slice). */
Dwarf *sp_dwslice_dwarf(struct sp_dwslice *s);

/*
 * Make the unit holding pc readable, its line table too when lines is
 * set, and set *die to the offset of its unit DIE.  Returns 1 the first
 * time for a unit, 0 after, -ENOENT when
 * .debug_aranges has no entry for pc (then call sp_dwslice_whole() and
 * look for it the slow way), -EIO when
 * the compressed data is damaged (nothing more will be read from it).
 */
int sp_dwslice_unit(struct sp_dwslice *s, uint64_t pc, int lines,
		    Dwarf_Off *die);

/*
 * Inflate everything: after it, any reading libdw does is covered.
 * Returns 0 or -EIO.
 */
int sp_dwslice_whole(struct sp_dwslice *s);

/* Bytes inflated so far and the total the sections hold uncompressed. */
void sp_dwslice_size(const struct sp_dwslice *s, size_t *inflated,
		     size_t *total);

#endif
