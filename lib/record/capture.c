/* SPDX-License-Identifier: MIT */
/* capture.c: kernel symbols, perf map text and [vdso] images, kept in the stream. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"
#include "base/hashtab.h"
#include "base/io.h"
#include "os/perfmap.h"
#include "os/procfs.h"
#include "recorder.h"

#define PERFMAP_CHUNK	(4u << 20)	/* text per PERFMAP record */
#define PMAP_HEAD	4096		/* bytes that tell one map from another */
#define KSYM_NAME_MAX	1024

void rec_capture_release(struct rec_capture *c)
{
	sp_ksyms_free(c->ks);
	free(c->ks_written);
	free(c->pmaps);
	free(c->vdso);
	memset(c, 0, sizeof(*c));
}

/* Kernel symbols --------------------------------------------------------- */

int rec_capture_load_ksyms(struct sp_recorder *r)
{
	struct rec_capture *c = &r->cap;
	size_t n;

	c->ks = sp_ksyms_new();
	if (!c->ks)
		return -ENOMEM;
	/* unreadable or hidden: samples keep their addresses, unnamed */
	if (sp_ksyms_load(c->ks, "/proc/kallsyms") == -ENOMEM)
		return -ENOMEM;
	n = sp_ksyms_count(c->ks);
	c->ks_written = calloc((n + 63) / 64 + 1, sizeof(*c->ks_written));
	return c->ks_written ? 0 : -ENOMEM;
}

void rec_capture_drop_ksyms(struct sp_recorder *r)
{
	sp_ksyms_free(r->cap.ks);
	free(r->cap.ks_written);
	r->cap.ks = NULL;
	r->cap.ks_written = NULL;
}

/*
 * The symbol of each kernel frame, chosen by the lookup the symbolizer will
 * make (os/kallsyms.h): the first entry is the interrupted IP, the others
 * are return addresses.
 */
int rec_capture_ksyms(struct sp_recorder *r, const struct sp_raw_sample *s)
{
	const uint64_t *ips = (const uint64_t *)(s + 1) + s->nr_regs;
	struct rec_capture *c = &r->cap;
	union {
		struct sp_ksym_rec k;
		uint8_t bytes[sizeof(struct sp_ksym_rec) + KSYM_NAME_MAX];
	} u;
	unsigned i;
	int e;

	if (!c->ks)
		return 0;
	for (i = 0; i < s->nr_kernel; i++) {
		const struct sp_ksym *k = sp_ksyms_lookup(c->ks, ips[i], i == 0);
		size_t x, nl;

		if (!k)
			continue;
		x = sp_ksyms_index(c->ks, k);
		if (c->ks_written[x / 64] & (1ull << (x % 64)))
			continue;
		c->ks_written[x / 64] |= 1ull << (x % 64);
		memset(&u.k, 0, sizeof(u.k));
		nl = sp_ksym_record_name(k, u.k.name, KSYM_NAME_MAX);
		u.k.hdr.type = SP_REC_KSYM;
		u.k.hdr.size = sp_align8(sizeof(u.k) + nl + 1);
		u.k.start = k->start;
		u.k.size = k->size;
		e = sp_out_rec(r->out, &u, sizeof(u.k) + nl + 1);
		if (e)
			return e;
		c->nksyms++;
	}
	return 0;
}

/* Perf maps -------------------------------------------------------------- */

/*
 * Where a process's perf map is: a JIT writes /tmp/perf-PID.map as it sees
 * /tmp and its pid, so a process in a container (another mount namespace
 * or root, another pid namespace) has it at
 * /proc/PID/root/tmp/perf-NSPID.map.  Looked up once, and again after an
 * exec.  The directory goes into dir (PATH_MAX bytes); 0 or -ENAMETOOLONG.
 */
static int pmap_dir(struct sp_recorder *r, struct rec_pmap *m, char *dir,
		    size_t size)
{
	pid_t nspid;
	int n;

	if (!m->placed) {
		m->placed = 1;
		m->root[0] = 0;
		m->name_pid = (uint32_t)m->pid;
		if (sp_procfs_nspid(m->pid, &nspid) == 0)
			m->name_pid = (uint32_t)nspid;
		if (sp_procfs_elsewhere(m->pid) == 1)
			snprintf(m->root, sizeof(m->root), "/proc/%d/root",
				 (int)m->pid);
	}
	n = snprintf(dir, size, "%s%s", m->root, r->perfmap_dir);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static struct rec_pmap *pmap_get(struct rec_capture *c, pid_t pid)
{
	size_t i;

	for (i = 0; i < c->npmaps; i++)
		if (c->pmaps[i].pid == pid)
			return &c->pmaps[i];
	return NULL;
}

int rec_pmap_follow(struct sp_recorder *r, pid_t pid, uid_t uid)
{
	struct rec_capture *c = &r->cap;
	struct rec_pmap *m = pmap_get(c, pid);

	if (m) {
		/* a pid reused by a new process: start afresh */
		if (m->exited) {
			memset(m, 0, sizeof(*m));
			m->pid = pid;
			m->uid = uid;
		}
		return 0;
	}
	if (SP_GROW(c->pmaps, c->pmaps_cap, c->npmaps + 1))
		return -ENOMEM;
	m = &c->pmaps[c->npmaps++];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->uid = uid;
	return 0;
}

/*
 * How much older than a fork a perf map may look and still be the new
 * process's: file times come from the kernel's coarse clock, a tick behind.
 */
#define PMAP_CLOCK_SLACK_NS 20000000ull

/*
 * The fingerprint of a map's first bytes, up to PMAP_HEAD of the off read:
 * a map cut and written again by a new process, or by the same one, is as
 * long as before or longer by the next look as often as not, and only its
 * first bytes tell that what is past off is not more of the same.
 */
static int pmap_head(int fd, off_t off, uint64_t *head, size_t *len)
{
	char buf[PMAP_HEAD];
	size_t want = off < PMAP_HEAD ? (size_t)off : PMAP_HEAD, got = 0;

	while (got < want) {
		ssize_t n = pread(fd, buf + got, want - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	*head = sp_hash_bytes(buf, got);
	*len = got;
	return 0;
}

/* Whether the first bytes of the map are still those read before. */
static int pmap_same_head(int fd, const struct rec_pmap *m)
{
	uint64_t head;
	size_t len;

	return !pmap_head(fd, (off_t)m->head_len, &head, &len) &&
	       len == m->head_len && head == m->head;
}

/*
 * A pid is reused long after its last process wrote its perf map, and
 * nothing removes such files: a map older than the fork belongs to a dead
 * process.  Its bytes count as read already, so that only what the new
 * process writes is recorded (and a rewrite resets, as any rewrite does).
 */
static void pmap_skip_stale(struct sp_recorder *r, struct rec_pmap *m,
			    uint64_t born)
{
	char path[4096], dir[4096];
	struct stat st;
	uint64_t mtime;
	int fd;

	if (pmap_dir(r, m, dir, sizeof(dir)) ||
	    sp_perfmap_path(path, sizeof(path), dir, m->name_pid) ||
	    stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
		(uint64_t)st.st_mtim.tv_nsec;
	if (mtime + PMAP_CLOCK_SLACK_NS >= born)
		return;
	fd = sp_perfmap_open(dir, m->name_pid, m->uid, NULL);
	if (fd < 0)
		return;
	if (!pmap_head(fd, st.st_size, &m->head, &m->head_len)) {
		m->seen = 1;
		m->dev = st.st_dev;
		m->ino = st.st_ino;
		m->size = st.st_size;
		m->mtime = st.st_mtim;
		m->off = st.st_size;
	}
	close(fd);
}

void rec_pmap_born(struct sp_recorder *r, pid_t pid, uint64_t time)
{
	struct rec_pmap *pm = pmap_get(&r->cap, pid);

	if (pm && !pm->seen)
		pmap_skip_stale(r, pm, sp_realtime_of(time));
}

int rec_pmap_fork(struct sp_recorder *r, pid_t pid, pid_t ppid,
		  uint64_t time)
{
	struct rec_pmap *pm = pmap_get(&r->cap, ppid);
	int e = rec_pmap_follow(r, pid, pm ? pm->uid : geteuid());

	if (!e)
		rec_pmap_born(r, pid, time);
	return e;
}

void rec_pmap_exit(struct sp_recorder *r, pid_t pid)
{
	struct rec_pmap *pm = pmap_get(&r->cap, pid);

	if (pm)
		pm->exited = 1;
}

void rec_pmap_exec(struct sp_recorder *r, pid_t pid)
{
	struct rec_pmap *pm = pmap_get(&r->cap, pid);

	if (pm)
		pm->placed = 0;
}

static int write_perfmap(struct sp_recorder *r, pid_t pid, uint32_t flags,
			 const char *text, size_t len)
{
	struct sp_perfmap_rec *o;
	size_t size = sp_align8(sizeof(*o) + len);
	int e;

	o = calloc(1, size);
	if (!o)
		return -ENOMEM;
	o->hdr.type = SP_REC_PERFMAP;
	o->hdr.size = (uint32_t)size;
	o->time = sp_mono_ns();
	o->pid = (uint32_t)pid;
	o->flags = flags;
	o->len = len;
	memcpy(o->text, text, len);
	e = sp_out_rec(r->out, o, size);
	free(o);
	if (!e)
		r->cap.perfmap_bytes += len;
	return e;
}

/*
 * Write what was appended to one perf map since the last look, whole lines
 * only.  The file is opened only when stat says it changed.
 */
static int pmap_read(struct sp_recorder *r, struct rec_pmap *m)
{
	char path[4096], dir[4096];
	struct stat st;
	uint32_t flags = 0;
	char *buf = NULL;
	off_t from, want;
	size_t got = 0, whole, done;
	int fd, e = 0;

	if (pmap_dir(r, m, dir, sizeof(dir)) ||
	    sp_perfmap_path(path, sizeof(path), dir, m->name_pid) ||
	    stat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != m->uid) {
		m->seen = 0;
		return 0;
	}
	if (m->seen && st.st_ino == m->ino && st.st_dev == m->dev &&
	    st.st_size == m->size && st.st_mtim.tv_sec == m->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == m->mtime.tv_nsec)
		return 0;
	fd = sp_perfmap_open(dir, m->name_pid, m->uid, NULL);
	if (fd < 0)
		return 0;
	if (!m->seen || st.st_ino != m->ino || st.st_dev != m->dev ||
	    st.st_size < m->off ||
	    (m->off && m->head_len && !pmap_same_head(fd, m))) {
		/* replaced or cut: what we wrote is stale (a stale map we
		 * skipped, pmap_skip_stale(), was never written) */
		if (m->written)
			flags = SP_PERFMAP_RESET;
		m->off = 0;
		m->head_len = 0;
	}
	m->seen = 1;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->size = st.st_size;
	m->mtime = st.st_mtim;
	from = m->off;
	want = st.st_size - from;
	if (want <= 0 && !flags) {
		close(fd);
		return 0;
	}
	if (want > 0) {
		buf = malloc((size_t)want);
		if (!buf) {
			close(fd);
			return -ENOMEM;
		}
		while (got < (size_t)want) {
			ssize_t n = pread(fd, buf + got, (size_t)want - got,
					  from + (off_t)got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
	}
	/* a line still being written waits for the next look */
	whole = got;
	while (whole && buf[whole - 1] != '\n')
		whole--;
	if (m->head_len < PMAP_HEAD && whole &&
	    pmap_head(fd, from + (off_t)whole, &m->head, &m->head_len))
		m->head_len = 0;	/* nothing to tell a rewrite by */
	close(fd);
	if (!whole && flags)
		e = write_perfmap(r, m->pid, flags, "", 0);
	for (done = 0; !e && done < whole;) {
		size_t n = whole - done;

		if (n > PERFMAP_CHUNK) {
			n = PERFMAP_CHUNK;
			while (n && buf[done + n - 1] != '\n')
				n--;
			if (!n)
				n = PERFMAP_CHUNK;
		}
		e = write_perfmap(r, m->pid, flags, buf + done, n);
		flags = 0;
		done += n;
	}
	free(buf);
	if (!e && (whole || flags))
		m->written = 1;
	if (!e)
		m->off = from + (off_t)whole;
	/* a partial line: look again next time even if nothing changes */
	if (whole != got)
		m->size = -1;
	return e;
}

int rec_perfmap_pass(struct sp_recorder *r)
{
	struct rec_capture *c = &r->cap;
	size_t i, k = 0;
	int e = 0;

	for (i = 0; i < c->npmaps; i++) {
		struct rec_pmap *m = &c->pmaps[i];

		if (!e)
			e = pmap_read(r, m);
		if (m->exited && !e)
			continue;	/* read a last time: forget it */
		c->pmaps[k++] = *m;
	}
	c->npmaps = k;
	return e;
}

/* [vdso] images ---------------------------------------------------------- */

static int find_vdso(const struct sp_procfs_map *m, void *arg)
{
	struct sp_procfs_map *out = arg;

	if (strcmp(m->path, "[vdso]"))
		return 0;
	out->start = m->start;
	out->end = m->end;
	return 1;
}

void rec_copy_own_vdso(struct sp_recorder *r)
{
	struct sp_procfs_map m = { 0 };

	if (sp_procfs_maps(getpid(), find_vdso, &m) != 1 || m.end <= m.start ||
	    m.end - m.start > (1u << 20))
		return;
	if (getauxval(AT_SYSINFO_EHDR) != m.start)
		return;
	r->cap.vdso = malloc(m.end - m.start);
	if (!r->cap.vdso)
		return;
	memcpy(r->cap.vdso, (const void *)(uintptr_t)m.start, m.end - m.start);
	r->cap.vdso_len = m.end - m.start;
}

/*
 * The kernel maps the same image into every 64-bit process, so ours
 * serves; another size (a 32-bit process) is read from the process.
 */
int rec_capture_vdso(struct sp_recorder *r, uint32_t pid, uint64_t start,
		     uint64_t len, uint64_t time)
{
	struct sp_image_rec *im;
	size_t out;

	if (!len || len > (1u << 20))
		return 0;
	out = sizeof(*im) + sp_align8(len);
	im = rec_enqueue(r, time, out);
	if (!im)
		return -ENOMEM;
	memset(im, 0, sizeof(*im));
	if (len == r->cap.vdso_len) {
		memcpy(im->data, r->cap.vdso, len);
	} else if (sp_procfs_read_mem((pid_t)pid, start, im->data, len)) {
		/* unreadable: leave a harmless record of nothing */
		len = 0;
	}
	im->hdr.type = SP_REC_IMAGE;
	im->hdr.size = (uint32_t)out;
	im->time = time;
	im->pid = pid;
	im->start = start;
	im->len = len;
	return 0;
}
