/* SPDX-License-Identifier: MIT */
/*
 * test-symrule.c: which symbol names a frame, the same for kernel, ELF and
 * perf map symbols: an exact address, a return address at a function's
 * first byte (after padding, after a gap), at the byte after its last,
 * inside padding, in a gap; the ranking of aliases; and the recorder's
 * KSYM capture answering as the whole kallsyms table does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/symtab.h"
#include "os/kallsyms.h"
#include "os/perfmap.h"
#include "unit.h"

static char path[] = "/tmp/test-symrule.XXXXXX";

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81d7d380 t read_null\n"
	"ffffffff81d7d390 t __pfx_write_null\n"
	"ffffffff81d7d3a0 t write_null\n"
	"ffffffff81d7d3a0 T z_global_alias\n"
	"ffffffff81d7d3b0 t __pfx_read_iter_null\n"
	"ffffffff81d7d3c0 t read_iter_null\n"
	"ffffffff81d7d3c0 W b_weak_alias\n"
	"ffffffff81d7d3d0 T a_sorts_first\n"
	"ffffffff81d7d3d0 T b_sorts_second\n"
	"ffffffff81d7d3e0 D some_data\n"
	"ffffffff81d7d3f0 t __cfi_next\n"
	"ffffffff81d7d400 t next\n"
	"ffffffffc0201000 t nvme_irq\t[nvme]\n";

static const char *kname(struct sp_ksyms *k, uint64_t addr, int precise)
{
	const struct sp_ksym *s = sp_ksyms_lookup(k, addr, precise);

	return s ? s->name : "(none)";
}

static struct sp_ksyms *load(const char *text)
{
	struct sp_ksyms *k = sp_ksyms_new();
	FILE *f = fopen(path, "w");

	CHECK(k && f);
	fputs(text, f);
	fclose(f);
	CHECK(sp_ksyms_load(k, path) == 0);
	return k;
}

static void test_kallsyms(void)
{
	struct sp_ksyms *k = load(kallsyms);
	const struct sp_ksym *s;
	char name[64];

	/* padding and data are not symbols: 10 names at 7 addresses */
	CHECK(sp_ksyms_count(k) == 7);
	/* aliases: global over local, weak over local, then the smaller name */
	CHECK_STR(kname(k, 0xffffffff81d7d3a0, 1), "z_global_alias");
	CHECK_STR(kname(k, 0xffffffff81d7d3c0, 1), "b_weak_alias");
	CHECK_STR(kname(k, 0xffffffff81d7d3d0, 1), "a_sorts_first");
	/* an exact address at a first byte */
	CHECK_STR(kname(k, 0xffffffff81d7d380, 1), "read_null");
	/* a return address at a first byte after __pfx_ padding: that function */
	CHECK_STR(kname(k, 0xffffffff81d7d3a0, 0), "z_global_alias");
	CHECK_STR(kname(k, 0xffffffff81d7d400, 0), "next");	/* after __cfi_ */
	/* ... after a function with no padding: the one before */
	CHECK_STR(kname(k, 0xffffffff81d7d390, 0), "read_null");
	/* the byte after the last one of a function: still that function */
	CHECK_STR(kname(k, 0xffffffff81d7d3b0, 0), "z_global_alias");
	/* inside padding: nothing, exact or not */
	CHECK_STR(kname(k, 0xffffffff81d7d3b4, 0), "(none)");
	CHECK_STR(kname(k, 0xffffffff81d7d3b4, 1), "(none)");
	CHECK_STR(kname(k, 0xffffffff81d7d395, 1), "(none)");
	/* a function bounded by data that is not text: up to it */
	CHECK_STR(kname(k, 0xffffffff81d7d3df, 1), "a_sorts_first");
	/* before the first symbol */
	CHECK_STR(kname(k, 0xffffffff80000000, 1), "(none)");
	/* a module's symbol, and the last one runs on */
	s = sp_ksyms_lookup(k, 0xffffffffc0209999, 1);
	CHECK(s && !strcmp(s->name, "nvme_irq") && s->module &&
	      !strcmp(s->module, "[nvme]") && s->size == 0);
	CHECK(sp_ksym_record_name(s, name, sizeof(name)) == 15);
	CHECK_STR(name, "nvme_irq [nvme]");
	/* cut: what fits; no room at all: nothing */
	CHECK(sp_ksym_record_name(s, name, 5) == 4);
	CHECK_STR(name, "nvme");
	CHECK(sp_ksym_record_name(s, name, 0) == 0);
	/* sizes run to the next address listed, padding included */
	s = sp_ksyms_lookup(k, 0xffffffff81d7d3a0, 1);
	CHECK(s && s->size == 0x10 && !s->module);
	sp_ksyms_free(k);
}

/* The lines of text in reverse order, or with neighbours swapped in pairs. */
static char *reorder(const char *text, int reverse)
{
	size_t len = strlen(text), n = 0, i;
	char *copy = strdup(text), *out = malloc(len + 1), *p, *lines[64];

	CHECK(copy && out);
	for (p = strtok(copy, "\n"); p && n < 64; p = strtok(NULL, "\n"))
		lines[n++] = p;
	out[0] = 0;
	for (i = 0; i < n; i++) {
		size_t j = reverse ? n - 1 - i : (i ^ 1) < n ? i ^ 1 : i;

		strcat(out, lines[j]);
		strcat(out, "\n");
	}
	free(copy);
	return out;
}

/*
 * /proc/kallsyms comes almost sorted, and is sorted with few moves; in any
 * other order the table is the same.
 */
static void test_kallsyms_order(void)
{
	static const uint64_t addrs[] = {
		0xffffffff81000000, 0xffffffff81d7d380, 0xffffffff81d7d390,
		0xffffffff81d7d395, 0xffffffff81d7d3a0, 0xffffffff81d7d3b0,
		0xffffffff81d7d3b4, 0xffffffff81d7d3c0, 0xffffffff81d7d3c4,
		0xffffffff81d7d3d0, 0xffffffff81d7d3df, 0xffffffff81d7d400,
		0xffffffffc0201000, 0xffffffffc0209999, 0xffffffff80000000,
	};
	struct sp_ksyms *want = load(kallsyms), *k;
	const struct sp_ksym *a, *b;
	int reverse, precise, same;
	size_t i;
	char *text;

	for (reverse = 0; reverse < 2; reverse++) {
		text = reorder(kallsyms, reverse);
		CHECK(strcmp(text, kallsyms) != 0);
		k = load(text);
		CHECK(sp_ksyms_count(k) == sp_ksyms_count(want));
		same = 1;
		for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++)
			for (precise = 0; precise < 2; precise++) {
				a = sp_ksyms_lookup(want, addrs[i], precise);
				b = sp_ksyms_lookup(k, addrs[i], precise);
				if (!a || !b)
					same &= !a && !b;
				else
					same &= a->start == b->start &&
						a->size == b->size &&
						!strcmp(a->name, b->name);
			}
		CHECK(same);
		sp_ksyms_free(k);
		free(text);
	}
	sp_ksyms_free(want);

	/* 300 symbols, last first: too far from sorted to sort by insertion */
	text = malloc(300 * 64);
	CHECK(text != NULL);
	text[0] = 0;
	for (i = 300; i-- > 0;)
		sprintf(text + strlen(text), "%" PRIx64 " t %sf%zu\n",
			0xffffffff81000000 + 0x40 * (i / 2) + (i % 2 ? 0x30 : 0),
			i % 2 ? "__pfx_" : "", i);
	k = load(text);
	CHECK(sp_ksyms_count(k) == 150);
	same = 1;
	for (i = 0; i < 300; i += 2) {
		char fname[16];

		snprintf(fname, sizeof(fname), "f%zu", i);
		a = sp_ksyms_lookup(k, 0xffffffff81000000 + 0x40 * (i / 2) + 8, 1);
		/* each bounded by the padding of the next, the last by its own */
		same &= a && !strcmp(a->name, fname) && a->size == 0x30;
	}
	CHECK(same);
	sp_ksyms_free(k);
	free(text);
}

/*
 * The recorder writes a KSYM record of what the full table answers for
 * each kernel frame; the symbolizer reading only those records must give
 * every one of those frames the same name.
 */
static void test_capture_agrees(void)
{
	static const struct { uint64_t addr; int precise; } frames[] = {
		{ 0xffffffff81d7d3a0, 1 }, { 0xffffffff81d7d3a0, 0 },
		{ 0xffffffff81d7d3c4, 0 }, { 0xffffffff81d7d3d0, 0 },
		{ 0xffffffff81d7d400, 0 }, { 0xffffffff81d7d390, 0 },
		{ 0xffffffff81d7d3b0, 0 }, { 0xffffffffc0201010, 0 },
		{ 0xffffffff81000004, 0 },
	};
	struct sp_ksyms *full = load(kallsyms), *cap = sp_ksyms_new();
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		const struct sp_ksym *s = sp_ksyms_lookup(full, frames[i].addr,
							  frames[i].precise);

		CHECK(s != NULL);
		if (!s)
			continue;
		sp_ksym_record_name(s, name, sizeof(name));
		CHECK(sp_ksyms_add_record(cap, s->start, s->size, name) == 0);
	}
	for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		const struct sp_ksym *a = sp_ksyms_lookup(full, frames[i].addr,
							  frames[i].precise);
		const struct sp_ksym *b = sp_ksyms_lookup(cap, frames[i].addr,
							  frames[i].precise);

		CHECK(a && b && !strcmp(a->name, b->name) &&
		      !strcmp(a->module ? a->module : "", b->module ? b->module : ""));
	}
	sp_ksyms_free(full);
	sp_ksyms_free(cap);
}

static void test_kallsyms_hidden(void)
{
	struct sp_ksyms *k = load("0000000000000000 T _stext\n"
				  "0000000000000000 t write_null\n");

	/* kptr_restrict: every address reads 0, nothing can be named */
	CHECK(sp_ksyms_count(k) == 0);
	CHECK(sp_ksyms_lookup(k, 0, 1) == NULL);
	sp_ksyms_free(k);
	k = sp_ksyms_new();
	CHECK(sp_ksyms_load(k, "/nonexistent/kallsyms") < 0);
	CHECK(sp_ksyms_count(k) == 0);
	sp_ksyms_free(k);
}

/*
 * Candidates added to a ranked table (PLT stubs to a symbol table) give
 * the table that ranking them all together gives: random aliases, ranks,
 * sizes and names at a few shared addresses.
 */
static void test_symtab_add(void)
{
	static const char *names[] = { "a", "_a", "__a", "b", "__b", "c_long",
				       "x", "_x", "" };
	struct sp_sym v[200];
	int round, i, same;

	for (round = 0; round < 200; round++) {
		size_t n = 1 + unit_rand() % 200, cut = unit_rand() % (n + 1);
		struct sp_symtab *whole, *parts;
		uint64_t a;

		for (i = 0; i < (int)n; i++)
			v[i] = (struct sp_sym){ .start = 0x1000 + 0x10 * (unit_rand() % 40),
				.size = unit_rand() % 3 ? 0 : 1 + unit_rand() % 0x30,
				.name = names[unit_rand() % 9],
				.rank = (uint8_t)(unit_rand() % 4),
				.span = (uint32_t)(unit_rand() % 2 ? 0 : 8) };
		whole = sp_symtab_from(v, n);
		parts = sp_symtab_from(v, cut);
		if (!parts) {
			/* nothing wanted in the first part: all of it from the rest */
			parts = sp_symtab_from(v + cut, n - cut);
		} else {
			CHECK(sp_symtab_add(parts, v + cut, n - cut) == 0);
		}
		CHECK(sp_symtab_count(whole) == sp_symtab_count(parts));
		same = 1;
		for (a = 0x1000; a < 0x1000 + 0x10 * 40; a += 0x10) {
			const struct sp_sym *x = sp_symtab_at(whole, a);
			const struct sp_sym *y = sp_symtab_at(parts, a);

			if (!x != !y || (x && (x->name != y->name ||
					       x->size != y->size ||
					       x->rank != y->rank ||
					       x->span != y->span)))
				same = 0;
		}
		CHECK(same);
		sp_symtab_free(whole);
		sp_symtab_free(parts);
	}
}

static const char *ename(const struct sp_symtab *t, uint64_t addr, int precise,
			 uint64_t *at)
{
	const struct sp_sym *s = sp_symtab_lookup(t, addr, precise, at);

	return s ? s->name : "(none)";
}

static void test_elf_symtab(void)
{
	const struct sp_sym v[] = {
		{ 0x1000, 0x10, "f", 2 },
		{ 0x1000, 0x10, "f_global", 0 },
		{ 0x1000, 0x0, "f_unsized", 0 },
		{ 0x1018, 0x8, "__pfx_g", 2 },
		{ 0x1020, 0x10, "g", 2 },
		{ 0x1030, 0x10, "h", 1 },
		{ 0x1030, 0x10, "__GI_h", 2 },
		{ 0x2000, 0x0, "unsized", 0 },
	};
	struct sp_symtab *t = sp_symtab_from(v, sizeof(v) / sizeof(v[0]));
	uint64_t at;

	CHECK(t && sp_symtab_count(t) == 4);
	/* the global sized alias; weak over local */
	CHECK_STR(ename(t, 0x1000, 1, &at), "f_global");
	CHECK(at == 0x1000);
	CHECK_STR(ename(t, 0x1030, 1, &at), "h");
	/* a return address after a call at a function's last byte */
	CHECK_STR(ename(t, 0x1010, 0, &at), "f_global");
	CHECK(at == 0x100f);
	/* at a first byte after a gap or padding: that function */
	CHECK_STR(ename(t, 0x1020, 0, &at), "g");
	CHECK(at == 0x1020);
	/* at a first byte right after another function: the one before */
	CHECK_STR(ename(t, 0x1030, 0, &at), "g");
	CHECK(at == 0x102f);
	/* in a gap: none, and lines are looked up at address - 1 */
	CHECK_STR(ename(t, 0x1014, 0, &at), "(none)");
	CHECK(at == 0x1013);
	CHECK_STR(ename(t, 0x101c, 1, &at), "(none)");
	CHECK(at == 0x101c);
	/* an unsized symbol holds up to 4 KiB */
	CHECK_STR(ename(t, 0x2fff, 1, &at), "unsized");
	CHECK_STR(ename(t, 0x3000, 1, &at), "(none)");
	sp_symtab_free(t);
}

static const char *pname(const struct sp_perfmap *m, uint64_t addr, int precise)
{
	const struct sp_pmsym *s = sp_perfmap_lookup(m, addr, precise);

	return s ? s->name : "(none)";
}

static void test_perfmap(void)
{
	static const char text[] =
		"1000 10 a\n"
		"1010 10 b\n"
		"not a line\n"
		"2000 10 c\n"
		"1004 4 a_reused_later\r\n"
		"3000 0 zero_size\n"
		"3000 10";	/* no name, no newline */
	struct sp_perfmap *m = sp_perfmap_new();

	CHECK(m && sp_perfmap_add(m, text, sizeof(text) - 1) == 0);
	CHECK(sp_perfmap_count(m) == 4);
	CHECK_STR(pname(m, 0x1000, 1), "a");
	/* the later of overlapping lines */
	CHECK_STR(pname(m, 0x1005, 1), "a_reused_later");
	/* the byte after a's last: a; a first byte after a gap: c */
	CHECK_STR(pname(m, 0x1010, 0), "a");
	CHECK_STR(pname(m, 0x2000, 0), "c");
	CHECK_STR(pname(m, 0x1800, 0), "(none)");
	CHECK_STR(pname(m, 0x3000, 1), "(none)");
	sp_perfmap_free(m);
}

int main(void)
{
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	test_kallsyms();
	test_kallsyms_order();
	test_capture_agrees();
	test_kallsyms_hidden();
	test_elf_symtab();
	test_symtab_add();
	test_perfmap();
	unlink(path);
	return unit_done("test-symrule");
}
