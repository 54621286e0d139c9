/* SPDX-License-Identifier: MIT */
/*
 * test-gopclntab.c: Go function tables of the three layouts, built here as
 * the Go linker lays them out, looked up; then cut short and damaged byte
 * by byte, which must give no answer or a sound one, never a bad read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "unit.h"

#define TEXT 0x401000ull

static uint8_t buf[4096];
static size_t len;

static size_t put(const void *p, size_t n)
{
	size_t at = len;

	memcpy(buf + len, p, n);
	len += n;
	return at;
}

static void put8(uint8_t v) { put(&v, 1); }
static void put32(uint32_t v) { put(&v, 4); }

static void set32(size_t at, uint32_t v) { memcpy(buf + at, &v, 4); }
static void set64(size_t at, uint64_t v) { memcpy(buf + at, &v, 8); }

static void uvarint(uint32_t v)
{
	while (v >= 0x80) {
		put8((uint8_t)(v | 0x80));
		v >>= 7;
	}
	put8((uint8_t)v);
}

/* One (value, up to pc offset) step of a pc-value table. */
static void step(int32_t *prev, int32_t val, uint32_t pcdelta)
{
	int32_t d = val - *prev;

	uvarint(d < 0 ? ((uint32_t)~d << 1) | 1 : (uint32_t)d << 1);
	uvarint(pcdelta);
	*prev = val;
}

/* A pc-value table of n (value, length) runs; its offset in pctab. */
static uint32_t pctable(size_t pctab, const int32_t *runs, int n)
{
	size_t at = len;
	int32_t prev = -1;
	int i;

	for (i = 0; i < n; i++)
		step(&prev, runs[2 * i], (uint32_t)runs[2 * i + 1]);
	put8(0);
	return (uint32_t)(at - pctab);
}

struct fn {
	const char *name;
	uint32_t start, end;	/* offsets from TEXT */
	uint8_t flag;
	uint32_t cu;
	int32_t sp[6], file[2], line[4];	/* runs */
	int nsp, nline;
};

static const struct fn fns[] = {
	{ "main.a", 0x00, 0x40, 0, 0,
	  { 0, 4, 24, 0x38, 0, 4 }, { 0, 0x40 }, { 10, 0x20, 12, 0x20 }, 3, 2 },
	{ "main.b", 0x40, 0x80, SP_GOFUNC_SPWRITE | SP_GOFUNC_ASM, 1,
	  { 8, 0x30 }, { 0, 0x30 }, { 5, 0x30 }, 1, 1 },
	{ "runtime.systemstack", 0x80, 0x90, SP_GOFUNC_SPWRITE | SP_GOFUNC_ASM,
	  0, { 0, 0x10 }, { 0, 0x10 }, { 7, 0x10 }, 1, 1 },
	{ "runtime.goexit", 0x90, 0xa0, SP_GOFUNC_TOPFRAME | SP_GOFUNC_ASM, 0,
	  { 0, 0x10 }, { 1, 0x10 }, { 3, 0x10 }, 1, 1 },
};

#define NFN 4

/*
 * A table of layout 116, 118 or 120; with pie, the words the loader
 * relocates are 0 in the bytes and their values in relocs (in the order
 * of their offsets).  Without pie, relocs may be NULL.
 */
static void build(unsigned layout, int pie, uint64_t *relocs, size_t *nrel)
{
	size_t hdr, names, cutab, filetab, pctab, ftab, funcs;
	uint32_t nameoff[NFN], sp[NFN], fl[NFN], ln[NFN], file_b;
	unsigned nw = layout == 116 ? 7 : 8, i;
	unsigned fsize = layout == 118 ? 40 : 44;

	len = 0;
	*nrel = 0;
	memset(buf, 0, sizeof(buf));
	put32(layout == 116 ? 0xfffffffa : layout == 118 ? 0xfffffff0 :
	      0xfffffff1);
	put8(0);
	put8(0);
	put8(1);
	put8(8);
	hdr = len;
	len += 8 * nw;
	names = put("", 1);
	for (i = 0; i < NFN; i++)
		nameoff[i] = (uint32_t)(put(fns[i].name, strlen(fns[i].name) + 1) - names);
	cutab = len;
	len += 3 * 4;
	filetab = put("a.go", 5);
	file_b = (uint32_t)(put("/src/b.s", 9) - filetab);
	set32(cutab, 0);
	set32(cutab + 4, file_b);
	set32(cutab + 8, UINT32_MAX);	/* a file the CU does not have */
	pctab = put("", 1);
	for (i = 0; i < NFN; i++) {
		sp[i] = pctable(pctab, fns[i].sp, fns[i].nsp);
		fl[i] = pctable(pctab, fns[i].file, 1);
		ln[i] = pctable(pctab, fns[i].line, fns[i].nline);
	}
	while (len % 8)
		put8(0);
	ftab = len;
	len += (NFN + 1) * (layout == 116 ? 16 : 8);
	funcs = len;
	for (i = 0; i <= NFN; i++) {
		uint32_t off = i < NFN ? fns[i].start : fns[NFN - 1].end;
		size_t fo = funcs + i * fsize - ftab;

		if (layout == 116) {
			size_t at = ftab + 16 * i;

			if (pie) {
				relocs[2 * *nrel] = at;
				relocs[2 * *nrel + 1] = TEXT + off;
				(*nrel)++;
			} else {
				set64(at, TEXT + off);
			}
			if (i < NFN)
				set64(at + 8, fo);
		} else {
			set32(ftab + 8 * i, off);
			if (i < NFN)
				set32(ftab + 8 * i + 4, (uint32_t)fo);
		}
	}
	for (i = 0; i < NFN; i++) {
		size_t f = len, base = layout == 116 ? 8 : 4;

		len += fsize;
		if (layout == 116) {
			if (pie) {
				relocs[2 * *nrel] = f;
				relocs[2 * *nrel + 1] = TEXT + fns[i].start;
				(*nrel)++;
			} else {
				set64(f, TEXT + fns[i].start);
			}
		} else {
			set32(f, fns[i].start);
		}
		set32(f + base, nameoff[i]);
		set32(f + base + 12, sp[i]);
		set32(f + base + 16, fl[i]);
		set32(f + base + 20, ln[i]);
		set32(f + base + 28, fns[i].cu);
		buf[f + (layout == 118 ? 36 : 40)] = 99;	/* funcID */
		buf[f + (layout == 118 ? 37 : 41)] = layout == 116 ? 0 : fns[i].flag;
	}
	set64(hdr, NFN);
	set64(hdr + 8, 2);
	if (layout != 116) {
		if (pie) {
			relocs[2 * *nrel] = hdr + 16;
			relocs[2 * *nrel + 1] = TEXT;
			(*nrel)++;
		} else {
			set64(hdr + 16, TEXT);
		}
		hdr += 8;
	}
	set64(hdr + 16, names);
	set64(hdr + 24, cutab);
	set64(hdr + 32, filetab);
	set64(hdr + 40, pctab);
	set64(hdr + 48, ftab);
}

static void check_layout(unsigned layout, int pie)
{
	uint64_t relocs[32];
	size_t nrel;
	struct sp_gopclntab *t;
	struct sp_gofunc f;
	const char *file;
	uint32_t line;
	int32_t sp;
	int err;

	build(layout, pie, relocs, &nrel);
	t = sp_gopclntab_new(buf, len, 0x4c0000, pie ? relocs : NULL, nrel,
			     &err);
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(sp_gopclntab_layout(t) == layout);
	CHECK(sp_gopclntab_nfunc(t) == NFN);
	CHECK(sp_gopclntab_go_version(t) == NULL);

	CHECK(sp_gopclntab_find(t, TEXT - 1, &f) == -ENOENT);
	CHECK(sp_gopclntab_find(t, TEXT + 0xa0, &f) == -ENOENT);
	CHECK(sp_gopclntab_find(t, TEXT, &f) == 0);
	CHECK_STR(f.name, "main.a");
	CHECK(f.entry == TEXT && f.end == TEXT + 0x40);
	CHECK(f.funcid == 99);
	CHECK(sp_gopclntab_pcsp(t, &f, TEXT + 3, &sp) == 0 && sp == 0);
	CHECK(sp_gopclntab_pcsp(t, &f, TEXT + 4, &sp) == 0 && sp == 24);
	CHECK(sp_gopclntab_pcsp(t, &f, TEXT + 0x3b, &sp) == 0 && sp == 24);
	CHECK(sp_gopclntab_pcsp(t, &f, TEXT + 0x3c, &sp) == 0 && sp == 0);
	CHECK(sp_gopclntab_line(t, &f, TEXT + 0x1f, &file, &line) == 0);
	CHECK_STR(file, "a.go");
	CHECK(line == 10);
	CHECK(sp_gopclntab_line(t, &f, TEXT + 0x20, &file, &line) == 0 &&
	      line == 12);
	CHECK(!sp_gofunc_is_top(t, &f) && !sp_gofunc_is_switch(t, &f));

	CHECK(sp_gopclntab_find(t, TEXT + 0x7f, &f) == 0);
	CHECK_STR(f.name, "main.b");
	CHECK(f.flag == (layout == 116 ? 0 : (SP_GOFUNC_SPWRITE | SP_GOFUNC_ASM)));
	CHECK(sp_gopclntab_pcsp(t, &f, TEXT + 0x6f, &sp) == 0 && sp == 8);
	/* past the end of its tables: padding */
	CHECK(sp_gopclntab_pcsp(t, &f, TEXT + 0x70, &sp) == -ENOENT);
	CHECK(sp_gopclntab_line(t, &f, TEXT + 0x40, &file, &line) == 0);
	CHECK_STR(file, "/src/b.s");
	CHECK(line == 5);

	CHECK(sp_gopclntab_find(t, TEXT + 0x80, &f) == 0);
	CHECK_STR(f.name, "runtime.systemstack");
	CHECK(sp_gofunc_is_switch(t, &f));
	CHECK(!sp_gofunc_is_top(t, &f));
	/* file 1 of CU 0 */
	CHECK(sp_gopclntab_find(t, TEXT + 0x90, &f) == 0);
	CHECK_STR(f.name, "runtime.goexit");
	CHECK(sp_gofunc_is_top(t, &f));
	CHECK(!sp_gofunc_is_switch(t, &f));
	CHECK(sp_gopclntab_line(t, &f, TEXT + 0x90, &file, &line) == 0);
	CHECK_STR(file, "/src/b.s");
	sp_gopclntab_free(t);
}

/* Every lookup over the text of a table, at a copy of exactly n bytes. */
static void poke(const uint8_t *bytes, size_t n, const uint64_t *relocs,
		 size_t nrel)
{
	uint8_t *copy = malloc(n ? n : 1);
	struct sp_gopclntab *t;
	uint64_t pc;
	int err;

	if (!copy)
		abort();
	memcpy(copy, bytes, n);
	t = sp_gopclntab_new(copy, n, 0x4c0000, relocs, nrel, &err);
	if (t) {
		for (pc = TEXT - 2; pc < TEXT + 0xa4; pc += 3) {
			struct sp_gofunc f;
			const char *file;
			uint32_t line;
			int32_t sp;

			if (sp_gopclntab_find(t, pc, &f))
				continue;
			CHECK(pc >= f.entry && pc < f.end);
			CHECK(f.name >= (const char *)copy &&
			      f.name + strlen(f.name) < (const char *)copy + n);
			if (sp_gopclntab_line(t, &f, pc, &file, &line) == 0)
				CHECK(file >= (const char *)copy &&
				      file + strlen(file) < (const char *)copy + n);
			sp_gopclntab_pcsp(t, &f, pc, &sp);
			sp_gofunc_is_top(t, &f);
			sp_gofunc_is_switch(t, &f);
		}
		sp_gopclntab_free(t);
	} else {
		CHECK(err == -EINVAL);
	}
	free(copy);
}

static void damage(unsigned layout, int pie)
{
	static const uint8_t flips[] = { 0x01, 0x80, 0xff };
	uint64_t relocs[32];
	uint8_t orig[sizeof(buf)];
	size_t nrel, n, i, k;
	int before = unit_fail;

	build(layout, pie, relocs, &nrel);
	n = len;
	memcpy(orig, buf, n);
	for (i = 0; i <= n; i++)
		poke(orig, i, pie ? relocs : NULL, nrel);
	for (i = 0; i < n; i++)
		for (k = 0; k < sizeof(flips); k++) {
			memcpy(buf, orig, n);
			buf[i] ^= flips[k];
			poke(buf, n, pie ? relocs : NULL, nrel);
		}
	/* a word of all ones where offsets and counts are */
	for (i = 8; i + 8 <= 80 && i + 8 <= n; i += 8) {
		memcpy(buf, orig, n);
		memset(buf + i, 0xff, 8);
		poke(buf, n, pie ? relocs : NULL, nrel);
	}
	CHECK(unit_fail == before);
}

int main(void)
{
	static const unsigned layouts[] = { 116, 118, 120 };
	uint8_t junk[64] = { 0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8 };
	struct sp_gopclntab *t;
	size_t nrel;
	unsigned i;
	int err, pie;

	for (i = 0; i < 3; i++)
		for (pie = 0; pie < 2; pie++) {
			check_layout(layouts[i], pie);
			damage(layouts[i], pie);
		}

	/* not a table: magic, header bytes, pointer size */
	CHECK(!sp_gopclntab_new(junk, 7, 0, NULL, 0, &err) && err == -EINVAL);
	CHECK(!sp_gopclntab_new(junk, sizeof(junk), 0, NULL, 0, &err));
	junk[0] = 0xfb;		/* Go 1.2-1.15 */
	CHECK(!sp_gopclntab_new(junk, sizeof(junk), 0, NULL, 0, &err));
	build(118, 0, NULL, &nrel);
	buf[7] = 4;
	CHECK(!sp_gopclntab_new(buf, len, 0, NULL, 0, &err));
	buf[7] = 8;
	buf[4] = 1;
	CHECK(!sp_gopclntab_new(buf, len, 0, NULL, 0, &err));
	buf[4] = 0;
	t = sp_gopclntab_new(buf, len, 0, NULL, 0, &err);
	CHECK(t != NULL);
	sp_gopclntab_free(t);
	sp_gopclntab_free(NULL);
	return unit_done("test-gopclntab");
}
