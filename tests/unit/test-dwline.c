/* SPDX-License-Identifier: MIT */
/*
 * test-dwline.c: line tables read by elf/dwline.h answer as libdw's do,
 * address for address, and hold libdw's file names.
 *
 * The files: this test's executable (gcc's DWARF 5, and the fixture
 * dwline-fixture.c compiled as DWARF 2, 3 and 4: tables of versions 3 to
 * 5), the C library's debug
 * file when libc6-dbg is installed (compressed sections libdw inflates),
 * and the files SP_DWLINE_FILES names (colon-separated).  Each unit's
 * table is compared at every row's address, one byte below and one above.
 * Then the largest table, cut at every length and with bytes flipped, is read
 * (under ASan: without a bad access).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "elf/dwline.h"
#include "libcdebug.h"
#include "unit.h"

unsigned long fixture_v2(unsigned long n);
unsigned long fixture_v3(unsigned long n);
unsigned long fixture_v4(unsigned long n);

struct counts {
	unsigned units, refused, rows, pcs, differ;
	unsigned versions[6];
};

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* One address in both: found by both or neither, same file and line. */
static int same_at(Dwarf_Die *cu, const struct sp_dwline *t, uint64_t pc)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, pc);
	const char *file = NULL;
	uint32_t line = 0;
	int ln, r = sp_dwline_find(t, pc, &file, &line);

	if (!l || r)
		return !l && r;
	if (dwarf_lineno(l, &ln) || ln <= 0)
		ln = 0;
	return same_str(dwarf_linesrc(l, NULL, NULL), file) &&
	       (uint32_t)ln == line;
}

/* The version of the line table at off. */
static unsigned table_version(const struct sp_dwline_secs *s, uint64_t off)
{
	const uint8_t *p = s->line + off;
	size_t at = 4;
	uint16_t v;

	if (off + 14 > s->line_len)
		return 0;
	if (p[0] == 0xff && p[1] == 0xff && p[2] == 0xff && p[3] == 0xff)
		at = 12;
	memcpy(&v, p + at, 2);
	return v;
}

static void compare_unit(const char *path, Dwarf_Die *cu,
			 const struct sp_dwline_secs *s, size_t step,
			 struct counts *n)
{
	Dwarf_Attribute a;
	Dwarf_Word off;
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nlines, nfiles, i;
	uint8_t asz, osz;
	struct sp_dwline *t;
	const char *err;
	unsigned v;

	if (dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &a), &off) ||
	    !dwarf_diecu(cu, &(Dwarf_Die){ 0 }, &asz, &osz))
		return;
	if (dwarf_getsrclines(cu, &lines, &nlines) ||
	    dwarf_getsrcfiles(cu, &files, &nfiles)) {
		n->refused++;
		return;
	}
	n->units++;
	v = table_version(s, off);
	if (v < 6)
		n->versions[v]++;
	t = sp_dwline_read(s, off, asz,
			   dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)),
			   &err);
	if (!t) {
		fprintf(stderr, "%s: line table at 0x%llx: %s\n", path,
			(unsigned long long)off, err ? err : "out of memory");
		n->differ++;
		return;
	}
	CHECK(sp_dwline_files(t) == nfiles);
	for (i = 0; i < nfiles && i < sp_dwline_files(t); i++)
		if (!same_str(dwarf_filesrc(files, i, NULL, NULL),
			      sp_dwline_file(t, i))) {
			fprintf(stderr, "%s: file %zu: '%s' != '%s'\n", path, i,
				dwarf_filesrc(files, i, NULL, NULL),
				sp_dwline_file(t, i));
			n->differ++;
		}
	CHECK(sp_dwline_file(t, nfiles) == NULL);
	for (i = 0; i < nlines; i += step) {
		Dwarf_Addr addr;
		int k;

		n->rows++;
		if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &addr))
			continue;
		for (k = -1; k <= 1; k++) {
			n->pcs++;
			if (same_at(cu, t, addr + (uint64_t)k))
				continue;
			if (n->differ++ < 5)
				fprintf(stderr, "%s: unit at 0x%llx: 0x%llx "
					"answered otherwise\n", path,
					(unsigned long long)dwarf_dieoffset(cu),
					(unsigned long long)(addr + (uint64_t)k));
		}
	}
	sp_dwline_free(t);
}

/*
 * Every unit of path; at most about max_rows rows compared.  Returns the
 * counts (units 0 when the file has no DWARF).
 */
static struct counts compare_file(const char *path, size_t max_rows)
{
	struct counts n = { 0 };
	struct sp_dwline_secs s;
	Dwarf_Off off = 0, next;
	size_t hsize, total = 0, step;
	Dwarf *dw;
	Elf *e;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return n;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	dw = e ? dwarf_begin_elf(e, DWARF_C_READ, NULL) : NULL;
	if (!dw || sp_dwline_sections(dwarf_getelf(dw), &s)) {
		if (dw)
			dwarf_end(dw);
		if (e)
			elf_end(e);
		close(fd);
		return n;
	}
	/* rows in all: sample evenly when there are more than max_rows */
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t nl;

		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    !dwarf_getsrclines(&cu, &lines, &nl))
			total += nl;
		off = next;
	}
	step = total > max_rows ? total / max_rows + 1 : 1;
	off = 0;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu))
			compare_unit(path, &cu, &s, step, &n);
		off = next;
	}
	printf("test-dwline: %s: %u units (versions 2-5: %u %u %u %u), "
	       "%u refused by libdw, %u rows, %u addresses, %u differ\n",
	       path, n.units, n.versions[2], n.versions[3], n.versions[4],
	       n.versions[5], n.refused, n.rows, n.pcs, n.differ);
	dwarf_end(dw);
	elf_end(e);
	close(fd);
	return n;
}

/* The C library's debug file, when libc6-dbg is installed. */
static void test_libc(void)
{
	char path[4200];
	struct counts n;

	if (libc_debug_path(path, sizeof(path)))
		return;
	if (access(path, R_OK)) {
		printf("test-dwline: no %s (libc6-dbg): the C library's "
		       "line tables are not compared\n", path);
		return;
	}
	n = compare_file(path, 100000);
	CHECK(n.units > 100);
	CHECK(n.pcs > 100000);
	CHECK(n.differ == 0);
}

/* The line table of path with the most rows, copied into *buf with its strings. */
static size_t largest_table(const char *path, uint8_t **buf,
			    struct sp_dwline_secs *s)
{
	struct sp_dwline_secs all;
	Dwarf_Off cuoff = 0, next, best = (Dwarf_Off)-1;
	size_t hsize, len = 0, most = 0;
	Dwarf_Attribute a;
	Dwarf_Word off;
	Dwarf_Die cu;
	Dwarf *dw;
	int fd;

	*buf = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	while (dw && dwarf_nextcu(dw, cuoff, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Lines *lines;
		size_t nl;

		if (dwarf_offdie(dw, cuoff + hsize, &cu) &&
		    !dwarf_getsrclines(&cu, &lines, &nl) && nl > most &&
		    !dwarf_formudata(dwarf_attr(&cu, DW_AT_stmt_list, &a), &off)) {
			most = nl;
			best = off;
		}
		cuoff = next;
	}
	if (dw && best != (Dwarf_Off)-1 &&
	    !sp_dwline_sections(dwarf_getelf(dw), &all) && best < all.line_len) {
		len = all.line_len - best;
		*buf = malloc(len);
		if (*buf)
			memcpy(*buf, all.line + best, len);
		else
			len = 0;
		/* the string sections stay those of a copy made here */
		*s = (struct sp_dwline_secs){ .line = *buf, .line_len = len };
		if (all.line_str && (s->line_str = malloc(all.line_str_len))) {
			memcpy((void *)s->line_str, all.line_str, all.line_str_len);
			s->line_str_len = all.line_str_len;
		}
		if (all.str && (s->str = malloc(all.str_len))) {
			memcpy((void *)s->str, all.str, all.str_len);
			s->str_len = all.str_len;
		}
	}
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return len;
}

/* Damaged tables: cut anywhere, bytes flipped; read, never past the end. */
static void test_damage(const char *self)
{
	struct sp_dwline_secs s = { 0 }, cut;
	struct sp_dwline *t;
	const char *err;
	uint8_t *buf, *copy;
	size_t len, i, k, good = 0;

	len = largest_table(self, &buf, &s);
	CHECK(len > 64);
	if (len < 64)
		return;
	t = sp_dwline_read(&s, 0, 8, "/", &err);
	CHECK(t && sp_dwline_rows(t) > 0);
	sp_dwline_free(t);
	if (len > 8192)
		len = 8192;
	for (i = 0; i <= len; i++) {
		/* a copy of exactly i bytes: ASan sees a read past it */
		copy = malloc(i ? i : 1);
		memcpy(copy, buf, i);
		cut = s;
		cut.line = copy;
		cut.line_len = i;
		t = sp_dwline_read(&cut, 0, 8, "/", &err);
		good += t != NULL;
		CHECK(t || err);
		sp_dwline_free(t);
		free(copy);
	}
	for (k = 0; k < 20000; k++) {
		copy = malloc(len);
		memcpy(copy, buf, len);
		for (i = 0; i < 1 + unit_rand() % 4; i++)
			copy[unit_rand() % len] ^= (uint8_t)(1u << (unit_rand() % 8));
		cut = s;
		cut.line = copy;
		cut.line_len = len;
		t = sp_dwline_read(&cut, 0, 8, unit_rand() & 1 ? NULL : "/d",
				   &err);
		if (t) {
			const char *f;
			uint32_t ln;

			for (i = 0; i < 64; i++)
				(void)sp_dwline_find(t, unit_rand() % 0x10000,
						     &f, &ln);
			(void)sp_dwline_file(t, unit_rand() % 8);
		}
		sp_dwline_free(t);
		free(copy);
	}
	printf("test-dwline: the largest table cut at 0..%zu bytes: %zu read "
	       "whole\n", len, good);
	free(buf);
	free((void *)s.line_str);
	free((void *)s.str);
}

int main(void)
{
	char self[4200], *list, *p, *save = NULL;
	struct counts n;
	ssize_t len;

	elf_version(EV_CURRENT);
	/* the fixtures are code: call them, so that they are linked */
	CHECK(fixture_v2(10) == fixture_v3(10) && fixture_v3(10) == fixture_v4(10));
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(len > 0);
	if (len <= 0)
		return unit_done("test-dwline");
	self[len] = 0;
	n = compare_file(self, 1000000);
	CHECK(n.units > 5);
	/* gcc writes a version 3 table for -gdwarf-2 */
	CHECK(n.versions[3] > 0 && n.versions[4] > 0 && n.versions[5] > 0);
	CHECK(n.pcs > 1000);
	CHECK(n.differ == 0);
	test_libc();
	if ((list = getenv("SP_DWLINE_FILES")) && (list = strdup(list))) {
		for (p = strtok_r(list, ":", &save); p;
		     p = strtok_r(NULL, ":", &save)) {
			n = compare_file(p, 200000);
			CHECK(n.units > 0);
			CHECK(n.differ == 0);
		}
		free(list);
	}
	test_damage(self);
	return unit_done("test-dwline");
}
