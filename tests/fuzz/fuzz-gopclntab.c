// SPDX-License-Identifier: MIT
/*
 * fuzz-gopclntab.c: Go's function table (elf/gopclntab.h) straight from
 * bytes, as sp-unwind steps Go frames and sp-symbolize names them: the
 * header and sub-table checks of sp_gopclntab_new(), then a walk over the
 * functions from the first entry the header gives (each function's end is
 * the next one's entry) and finds at pcs taken from the input, each
 * followed by the pcsp, file and line lookups at the function's entry,
 * middle and last byte.  An answer must hold its pc and point into the
 * table; a damaged table gives no answer, never a read outside it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "fuzz.h"

#define VADDR 0x4ce000ull	/* where a file would map the table */
#define MAX_WALK 256
#define MAX_PROBES 256

struct table {
	const uint8_t *data;
	size_t size;
};

static void check_str(const struct table *tb, const char *s)
{
	const uint8_t *p = (const uint8_t *)s;

	if (!s || p < tb->data || p >= tb->data + tb->size ||
	    !memchr(p, 0, (size_t)(tb->data + tb->size - p)))
		abort();
}

static void lookups(const struct table *tb, const struct sp_gopclntab *t,
		    const struct sp_gofunc *f, uint64_t pc)
{
	const char *file;
	uint32_t line;
	int32_t sp;
	int r;

	r = sp_gopclntab_pcsp(t, f, pc, &sp);
	if (r && r != -ENOENT && r != -EINVAL)
		abort();
	r = sp_gopclntab_line(t, f, pc, &file, &line);
	if (r && r != -ENOENT && r != -EINVAL)
		abort();
	if (!r) {
		check_str(tb, file);
		if (!line)
			abort();
	}
}

/* The function at pc, checked and looked into; 0, or -1 when none. */
static int probe(const struct table *tb, const struct sp_gopclntab *t,
		 uint64_t pc, struct sp_gofunc *f)
{
	int r = sp_gopclntab_find(t, pc, f);

	if (r) {
		if (r != -ENOENT && r != -EINVAL)
			abort();
		return -1;
	}
	if (pc < f->entry || pc >= f->end || f->off >= tb->size)
		abort();
	check_str(tb, f->name);
	(void)sp_gofunc_is_top(t, f);
	(void)sp_gofunc_is_switch(t, f);
	lookups(tb, t, f, f->entry);
	lookups(tb, t, f, pc);
	lookups(tb, t, f, f->entry + (f->end - f->entry) / 2);
	lookups(tb, t, f, f->end - 1);
	lookups(tb, t, f, f->end);
	return 0;
}

static uint64_t rd(const uint8_t *data, size_t size, uint64_t off, size_t n)
{
	uint64_t v = 0;

	if (off <= size && size - off >= n)
		memcpy(&v, data + off, n);
	return v;
}

/*
 * The entry of the first function as the header places it: the first
 * word of the functab (1.16), or the text start plus the first offset of
 * the functab (1.18 and later).
 */
static uint64_t first_pc(const uint8_t *data, size_t size, uint64_t *text)
{
	uint32_t magic = (uint32_t)rd(data, size, 0, 4);

	*text = 0;
	if (magic == 0xfffffffau)
		return rd(data, size, rd(data, size, 8 + 8 * 6, 8), 8);
	*text = rd(data, size, 8 + 8 * 2, 8);
	return *text + rd(data, size, rd(data, size, 8 + 8 * 7, 8), 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct table tb = { data, size };
	struct sp_gopclntab *t;
	struct sp_gofunc f;
	uint64_t pc, text, v;
	size_t i;
	int err = 0;

	t = sp_gopclntab_new(data, size, VADDR, NULL, 0, &err);
	if (!t) {
		if (err != -EINVAL)
			abort();
		return 0;
	}
	if (!sp_gopclntab_nfunc(t) || sp_gopclntab_go_version(t))
		abort();
	switch (sp_gopclntab_layout(t)) {
	case 116: case 118: case 120:
		break;
	default:
		abort();
	}

	/* every function in order, as far as the table holds together */
	pc = first_pc(data, size, &text);
	for (i = 0; i < MAX_WALK && i < sp_gopclntab_nfunc(t); i++) {
		if (probe(&tb, t, pc, &f) || f.end <= pc)
			break;
		pc = f.end;
	}
	probe(&tb, t, pc, &f);

	/* pcs the input holds, as words and as offsets from the text start */
	for (i = 0; i < MAX_PROBES && 8 * i + 8 <= size; i++) {
		memcpy(&v, data + 8 * i, 8);
		probe(&tb, t, v, &f);
		probe(&tb, t, text + (uint32_t)v, &f);
		probe(&tb, t, text + (uint32_t)(v >> 32), &f);
	}
	probe(&tb, t, 0, &f);
	probe(&tb, t, UINT64_MAX, &f);
	sp_gopclntab_free(t);
	return 0;
}
