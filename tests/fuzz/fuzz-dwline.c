// SPDX-License-Identifier: MIT
/*
 * fuzz-dwline.c: line tables of .debug_line (elf/dwline.h) as the
 * symbolizer reads them, every table of the section in turn:
 *
 *	input	= flags:u8 strlen:u16le strings section
 *	flags	bit 0: addresses of 4 bytes (else 8); bit 1: no DW_AT_comp_dir
 *	strings	what DW_FORM_line_strp and DW_FORM_strp point into
 *	section	.debug_line
 *
 * A table that reads is asked at the words of the section (where the
 * DW_LNE_set_address operands are) and next to them, and for its files:
 * every answer's file is a string (read whole) or NULL, and reading the
 * table again gives the same rows and files.
 */
#include <stdlib.h>
#include <string.h>

#include "elf/dwline.h"
#include "fuzz.h"

#define MAX_TABLES 16
#define MAX_PROBES 256

static void probe(const struct sp_dwline *t, uint64_t pc)
{
	const char *file = NULL;
	uint32_t line;

	if (!sp_dwline_find(t, pc, &file, &line) && file && strlen(file) > (1u << 30))
		abort();
}

static void ask(const struct sp_dwline *t, const uint8_t *sec, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i + 8 <= len && n < MAX_PROBES; i += 8, n++) {
		uint64_t v;

		memcpy(&v, sec + i, 8);
		probe(t, v);
		probe(t, v - 1);
		probe(t, v + 1);
	}
	for (i = 0; i < 16; i++)
		probe(t, i);
	probe(t, UINT64_MAX);
	for (i = 0; i < sp_dwline_files(t) + 2; i++) {
		const char *f = sp_dwline_file(t, i);

		if ((i < sp_dwline_files(t)) != (f != NULL) ||
		    (f && strlen(f) > (1u << 30)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_dwline_secs s = { 0 };
	const char *comp_dir, *err;
	unsigned addr_size, k;
	uint64_t off = 0;
	size_t slen;

	if (size < 3)
		return 0;
	addr_size = data[0] & 1 ? 4 : 8;
	comp_dir = data[0] & 2 ? NULL : "/build/dir";
	slen = (size_t)data[1] | (size_t)data[2] << 8;
	if (slen > size - 3)
		slen = size - 3;
	if (slen) {
		s.line_str = s.str = data + 3;
		s.line_str_len = s.str_len = slen;
	}
	s.line = data + 3 + slen;
	s.line_len = size - 3 - slen;
	if (!s.line_len)
		s.line = NULL;
	for (k = 0; k < MAX_TABLES && off < s.line_len; k++) {
		struct sp_dwline *t = sp_dwline_read(&s, off, addr_size,
						     comp_dir, &err), *again;
		uint64_t len;
		uint32_t l32;

		if (t) {
			ask(t, s.line, s.line_len);
			again = sp_dwline_read(&s, off, addr_size, comp_dir, &err);
			if (!again || sp_dwline_rows(again) != sp_dwline_rows(t) ||
			    sp_dwline_files(again) != sp_dwline_files(t))
				abort();
			sp_dwline_free(again);
			sp_dwline_free(t);
		} else if (!err) {
			abort();	/* out of memory is not what fuzzing finds */
		}
		/* the next table */
		if (s.line_len - off < 4)
			break;
		memcpy(&l32, s.line + off, 4);
		len = l32;
		off += 4;
		if (l32 == 0xffffffff) {
			if (s.line_len - off < 8)
				break;
			memcpy(&len, s.line + off, 8);
			off += 8;
		}
		if (len > s.line_len - off)
			break;
		off += len;
	}
	return 0;
}
