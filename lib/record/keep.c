/* SPDX-License-Identifier: MIT */
/*
 * keep.c: copies of mapped binaries that will not be at their paths later.
 *
 * A reader finds a mapping's file by the build-id its MMAP record holds
 * (elf/locate.h).  An upgrade deletes a library or renames another build
 * over it while processes still map the old one; after the recording
 * neither is at the path.  While a target maps it, the old file is still
 * readable through /proc/PID/map_files/START-END: each file with a
 * build-id is watched from its first MMAP record until no target maps it,
 * with one stat(2) of its path when it is first seen and once a second
 * after that (and once more as the recording ends), and copied into the
 * build-id cache (elf/bidstore.h) when its path no longer holds its
 * build-id.  The build-id of the path is read only when stat says the
 * file there changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"
#include "elf/bidstore.h"
#include "elf/buildid.h"
#include "os/procfs.h"
#include "recorder.h"

#define FULL_PASS_NS	(1000 * 1000 * 1000ull)
#define DELETED		" (deleted)"

void rec_keep_release(struct rec_keep *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->files[i].holders);
	free(k->files);
	sp_strtab_release(&k->keys);
	free(k->dir);
	memset(k, 0, sizeof(*k));
}

/* Add or update the holder (pid, start) of f.  0 or -ENOMEM. */
static int add_holder(struct rec_kfile *f, pid_t pid, uint64_t start,
		      uint64_t end, uint64_t time)
{
	struct rec_holder *h;
	size_t i;

	for (i = 0; i < f->nholders; i++) {
		h = &f->holders[i];
		if (h->pid == pid && h->start == start) {
			h->end = end;
			h->time = time;
			return 0;
		}
	}
	if (SP_GROW(f->holders, f->cap, f->nholders + 1))
		return -ENOMEM;
	f->holders[f->nholders++] = (struct rec_holder){ pid, start, end, time };
	return 0;
}

int rec_keep_mapping(struct sp_recorder *r, uint32_t pid, uint64_t start,
		     uint64_t len, uint64_t time, const char *path,
		     const uint8_t *bid, size_t bid_len, uint32_t maj,
		     uint32_t min, uint64_t ino)
{
	struct rec_keep *k = &r->keep;
	char hex[2 * SP_BUILD_ID_MAX + 1], *key;
	struct rec_kfile *f;
	int64_t i;

	/* memfd code is JIT memory, not a file anyone can look up */
	if (!k->dir || !bid_len || path[0] != '/' || !strncmp(path, "/memfd:", 7))
		return 0;
	if (bid_len > SP_BUILD_ID_MAX)
		bid_len = SP_BUILD_ID_MAX;
	/* room first: a key interned is an entry made */
	if (SP_GROW(k->files, k->cap, k->n + 1))
		return -ENOMEM;
	sp_build_id_hex(bid, bid_len, hex);
	if (asprintf(&key, "%s %s", hex, path) < 0)
		return -ENOMEM;
	i = sp_strtab_intern(&k->keys, key);
	free(key);
	if (i < 0)
		return -ENOMEM;
	if ((size_t)i == k->n) {
		f = &k->files[k->n++];
		memset(f, 0, sizeof(*f));
		f->path = k->keys.strs[i] + strlen(hex) + 1;
		memcpy(f->bid, bid, bid_len);
		f->len = (uint8_t)bid_len;
		f->maj = maj;
		f->min = min;
		f->ino = ino;
		k->unchecked++;
	}
	f = &k->files[i];
	if (f->state == REC_KEEP_FAILED) {
		/* a new process maps it: one more chance to copy it */
		f->state = REC_KEEP_WATCH;
		f->checked = 0;
		k->failed--;
		k->unchecked++;
	}
	return add_holder(f, (pid_t)pid, start, start + len, time);
}

void rec_keep_forget(struct sp_recorder *r, uint32_t pid, uint64_t time)
{
	struct rec_keep *k = &r->keep;
	size_t i, j, n;

	for (i = 0; i < k->n; i++) {
		struct rec_kfile *f = &k->files[i];

		for (j = n = 0; j < f->nholders; j++)
			if (f->holders[j].pid != (pid_t)pid ||
			    f->holders[j].time > time)
				f->holders[n++] = f->holders[j];
		f->nholders = n;
	}
}

int rec_keep_fork(struct sp_recorder *r, uint32_t pid, uint32_t ppid,
		  uint64_t time)
{
	struct rec_keep *k = &r->keep;
	size_t i, j, n;

	for (i = 0; i < k->n; i++) {
		struct rec_kfile *f = &k->files[i];

		/* the child maps what its parent mapped, where it mapped it */
		for (j = 0, n = f->nholders; j < n; j++) {
			struct rec_holder h = f->holders[j];

			if (h.pid == (pid_t)ppid &&
			    add_holder(f, (pid_t)pid, h.start, h.end, time))
				return -ENOMEM;
		}
	}
	return 0;
}

/* The path without the kernel's " (deleted)" into buf; 1 when it had it. */
static int strip_deleted(const char *path, char *buf, size_t size)
{
	size_t n = strlen(path), d = strlen(DELETED);
	int deleted = n > d && !strcmp(path + n - d, DELETED);

	if (deleted)
		n -= d;
	if (n >= size)
		n = size - 1;
	memcpy(buf, path, n);
	buf[n] = 0;
	return deleted;
}

static struct rec_stat stat_of(const struct stat *st)
{
	return (struct rec_stat){ .dev = st->st_dev, .ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec,
		.ctime_ns = st->st_ctim.tv_sec * 1000000000ll + st->st_ctim.tv_nsec };
}

/* Whether the file at path has f's build-id. */
static int path_has_bid(const char *path, const struct rec_kfile *f)
{
	uint8_t bid[SP_BUILD_ID_MAX];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), n;

	if (fd < 0)
		return 0;
	n = sp_build_id_fd(fd, bid);
	close(fd);
	return n == f->len && !memcmp(bid, f->bid, f->len);
}

/* Find a mapping of the file by its path, for a vma that was reshaped. */
struct by_path {
	const char *path;	/* without " (deleted)" */
	pid_t pid;
	int fd;
};

static int open_by_path(const struct sp_procfs_map *m, void *arg)
{
	struct by_path *b = arg;
	char path[4096];

	strip_deleted(m->path, path, sizeof(path));
	if (strcmp(path, b->path))
		return 0;
	b->fd = sp_procfs_open_mapped(b->pid, m);
	return b->fd >= 0;
}

/* The file holder h maps, opened through map_files; a descriptor or -errno. */
static int open_held(const struct rec_kfile *f, const struct rec_holder *h,
		     const char *path)
{
	struct sp_procfs_map m = { .start = h->start, .end = h->end,
		.maj = f->maj, .min = f->min, .ino = f->ino, .path = f->path };
	struct by_path b = { .path = path, .pid = h->pid, .fd = -ENOENT };
	int fd = sp_procfs_open_mapped(h->pid, &m);

	if (fd >= 0 || fd == -ESRCH || fd == -EPERM || fd == -EACCES)
		return fd;
	if (sp_procfs_maps(h->pid, open_by_path, &b) < 0 && b.fd < 0)
		return fd;
	return b.fd >= 0 ? b.fd : fd;
}

/* f is not at its path any more: copy it from a process that maps it. */
static void keep(struct sp_recorder *r, struct rec_kfile *f, const char *why,
		 const char *path)
{
	struct rec_keep *k = &r->keep;
	int64_t n = -ESRCH;
	size_t i;
	int fd;

	f->why = why;
	if (sp_bidstore_touch(k->dir, f->bid, f->len) == 1) {
		f->state = REC_KEEP_KEPT;	/* an earlier recording kept it */
		return;
	}
	/* the newest mapping first: the likeliest to be there still */
	for (i = f->nholders; i-- > 0; ) {
		fd = open_held(f, &f->holders[i], path);
		if (fd < 0) {
			n = fd == -ENOENT ? -ESRCH : fd;
			continue;
		}
		n = sp_bidstore_put(k->dir, f->bid, f->len, fd);
		close(fd);
		if (n >= 0 || n == -EILSEQ)
			break;
	}
	if (n >= 0) {
		f->state = REC_KEEP_KEPT;
		f->bytes = (uint64_t)n;
		k->kept += n > 0;
		k->kept_bytes += (uint64_t)n;
		return;
	}
	f->state = REC_KEEP_FAILED;
	f->err = (int)n;
	k->failed++;
}

/* Is f still at its path?  Copy it when it is not. */
static void check(struct sp_recorder *r, struct rec_kfile *f)
{
	char path[4096];
	struct rec_stat now;
	struct stat st;
	int deleted;

	if (f->state != REC_KEEP_WATCH || !f->nholders)
		return;
	deleted = strip_deleted(f->path, path, sizeof(path));
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		f->checked = 1;
		keep(r, f, "deleted", path);
		return;
	}
	now = stat_of(&st);
	if (f->checked && !memcmp(&now, &f->seen, sizeof(now)))
		return;
	/* what /proc said was mapped is what is there: no need to read it */
	if (!f->checked && !deleted && f->ino && st.st_ino == f->ino &&
	    major(st.st_dev) == f->maj && minor(st.st_dev) == f->min) {
		f->checked = 1;
		f->seen = now;
		return;
	}
	f->checked = 1;
	if (path_has_bid(path, f)) {
		f->seen = now;
		return;
	}
	keep(r, f, deleted ? "deleted" : "replaced", path);
}

int rec_keep_pass(struct sp_recorder *r, int all)
{
	struct rec_keep *k = &r->keep;
	uint64_t now;
	size_t i;
	int full;

	if (!k->dir)
		return 0;
	now = sp_mono_ns();
	full = all || now - k->last_full >= FULL_PASS_NS;
	if (!full && !k->unchecked)
		return 0;
	if (full)
		k->last_full = now;
	k->unchecked = 0;
	for (i = 0; i < k->n; i++)
		if (full || !k->files[i].checked)
			check(r, &k->files[i]);
	return 0;
}

void rec_keep_finish(struct sp_recorder *r)
{
	struct rec_keep *k = &r->keep;
	struct sp_bidstore_usage u;

	/* only what this recording wrote can have taken the store over */
	if (!k->dir || !k->kept || k->trimmed)
		return;
	k->trimmed = 1;
	k->trim_err = sp_bidstore_trim(k->dir, r->o.cache_max ?
				       r->o.cache_max : UINT64_MAX,
				       (time_t)(r->start_realtime / 1000000000ull),
				       &u);
	if (k->trim_err)
		return;
	k->store_files = u.files;
	k->store_bytes = u.bytes;
	k->evicted = u.evicted;
}

int sp_recorder_kept(const struct sp_recorder *r, size_t i,
		     struct sp_record_kept *out)
{
	const struct rec_keep *k = &r->keep;
	size_t j;

	for (j = 0; j < k->n; j++) {
		const struct rec_kfile *f = &k->files[j];

		if (!f->why || i--)
			continue;
		memset(out, 0, sizeof(*out));
		out->path = f->path;
		sp_build_id_hex(f->bid, f->len, out->build_id);
		out->why = f->why;
		out->kept = f->state == REC_KEEP_KEPT;
		out->bytes = f->bytes;
		out->err = f->state == REC_KEEP_FAILED ? f->err : 0;
		return 0;
	}
	return -ENOENT;
}
