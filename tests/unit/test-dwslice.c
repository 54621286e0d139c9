/* SPDX-License-Identifier: MIT */
/*
 * test-dwslice.c: DWARF read from compressed debug sections in part gives
 * the answers libdw gives from the whole, inflates less, and survives
 * damage.
 *
 * The files: this test's own executable (built -g), its copy with
 * compressed debug sections (objcopy --compress-debug-sections), and, when
 * libc6-dbg is installed, the C library's compressed debug file against
 * its decompressed copy.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gelf.h>

#include "elf/dwarfinfo.h"
#include "libcdebug.h"
#include "unit.h"

static char dir[] = "/tmp/test-dwslice.XXXXXX";

struct file {
	int fd;
	Elf *e;
	struct sp_dwarf *d;
};

static int file_open(struct file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -1;
	f->e = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->e)
		return -1;
	f->d = sp_dwarf_open(f->e);
	return f->d ? 0 : -1;
}

static void file_close(struct file *f)
{
	sp_dwarf_free(f->d);
	if (f->e)
		elf_end(f->e);
	if (f->fd >= 0)
		close(f->fd);
}

static int run(const char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ?
	       WEXITSTATUS(st) : -1;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Two answers, field for field. */
static int same_frames(const struct sp_src_frame *x, int n,
		       const struct sp_src_frame *y, int m)
{
	int i;

	if (n != m)
		return 0;
	for (i = 0; i < n; i++)
		if (!same_str(x[i].function, y[i].function) ||
		    !same_str(x[i].file, y[i].file) || x[i].line != y[i].line ||
		    x[i].decl_line != y[i].decl_line ||
		    x[i].inlined != y[i].inlined)
			return 0;
	return 1;
}

/* One address looked up in both: the same frames. */
static int same_answer(struct file *a, struct file *b, uint64_t pc)
{
	struct sp_src_frame x[64], y[64];
	unsigned flags = SP_DWARF_INLINES | SP_DWARF_LINES;
	int n = sp_dwarf_lookup(a->d, pc, flags, x, 64);

	return same_frames(x, n, y, sp_dwarf_lookup(b->d, pc, flags, y, 64));
}

/*
 * The function symbols of path's .symtab with an address and at least
 * min_size bytes, in the table's order, into *v (to be freed); how many.
 */
static size_t functions(const char *path, uint64_t min_size, GElf_Sym **v)
{
	struct file s;
	Elf_Scn *scn = NULL;
	size_t n = 0, cap = 0;

	*v = NULL;
	file_open(&s, path);
	while (s.e && (scn = elf_nextscn(s.e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym, *grown;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value || sym.st_size < min_size)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				grown = realloc(*v, cap * sizeof(**v));
				CHECK(grown != NULL);
				if (!grown)
					break;
				*v = grown;
			}
			(*v)[n++] = sym;
		}
	}
	file_close(&s);
	return n;
}

/*
 * A function asked about at many addresses is walked through a tree of
 * its inlined instances read once (dwarfinfo.c): 16 addresses of each of
 * the first nfn functions of path's .symtab of 256 bytes or more, asked
 * of one handle in turn, each answered as a new handle (which walks the
 * DIEs) answers it.  *inl counts the inlined frames of answers past the
 * eighth of a function, which the tree gave.
 */
static void tree_compare(const char *path, unsigned nfn, unsigned *n,
			 unsigned *inl, unsigned *differ)
{
	unsigned flags = SP_DWARF_INLINES | SP_DWARF_LINES, j;
	struct file one;
	GElf_Sym *v;
	size_t nv = functions(path, 256, &v), i;

	*n = *inl = *differ = 0;
	if (file_open(&one, path))
		nv = 0;
	for (i = 0; i < nv && i < nfn; i++) {
		for (j = 0; j < 16; j++, (*n)++) {
			struct sp_src_frame x[64], y[64];
			uint64_t pc = v[i].st_value + v[i].st_size * j / 16;
			struct file fresh;
			int a, b, k;

			a = sp_dwarf_lookup(one.d, pc, flags, x, 64);
			CHECK(file_open(&fresh, path) == 0);
			b = fresh.d ? sp_dwarf_lookup(fresh.d, pc, flags, y,
						      64) : -1;
			/* the names are fresh's: compared before it goes */
			if (!same_frames(x, a, y, b))
				(*differ)++;
			file_close(&fresh);
			for (k = 0; j >= 8 && k < a; k++)
				*inl += x[k].inlined;
		}
	}
	file_close(&one);
	free(v);
}

/*
 * Every step-th function symbol of sym's .symtab, at its start, middle
 * and last byte: the same answers from plain and sliced.  Returns how many
 * addresses were compared; *differ counts those that differed, *named
 * those with an answer.
 */
static unsigned compare(const char *sympath, struct file *plain,
			struct file *sliced, unsigned step, unsigned *differ,
			unsigned *named)
{
	GElf_Sym *v;
	size_t nv = functions(sympath, 1, &v), i;
	unsigned n = 0;

	*differ = *named = 0;
	for (i = 0; i < nv; i += step) {
		struct sp_src_frame f[4];
		uint64_t pcs[3] = { v[i].st_value,
				    v[i].st_value + v[i].st_size / 2,
				    v[i].st_value + v[i].st_size - 1 };
		int j;

		for (j = 0; j < 3; j++, n++) {
			if (!same_answer(plain, sliced, pcs[j]))
				(*differ)++;
			if (sp_dwarf_lookup(plain->d, pcs[j], 0, f, 4) > 0)
				(*named)++;
		}
	}
	free(v);
	return n;
}

static uint64_t symbol_value(const char *path, const char *name)
{
	struct file s;
	Elf_Scn *scn = NULL;
	uint64_t v = 0;

	file_open(&s, path);
	while (s.e && (scn = elf_nextscn(s.e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, str;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		str = sh.sh_link;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *nm;

			if (gelf_getsym(d, (int)i, &sym) &&
			    (nm = elf_strptr(s.e, str, sym.st_name)) &&
			    !strcmp(nm, name))
				v = sym.st_value;
		}
	}
	file_close(&s);
	return v;
}

/* The file offset and size of section name's bytes in path. */
static int section_at(const char *path, const char *name, off_t *off,
		      size_t *size)
{
	struct file s;
	Elf_Scn *scn = NULL;
	size_t shstr;
	int found = 0;

	file_open(&s, path);
	if (s.e && !elf_getshdrstrndx(s.e, &shstr))
		while ((scn = elf_nextscn(s.e, scn))) {
			GElf_Shdr sh;
			const char *nm;

			if (gelf_getshdr(scn, &sh) &&
			    (nm = elf_strptr(s.e, shstr, sh.sh_name)) &&
			    !strcmp(nm, name)) {
				*off = (off_t)sh.sh_offset;
				*size = sh.sh_size;
				found = 1;
			}
		}
	file_close(&s);
	return found ? 0 : -1;
}

static void copy_file(const char *from, const char *to)
{
	const char *argv[] = { "cp", from, to, NULL };

	CHECK(run(argv) == 0);
}

static void poke(const char *path, off_t at, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY);

	CHECK(fd >= 0 && pwrite(fd, bytes, n, at) == (ssize_t)n);
	if (fd >= 0)
		close(fd);
}

/* Look everything up in a damaged copy: no crash, no hang (ASan, UBSan). */
static void lookups_survive(const char *path, const char *sympath)
{
	struct file dam, s2;
	unsigned differ, named, n;

	if (file_open(&dam, path)) {
		/* refused as a whole: as good an answer as any */
		file_close(&dam);
		CHECK(1);
		return;
	}
	memset(&s2, 0, sizeof(s2));
	s2.d = dam.d;
	n = compare(sympath, &dam, &s2, 1, &differ, &named);
	CHECK(n > 0);
	file_close(&dam);
}

static void test_self(const char *self)
{
	char comp[4200], bad[4200];
	const char *zargv[] = { "objcopy", "--compress-debug-sections=zlib-gabi",
				self, comp, NULL };
	struct file plain, sliced, one;
	unsigned differ, named, n;
	size_t done, total, size;
	struct sp_src_frame f[8];
	uint64_t pc;
	off_t off;

	snprintf(comp, sizeof(comp), "%s/self.z", dir);
	if (run(zargv) != 0) {
		fprintf(stderr, "test-dwslice: objcopy (binutils) is missing\n");
		CHECK(0);
		return;
	}
	CHECK(file_open(&plain, self) == 0);
	CHECK(file_open(&sliced, comp) == 0);
	if (!plain.d || !sliced.d)
		return;
	sp_dwarf_inflated(plain.d, &done, &total);
	CHECK(total == 0);		/* uncompressed: libdw reads it all */

	/* a function: its unit alone (the file is smaller than a step) */
	CHECK(file_open(&one, comp) == 0);
	pc = symbol_value(self, "main");
	CHECK(pc != 0);
	CHECK(one.d && sp_dwarf_lookup(one.d, pc, SP_DWARF_LINES, f, 8) > 0);
	if (one.d) {
		sp_dwarf_inflated(one.d, &done, &total);
		CHECK(total > 0 && done <= total);
		CHECK(sp_dwarf_units(one.d) == 1);
	}
	file_close(&one);

	/*
	 * without lines the unit's line table is left compressed; asked for
	 * after, it is inflated, and the answer is the whole file's
	 */
	CHECK(file_open(&one, comp) == 0);
	CHECK(one.d && sp_dwarf_lookup(one.d, pc, SP_DWARF_INLINES, f, 8) > 0);
	if (one.d) {
		size_t nolines;

		CHECK(f[0].file == NULL && f[0].line == 0);
		sp_dwarf_inflated(one.d, &nolines, &total);
		CHECK(sp_dwarf_lookup(one.d, pc, SP_DWARF_INLINES |
				      SP_DWARF_LINES, f, 8) > 0);
		CHECK(f[0].file != NULL && f[0].line > 0);
		sp_dwarf_inflated(one.d, &done, &total);
		CHECK(done > nolines);
		CHECK(same_answer(&plain, &one, pc));
		CHECK(sp_dwarf_units(one.d) == 1);
	}
	file_close(&one);

	n = compare(self, &plain, &sliced, 1, &differ, &named);
	CHECK(n > 300);
	CHECK(named > 100);
	CHECK(differ == 0);
	printf("test-dwslice: self: %u addresses, %u named, %u differ\n", n, named, differ);
	tree_compare(self, 40, &n, &named, &differ);
	CHECK(n == 40 * 16 && named > 0 && differ == 0);
	printf("test-dwslice: self, functions asked often: %u addresses, "
	       "%u inlined frames from trees, %u differ\n", n, named, differ);
	if (differ)
		fprintf(stderr, "test-dwslice: %u of %u addresses differ\n",
			differ, n);
	file_close(&plain);
	file_close(&sliced);

	/* damage in the middle of the compressed units */
	CHECK(section_at(comp, ".debug_info", &off, &size) == 0);
	snprintf(bad, sizeof(bad), "%s/self.bad", dir);
	copy_file(comp, bad);
	poke(bad, off + (off_t)(size / 2), "\xde\xad\xbe\xef\x00\x11\x22\x33", 8);
	poke(bad, off + (off_t)(size / 3), "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	lookups_survive(bad, self);

	/* a stream shorter than its header says (ch_size doubled) */
	copy_file(comp, bad);
	{
		Elf64_Chdr ch;
		int fd = open(bad, O_RDONLY);

		CHECK(fd >= 0 && pread(fd, &ch, sizeof(ch), off) == sizeof(ch));
		if (fd >= 0)
			close(fd);
		ch.ch_size *= 2;
		poke(bad, off, &ch, sizeof(ch));
	}
	lookups_survive(bad, self);

	/* the aranges cut short: refused or read, never trusted past the end */
	CHECK(section_at(comp, ".debug_aranges", &off, &size) == 0);
	copy_file(comp, bad);
	poke(bad, off + (off_t)size - 16, "\x00\x00\x00\x00\x00\x00\x00\x00"
	     "\x00\x00\x00\x00\x00\x00\x00\x00", 16);
	lookups_survive(bad, self);
}

/* The C library's debug file, when installed, against its decompressed copy. */
static void test_libc(void)
{
	char path[4200], plainpath[4200];
	const char *dargv[] = { "objcopy", "--decompress-debug-sections", path,
				plainpath, NULL };
	struct sp_src_frame f[8];
	size_t done, total;
	uint64_t pc;
	struct file plain, sliced;
	unsigned differ, named, n;

	if (libc_debug_path(path, sizeof(path)))
		return;
	if (access(path, R_OK)) {
		printf("test-dwslice: no %s (libc6-dbg): the C library's "
		       "debug file is not compared\n", path);
		return;
	}
	snprintf(plainpath, sizeof(plainpath), "%s/libc.debug", dir);
	CHECK(run(dargv) == 0);
	/* one address: its unit's part of the sections, a small share */
	CHECK(file_open(&sliced, path) == 0);
	pc = symbol_value(path, "__libc_start_call_main");
	CHECK(pc != 0);
	CHECK(sliced.d && sp_dwarf_lookup(sliced.d, pc, SP_DWARF_LINES |
					 SP_DWARF_INLINES, f, 8) > 0);
	if (sliced.d) {
		sp_dwarf_inflated(sliced.d, &done, &total);
		CHECK(total > 1000000 && done < total / 4);
		printf("test-dwslice: libc, one address: %zu of %zu bytes "
		       "inflated\n", done, total);
	}
	file_close(&sliced);
	/* its inline chain alone: less, its line table left compressed */
	CHECK(file_open(&sliced, path) == 0);
	CHECK(sliced.d && sp_dwarf_lookup(sliced.d, pc, SP_DWARF_INLINES,
					 f, 8) > 0);
	if (sliced.d) {
		size_t nolines;

		sp_dwarf_inflated(sliced.d, &nolines, &total);
		CHECK(nolines < done);
		printf("test-dwslice: libc, one address without lines: %zu "
		       "bytes inflated\n", nolines);
	}
	file_close(&sliced);

	CHECK(file_open(&plain, plainpath) == 0);
	CHECK(file_open(&sliced, path) == 0);
	if (plain.d && sliced.d) {
		n = compare(path, &plain, &sliced, 5, &differ, &named);
		CHECK(n > 1000);
		CHECK(named > n / 2);
		CHECK(differ == 0);
		printf("test-dwslice: libc: %u addresses, %u named, %u differ\n", n, named, differ);
		if (differ)
			fprintf(stderr, "test-dwslice: libc: %u of %u addresses "
				"differ\n", differ, n);
	}
	file_close(&plain);
	file_close(&sliced);
	/* the same of trees, in the plain copy (a handle for each address) */
	tree_compare(plainpath, 12, &n, &named, &differ);
	CHECK(n == 12 * 16 && named > 0 && differ == 0);
	printf("test-dwslice: libc, functions asked often: %u addresses, "
	       "%u inlined frames from trees, %u differ\n", n, named, differ);
}

int main(void)
{
	char self[4200];
	ssize_t n;

	elf_version(EV_CURRENT);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	if (n <= 0 || !mkdtemp(dir))
		return unit_done("test-dwslice");
	self[n] = 0;
	test_self(self);
	test_libc();
	{
		const char *argv[] = { "rm", "-rf", dir, NULL };

		run(argv);
	}
	return unit_done("test-dwslice");
}
