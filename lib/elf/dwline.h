/* SPDX-License-Identifier: MIT */
/*
 * dwline.h: the line table of one compilation unit, read from .debug_line
 * by stackpulse itself.
 *
 * libdw reads a unit's whole line table into a linked list of 60-byte
 * rows, one allocation per row, and sorts it: for the interpreter loop of
 * CPython (24,000 rows) that is 10 ms, more than the rest of naming a
 * short recording's addresses.  Here the line program runs once into a
 * flat array of rows (address, file, line), sorted only when it is not
 * already in order, and the file table is kept for the call sites of
 * inlined functions.
 *
 * Answers are libdw's, row for row (tests/unit/test-dwline.c compares
 * them): versions 2 to 5 of the header, rows sorted by address with an
 * end of sequence before a row at the same address and program order
 * after that, the last row at or below an address answering for it unless
 * it ends a sequence; file 0 of a version 2-4 table is "???"; a relative
 * name is joined to its directory with '/' (to nothing when a version 2-4
 * table's directory 0 has no DW_AT_comp_dir), an absolute one is kept.
 */
#ifndef SP_DWLINE_H
#define SP_DWLINE_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

/* The sections a line table reads (a NULL one is empty). */
struct sp_dwline_secs {
	const uint8_t *line, *line_str, *str;
	size_t line_len, line_str_len, str_len;
};

struct sp_dwline;

/*
 * Find the sections in e, the ELF a Dwarf reads (dwarf_getelf(): libdw
 * has inflated compressed ones there by then, or a slice has made its
 * image).  Returns 0, or -1 when there is no plain .debug_line (none, or
 * still compressed): then libdw is to read the lines.
 */
int sp_dwline_sections(Elf *e, struct sp_dwline_secs *s);

/*
 * Read the line table at offset off of .debug_line for a unit with
 * addresses of addr_size bytes (4 or 8) compiled in comp_dir (NULL if the
 * unit has none).  Returns NULL when the table is damaged or uses what is
 * not read here (a string form other than string, strp and line_strp), with
 * *err saying what (a static string), or when memory ran out (*err NULL).
 */
struct sp_dwline *sp_dwline_read(const struct sp_dwline_secs *s, uint64_t off,
				 unsigned addr_size, const char *comp_dir,
				 const char **err);
void sp_dwline_free(struct sp_dwline *t);

/*
 * The row that holds pc: its file (NULL when its index is not in the file
 * table) and line (0 when not positive or too large).  Returns 0, or -1
 * when no row does (pc before the first, or in a gap after a sequence).
 */
int sp_dwline_find(const struct sp_dwline *t, uint64_t pc, const char **file,
		   uint32_t *line);

/* File idx of the file table (DW_AT_call_file numbers), NULL if none. */
const char *sp_dwline_file(const struct sp_dwline *t, uint64_t idx);

/* Rows and files held (for tests). */
size_t sp_dwline_rows(const struct sp_dwline *t);
size_t sp_dwline_files(const struct sp_dwline *t);

#endif
