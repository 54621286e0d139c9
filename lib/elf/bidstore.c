/* SPDX-License-Identifier: MIT */
/* bidstore.c: the build-id cache on disk: paths, atomic copies, eviction. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/io.h"
#include "bidstore.h"
#include "buildid.h"

#define TMP_MAX_AGE 3600	/* seconds: older temporary files were cut short */

int sp_bidstore_default_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	/* the XDG spec: a relative value is invalid and ignored */
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/stackpulse", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/stackpulse", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int sp_bidstore_file(const char *dir, const uint8_t *bid, size_t len,
		     const char *name, char *buf, size_t size)
{
	char hex[2 * SP_BUILD_ID_MAX + 1];
	int n;

	if (!len)
		return -EINVAL;
	if (len > SP_BUILD_ID_MAX)
		len = SP_BUILD_ID_MAX;
	sp_build_id_hex(bid, len, hex);
	n = snprintf(buf, size, "%s/buildid/%.2s/%s/%s", dir, hex, hex + 2,
		     name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int sp_bidstore_path(const char *dir, const uint8_t *bid, size_t len,
		     char *buf, size_t size)
{
	return sp_bidstore_file(dir, bid, len, "elf", buf, size);
}

int sp_bidstore_touch(const char *dir, const uint8_t *bid, size_t len)
{
	char path[4096];
	int e = sp_bidstore_path(dir, bid, len, path, sizeof(path));

	if (e)
		return e;
	if (utimensat(AT_FDCWD, path, NULL, 0) == 0)
		return 1;
	return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
}

int sp_bidstore_make_parents(char *path)
{
	char *p;
	int e;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		e = mkdir(path, 0777) && errno != EEXIST ? -errno : 0;
		*p = '/';
		if (e)
			return e;
	}
	return 0;
}

/* Whether the file at path is an ELF file with build-id bid. */
static int has_build_id(const char *path, const uint8_t *bid, size_t len)
{
	uint8_t got[SP_BUILD_ID_MAX];
	int fd = sp_open_regular(path), n;

	if (fd < 0)
		return 0;
	n = sp_build_id_fd(fd, got);
	close(fd);
	return n > 0 && (size_t)n == len && !memcmp(got, bid, len);
}

/* Copy all of from (from offset 0) into to.  Bytes copied, or -errno. */
static int64_t copy_fd(int from, int to)
{
	const size_t size = 1 << 16;
	char *buf = malloc(size);
	int64_t r = 0;
	uint64_t off = 0;

	if (!buf)
		return -ENOMEM;
	while (!r) {
		ssize_t n = pread(from, buf, size, (off_t)off), done = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : (int64_t)off;
			break;
		}
		while (done < n) {
			ssize_t w = write(to, buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				r = -errno;
				break;
			}
			done += w;
		}
		off += (uint64_t)n;
	}
	free(buf);
	return r;
}

int64_t sp_bidstore_put(const char *dir, const uint8_t *bid, size_t len,
			int fd)
{
	char path[4096], tmp[4096 + 32];
	uint8_t got[SP_BUILD_ID_MAX];
	int64_t bytes;
	int out, e, n;

	if (len > SP_BUILD_ID_MAX)
		len = SP_BUILD_ID_MAX;
	e = sp_bidstore_path(dir, bid, len, path, sizeof(path));
	if (e)
		return e;
	/* a copy that does not check out (cut by a crash) is written again */
	if (has_build_id(path, bid, len)) {
		e = sp_bidstore_touch(dir, bid, len);
		return e < 0 ? e : 0;
	}
	n = sp_build_id_fd(fd, got);
	if (n < 0)
		return n;
	if ((size_t)n != len || memcmp(got, bid, len))
		return -EILSEQ;
	e = sp_bidstore_make_parents(path);
	if (e)
		return e;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	out = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	bytes = copy_fd(fd, out);
	/* the bytes read must be the file that was checked */
	if (bytes >= 0) {
		n = sp_build_id_fd(out, got);
		if (n < 0 || (size_t)n != len || memcmp(got, bid, len))
			bytes = n < 0 ? n : -EILSEQ;
	}
	if (close(out) && bytes >= 0)
		bytes = -errno;
	if (bytes >= 0 && rename(tmp, path))
		bytes = -errno;
	if (bytes < 0)
		unlink(tmp);
	return bytes;
}

/* Trimming ---------------------------------------------------------------- */

/* "a/b" into buf; -1 when it does not fit. */
static int join(char *buf, size_t size, const char *a, const char *b)
{
	int n = snprintf(buf, size, "%s/%s", a, b);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

struct copy {
	char *dir;		/* DIR/buildid/ab/cdef... */
	uint64_t bytes;
	time_t mtime;
};

struct walk {
	struct copy *v;
	size_t n, cap;
	time_t now;
};

static int by_age(const void *a, const void *b)
{
	const struct copy *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Remove a copy's directory: its elf and whatever else is in it. */
static int remove_copy(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!join(path, sizeof(path), dir, de->d_name))
			unlink(path);
	}
	closedir(d);
	if (rmdir(dir))
		return -errno;
	/* and DIR/buildid/ab when that was its last copy (else it stays) */
	snprintf(path, sizeof(path), "%s", dir);
	if (strrchr(path, '/')) {
		*strrchr(path, '/') = 0;
		rmdir(path);
	}
	return 0;
}

/*
 * The length of what name is kept as: "elf", "symbols" or "symbols-VARIANT"
 * (symcache.h), with or without a temporary file's ".tmp.*" after it; 0
 * for a name the store does not know.
 */
static size_t kept_name(const char *name)
{
	size_t len;

	if (!strncmp(name, "elf", 3))
		return name[3] && name[3] != '.' ? 0 : 3;
	if (strncmp(name, "symbols", 7))
		return 0;
	len = 7;
	if (name[len] == '-')
		len += 1 + strspn(name + len + 1, "abcdefghijklmnopqrstuvwxyz-");
	return name[len] && name[len] != '.' ? 0 : len;
}

/*
 * One copy's directory, DIR/buildid/ab/NAME: note what it holds (the elf,
 * the symbol caches: their bytes, the newest time), remove its temporary
 * files that are old enough to have been cut short.
 */
static int note_copy(struct walk *w, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	char path[4096];
	struct copy c = { 0 };
	int held = 0;
	size_t len;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		len = kept_name(de->d_name);
		if (!len || join(path, sizeof(path), dir, de->d_name) ||
		    lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!strncmp(de->d_name + len, ".tmp.", 5)) {
			if (st.st_mtime + TMP_MAX_AGE < w->now)
				unlink(path);
			continue;
		}
		if (de->d_name[len])
			continue;
		c.bytes += (uint64_t)st.st_size;
		if (!held || st.st_mtime > c.mtime)
			c.mtime = st.st_mtime;
		held = 1;
	}
	closedir(d);
	if (!held)
		return 0;
	if (SP_GROW(w->v, w->cap, w->n + 1))
		return -ENOMEM;
	c.dir = strdup(dir);
	if (!c.dir)
		return -ENOMEM;
	w->v[w->n++] = c;
	return 0;
}

/* Every copy under DIR/buildid/ab/ for every two-digit ab. */
static int walk_store(struct walk *w, const char *root)
{
	DIR *top = opendir(root), *d;
	struct dirent *a, *b;
	char sub[4096], dir[4096];
	int e = 0;

	if (!top)
		return errno == ENOENT ? 0 : -errno;
	while (!e && (a = readdir(top))) {
		if (strlen(a->d_name) != 2 ||
		    strspn(a->d_name, "0123456789abcdef") != 2)
			continue;
		if (join(sub, sizeof(sub), root, a->d_name))
			continue;
		d = opendir(sub);
		if (!d)
			continue;
		while (!e && (b = readdir(d))) {
			if (b->d_name[0] == '.' ||
			    join(dir, sizeof(dir), sub, b->d_name))
				continue;
			e = note_copy(w, dir);
		}
		closedir(d);
	}
	closedir(top);
	return e;
}

int sp_bidstore_trim(const char *dir, uint64_t max, time_t keep_since,
		     struct sp_bidstore_usage *u)
{
	struct walk w = { .now = time(NULL) };
	char root[4096];
	size_t i;
	int e;

	memset(u, 0, sizeof(*u));
	if (join(root, sizeof(root), dir, "buildid"))
		return -ENAMETOOLONG;
	e = walk_store(&w, root);
	if (!e) {
		for (i = 0; i < w.n; i++)
			u->bytes += w.v[i].bytes;
		u->files = w.n;
		if (w.n)
			qsort(w.v, w.n, sizeof(*w.v), by_age);
		for (i = 0; i < w.n && u->bytes > max; i++) {
			if (keep_since && w.v[i].mtime >= keep_since)
				break;	/* the rest are newer still */
			if (remove_copy(w.v[i].dir))
				continue;
			u->bytes -= w.v[i].bytes;
			u->files--;
			u->evicted++;
			u->evicted_bytes += w.v[i].bytes;
		}
	}
	for (i = 0; i < w.n; i++)
		free(w.v[i].dir);
	free(w.v);
	return e;
}
