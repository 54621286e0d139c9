/* SPDX-License-Identifier: MIT */
/* test-locate: the build-id cache on disk, and files found by build-id. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/bidstore.h"
#include "elf/buildid.h"
#include "elf/locate.h"
#include "elf/procs.h"
#include "unit.h"

static char dir[256];

/* The build-id of the file at path; its length. */
static int bid_of(const char *path, uint8_t bid[SP_BUILD_ID_MAX])
{
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return -1;
	n = sp_build_id_fd(fd, bid);
	close(fd);
	return n;
}

/* A shared object this process maps (libc), by its /proc/self/maps path. */
static int find_lib(char *out, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096], *p;
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		p = strchr(line, '/');
		if (!p || !strstr(p, "/libc.so"))
			continue;
		p[strcspn(p, "\n")] = 0;
		snprintf(out, size, "%s", p);
		found = 1;
	}
	fclose(f);
	return found;
}

/* cp from to.  0 or -1. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out, r = 0;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			r = -1;
	if (n < 0 || close(out))
		r = -1;
	close(in);
	return r;
}

static void mmap_rec(struct sp_procs *p, uint32_t pid, uint64_t start,
		     const char *name, const uint8_t *bid, size_t len)
{
	union {
		struct sp_mmap_rec m;
		uint8_t b[8192];
	} u;

	memset(&u, 0, sizeof(u));
	u.m.hdr.type = SP_REC_MMAP;
	u.m.hdr.size = sp_align8(sizeof(u.m) + strlen(name) + 1);
	u.m.pid = u.m.tid = pid;
	u.m.start = start;
	u.m.len = 0x1000;
	u.m.pgoff = 0;
	u.m.prot = PROT_READ | PROT_EXEC;
	u.m.build_id_size = (uint8_t)len;
	memcpy(u.m.build_id, bid, len);
	strcpy(u.m.filename, name);
	CHECK(sp_rec_check_common(&u.m.hdr) == NULL);
	CHECK(sp_procs_apply(p, &u.m.hdr) == 0);
}

static void test_paths(void)
{
	static const uint8_t bid[3] = { 0xab, 0xcd, 0xef };
	char buf[256];

	CHECK(sp_bidstore_path("/c", bid, 3, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "/c/buildid/ab/cdef/elf");
	CHECK(sp_bidstore_path("/c", bid, 0, buf, sizeof(buf)) == -EINVAL);
	CHECK(sp_bidstore_path("/c", bid, 3, buf, 10) == -ENAMETOOLONG);

	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	setenv("HOME", "/home/u", 1);
	CHECK(sp_bidstore_default_dir(buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "/x/cache/stackpulse");
	/* a relative XDG_CACHE_HOME is ignored, as the spec says */
	setenv("XDG_CACHE_HOME", "rel", 1);
	CHECK(sp_bidstore_default_dir(buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "/home/u/.cache/stackpulse");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	CHECK(sp_bidstore_default_dir(buf, sizeof(buf)) == -ENOENT);
}

/* put, touch, and what put refuses. */
static void test_store(const char *exe, const uint8_t *b1, int n1,
		       const uint8_t *b2, int n2)
{
	char store[300], path[600];
	struct stat st, sx;
	int fd = open(exe, O_RDONLY);

	snprintf(store, sizeof(store), "%s/store", dir);
	CHECK(fd >= 0);
	CHECK(sp_bidstore_touch(store, b1, (size_t)n1) == 0);
	CHECK(stat(exe, &sx) == 0);
	CHECK(sp_bidstore_put(store, b1, (size_t)n1, fd) == sx.st_size);
	CHECK(sp_bidstore_path(store, b1, (size_t)n1, path, sizeof(path)) == 0);
	CHECK(stat(path, &st) == 0 && st.st_size == sx.st_size);
	/* no temporary file is left beside it */
	strcat(path, ".tmp.");
	CHECK(stat(path, &st) != 0);
	CHECK(sp_bidstore_put(store, b1, (size_t)n1, fd) == 0);
	CHECK(sp_bidstore_touch(store, b1, (size_t)n1) == 1);
	/* a file is only ever stored under its own build-id */
	CHECK(sp_bidstore_put(store, b2, (size_t)n2, fd) == -EILSEQ);
	CHECK(sp_bidstore_touch(store, b2, (size_t)n2) == 0);
	close(fd);
}

/* The store first, the path when its build-id is right, never another. */
static void test_locate(const char *exe, const uint8_t *b1, int n1,
			const char *lib, const uint8_t *b2, int n2)
{
	struct sp_elf_cache *c = sp_elf_cache_new();
	struct sp_locator *l = c ? sp_locator_new(c) : NULL;
	static const uint8_t other[20] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	enum sp_elf_from from;
	char store[300], deleted[4200], copy[300], tmp[300];
	struct sp_elf *e, *old;

	CHECK(l != NULL);
	if (!l)
		return;
	snprintf(store, sizeof(store), "%s/store", dir);
	CHECK(sp_locator_set_store(l, store) == 0);
	CHECK_STR(sp_locator_store(l), store);
	sp_locator_set_system_debug(l, 0);

	e = sp_locate(l, "/nonexistent/a.out", b1, (size_t)n1, &from);
	CHECK(e && from == SP_FROM_STORE);
	CHECK_STR(sp_elf_from_name(from), "store");
	/* the cache is asked first, whatever is at the path */
	e = sp_locate(l, lib, b1, (size_t)n1, &from);
	CHECK(e && from == SP_FROM_STORE);
	e = sp_locate(l, lib, b2, (size_t)n2, &from);
	CHECK(e && from == SP_FROM_PATH && !strcmp(sp_elf_path(e), lib));
	CHECK(e && sp_elf_has_code(e));
	/* another build at the path is never taken */
	CHECK(sp_locate(l, lib, other, sizeof(other), &from) == NULL);
	CHECK(from == SP_FROM_NONE);
	CHECK(sp_locate(l, exe, b2, (size_t)n2, NULL) == NULL);
	/* what the kernel called deleted may be back, checked */
	snprintf(deleted, sizeof(deleted), "%s (deleted)", lib);
	e = sp_locate(l, deleted, b2, (size_t)n2, &from);
	CHECK(e && from == SP_FROM_PATH);
	/* without a recorded build-id the path is all there is */
	e = sp_locate(l, lib, NULL, 0, &from);
	CHECK(e && from == SP_FROM_PATH);
	CHECK(sp_locate(l, deleted, NULL, 0, &from) == NULL);
	/* no cache: only the path */
	CHECK(sp_locator_set_store(l, NULL) == 0);
	CHECK(sp_locate(l, "/nonexistent/a.out", b1, (size_t)n1, NULL) == NULL);
	/*
	 * another build put at a path opened before (a live pipeline across
	 * an upgrade): each build-id still gets its own file
	 */
	snprintf(copy, sizeof(copy), "%s/lib.so", dir);
	snprintf(tmp, sizeof(tmp), "%s/lib.so.new", dir);
	CHECK(copy_file(lib, copy) == 0 && copy_file(exe, tmp) == 0);
	old = sp_locate(l, copy, b2, (size_t)n2, &from);
	CHECK(old && from == SP_FROM_PATH);
	CHECK(rename(tmp, copy) == 0);
	e = sp_locate(l, copy, b1, (size_t)n1, &from);
	CHECK(e && e != old && from == SP_FROM_PATH &&
	      !strcmp(sp_elf_path(e), copy));
	CHECK(sp_locate(l, copy, b2, (size_t)n2, NULL) == old);
	CHECK(sp_locate(l, copy, other, sizeof(other), NULL) == NULL);
	sp_locator_free(l);
	sp_elf_cache_free(c);
}

/* Mappings of a file with another build-id: missing, listed once. */
static void test_procs(const char *lib, const uint8_t *b2, int n2)
{
	struct sp_elf_cache *c = sp_elf_cache_new();
	struct sp_procs *p = c ? sp_procs_new(c) : NULL;
	static const uint8_t other[20] = { 0xde, 0xad, 0xbe, 0xef };
	const struct sp_missing_file *mf;
	const struct sp_map *m;
	struct sp_proc *proc;
	size_t n;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK(sp_locator_set_store(sp_procs_locator(p), NULL) == 0);
	sp_locator_set_system_debug(sp_procs_locator(p), 0);
	mmap_rec(p, 7, 0x100000, lib, other, sizeof(other));
	mmap_rec(p, 8, 0x200000, lib, other, sizeof(other));
	mmap_rec(p, 8, 0x300000, lib, b2, (size_t)n2);
	proc = sp_procs_find(p, 7);
	m = proc ? sp_proc_map(proc, 0x100010) : NULL;
	CHECK(m && m->kind == SP_MAP_MISSING && !m->elf && m->missing == 1);
	CHECK(sp_map_no_buildid(m));
	proc = sp_procs_find(p, 8);
	m = proc ? sp_proc_map(proc, 0x200010) : NULL;
	CHECK(m && m->kind == SP_MAP_MISSING && m->missing == 1);
	m = proc ? sp_proc_map(proc, 0x300010) : NULL;
	CHECK(m && m->kind == SP_MAP_FILE && m->elf && !m->missing &&
	      m->from == SP_FROM_PATH);
	CHECK(!sp_map_no_buildid(m));
	CHECK(!sp_map_no_buildid(NULL));
	mf = sp_procs_missing(p, &n);
	CHECK(n == 1);
	CHECK(n == 1 && !strcmp(mf[0].path, lib) && !mf[0].debug_only &&
	      mf[0].build_id_size == sizeof(other) &&
	      !memcmp(mf[0].build_id, other, sizeof(other)));
	sp_procs_free(p);
	sp_elf_cache_free(c);
}

/* A fake copy of size bytes, last used age seconds ago. */
static void fake_copy(const char *store, const char *hex, size_t size,
		      time_t age)
{
	char path[600];
	struct timespec t[2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/buildid/%.2s", store, hex);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/buildid/%.2s/%s", store, hex, hex + 2);
	mkdir(path, 0777);
	strcat(path, "/elf");
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	while (size--)
		fputc('x', f);
	fclose(f);
	t[0].tv_sec = t[1].tv_sec = time(NULL) - age;
	t[0].tv_nsec = t[1].tv_nsec = 0;
	CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

static int exists(const char *store, const char *hex)
{
	char path[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/buildid/%.2s/%s/elf", store, hex,
		 hex + 2);
	return stat(path, &st) == 0;
}

static void test_trim(void)
{
	char store[300], path[600];
	struct sp_bidstore_usage u;
	struct timespec t[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
	FILE *f;

	snprintf(store, sizeof(store), "%s/trim", dir);
	CHECK(sp_bidstore_trim(store, 0, 0, &u) == 0 && u.files == 0);
	mkdir(store, 0777);
	snprintf(path, sizeof(path), "%s/buildid", store);
	mkdir(path, 0777);
	fake_copy(store, "aa01", 1000, 4000);
	fake_copy(store, "bb02", 1000, 3000);
	fake_copy(store, "cc03", 1000, 2000);
	fake_copy(store, "dd04", 1000, 10);
	/* a copy cut short an hour ago goes; one being written stays */
	snprintf(path, sizeof(path), "%s/buildid/aa/01/elf.tmp.1", store);
	f = fopen(path, "w");
	CHECK(f && fclose(f) == 0);
	CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
	snprintf(path, sizeof(path), "%s/buildid/bb/02/elf.tmp.2", store);
	f = fopen(path, "w");
	CHECK(f && fclose(f) == 0);

	CHECK(sp_bidstore_trim(store, 5000, 0, &u) == 0);
	CHECK(u.files == 4 && u.bytes == 4000 && u.evicted == 0);
	/* the oldest first, down to the cap */
	CHECK(sp_bidstore_trim(store, 2500, 0, &u) == 0);
	CHECK(u.files == 2 && u.bytes == 2000 && u.evicted == 2 &&
	      u.evicted_bytes == 2000);
	CHECK(!exists(store, "aa01") && !exists(store, "bb02"));
	CHECK(exists(store, "cc03") && exists(store, "dd04"));
	snprintf(path, sizeof(path), "%s/buildid/aa", store);
	CHECK(access(path, F_OK) != 0);	/* emptied, removed */
	/* what the recording used is spared, even over the cap */
	CHECK(sp_bidstore_trim(store, 0, time(NULL) - 100, &u) == 0);
	CHECK(u.files == 1 && u.evicted == 1 && exists(store, "dd04"));
}

static int remove_one(const char *path, const struct stat *st, int type,
		      struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	uint8_t b1[SP_BUILD_ID_MAX], b2[SP_BUILD_ID_MAX];
	char exe[4096], lib[4096];
	ssize_t n;
	int n1, n2;

	snprintf(dir, sizeof(dir), "%s/test-locate.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n > 0 ? n : 0] = 0;
	CHECK(find_lib(lib, sizeof(lib)));
	n1 = bid_of(exe, b1);
	n2 = bid_of(lib, b2);
	test_paths();
	if (n1 <= 0 || n2 <= 0) {
		/* a toolchain without --build-id: nothing to find them by */
		fprintf(stderr, "test-locate: %s or %s has no build-id\n", exe, lib);
		unit_fail++;
	} else {
		test_store(exe, b1, n1, b2, n2);
		test_locate(exe, b1, n1, lib, b2, n2);
		test_procs(lib, b2, n2);
	}
	test_trim();
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return unit_done("test-locate");
}
