// SPDX-License-Identifier: MIT
/*
 * fuzz-jitdump.c: jitdump files (elf/jitdump.h) as the symbolizer and the
 * unwinder read them: the parse of the header and every record, then finds
 * at the 64-bit words of the input (where the records' code addresses
 * are), their neighbours and the last byte of each code found, and the
 * source line of each.  What a find returns must hold the address, name it
 * with a string of the dump, and point its lines and unwinding bytes at
 * memory it owns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/jitdump.h"
#include "fuzz.h"

#define MAX_WORDS 1024

/* Touch what c points at, so that a pointer outside the dump is caught. */
static void check_code(const struct sp_jit_code *c, uint64_t addr)
{
	const struct sp_jit_line *l;
	volatile uint8_t sink;
	size_t i;

	if (addr - c->addr >= c->size || !c->name)
		abort();
	(void)strlen(c->name);
	for (i = 0; i < c->nlines; i++) {
		if (i && c->lines[i].addr < c->lines[i - 1].addr)
			abort();
		if (c->lines[i].file)
			(void)strlen(c->lines[i].file);
	}
	l = sp_jit_code_line(c, addr);
	if (l && (l < c->lines || l >= c->lines + c->nlines || l->addr > addr))
		abort();
	if (c->unwind) {
		if (c->eh_frame_hdr_size > c->unwind_size)
			abort();
		if (c->unwind_size) {
			sink = c->unwind[0];
			sink = c->unwind[c->unwind_size - 1];
		}
		(void)sink;
	}
}

static void probe(const struct sp_jitdump *j, uint64_t addr)
{
	const struct sp_jit_code *c = sp_jitdump_find(j, addr), *d;
	uint64_t last;

	if (!c)
		return;
	check_code(c, addr);
	last = c->addr + c->size - 1;
	if ((d = sp_jitdump_find(j, last)))
		check_code(d, last);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_jitdump *j;
	size_t i, words;
	int err = 1;

	j = sp_jitdump_parse(data, size, &err);
	if (!j) {
		if (err != -EINVAL && err != -EPROTONOSUPPORT)
			abort();
		return 0;
	}
	if (err || sp_jitdump_parsed(j) > size)
		abort();
	(void)sp_jitdump_pid(j);
	(void)sp_jitdump_count(j);
	probe(j, 0);
	probe(j, UINT64_MAX);
	/* the 64-bit word at each byte: the records' addresses among them */
	words = size >= 8 ? size - 7 : 0;
	for (i = 0; i < words && i < MAX_WORDS; i++) {
		uint64_t w;

		memcpy(&w, data + i, 8);
		probe(j, w);
		probe(j, w - 1);
	}
	sp_jitdump_free(j);
	return 0;
}
