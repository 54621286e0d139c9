/* SPDX-License-Identifier: MIT */
/* record.c: attach to processes, drain the per-CPU buffers, write the raw stream. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "base/io.h"
#include "os/perf.h"
#include "os/procfs.h"
#include "format/raw.h"
#include "record.h"

/*
 * x86_64 user registers AX..IP, FLAGS, CS, SS, R8-R15: bits 0-23 without
 * DS, ES, FS, GS (12-15), which the kernel refuses.
 */
#define REGS_MASK	0xff0fffull
#define MAX_CPUS	4096
#define MAX_RESCANS	100
#define STOP_WAIT_NS	(2000 * 1000 * 1000ull)	/* for a thread to pause */
#define FD_RESERVE	64	/* descriptors kept for everything else */
#define PERFMAP_CHUNK	(4u << 20)	/* text per PERFMAP record */
/* a sample's bytes besides its stack: fields, 20 registers, 127 kernel ips */
#define SAMPLE_OVERHEAD	1536

/*
 * How long after its timestamp a record may still be unpublished in a
 * buffer: the kernel stamps a record and then writes it with preemption
 * off, so this is microseconds on bare metal, but a virtual CPU can be
 * descheduled in between.  Records younger than this at the start of a pass
 * wait for the next one; a few milliseconds of queue cost nothing.
 */
#define HORIZON_NS	(10 * 1000 * 1000ull)

/* flags of a thread or process id */
#define ID_ATTACHED	0x1	/* we opened events for it */
#define ID_FORKED	0x2	/* a FORK record announced it: it inherited events */
#define ID_SEEN		0x4	/* in any record: it has events of some kind */

struct idset {
	uint32_t *keys;		/* 0: empty */
	uint8_t *flags;
	size_t cap, n;		/* cap is a power of 2 */
};

struct event {
	int fd;			/* -1 once closed */
	uint32_t buf;		/* index of its CPU's buffer */
	int hup;
};

struct cpubuf {
	int cpu;
	unsigned pages;
	struct sp_ring *ring;
	size_t owner;		/* index into events of the one mapped */
	size_t polled;		/* index into events of the polled one */
};

struct queued {
	uint64_t time, seq;
	size_t off;
};

/* Converted records waiting to be written in time order. */
struct queue {
	uint8_t *buf;
	size_t len, cap;
	struct queued *v;
	size_t n, vcap;
};

struct thread {
	pid_t pid, tid;
	size_t first, n;	/* its events: events[first .. first + n) */
	int exited;		/* an EXIT record came: close when hung up */
};

/* A thread paused for SP_ATTACH_STOP. */
struct tracee {
	pid_t pid, tid;
	int stopped;
	int sig;		/* a signal it was about to take: given back */
};

/* Text symbols of /proc/kallsyms, sorted by address. */
struct ksyms {
	uint64_t *addr;
	uint32_t *name;		/* offsets into names */
	char *names;
	size_t n;
	uint64_t *written;	/* bit i: the KSYM of symbol i is out */
};

/* What was read of /tmp/perf-PID.map for one process. */
struct pmap {
	pid_t pid;
	uid_t uid;
	int seen;		/* the file existed at the last look */
	dev_t dev;
	ino_t ino;
	off_t off;		/* bytes of whole lines already written */
	off_t size;
	struct timespec mtime;
	int exited;		/* read once more, then forget */
};

/* Build ids by file, so each file is read once. */
struct bidcache {
	uint32_t maj, min;
	uint64_t ino;
	int len;		/* 0: none, < 0: unreadable */
	uint8_t id[20];
};

struct sp_recorder {
	struct sp_record_opts o;
	char event[32];
	struct sp_out *out;
	struct perf_event_attr attr;
	unsigned nregs;
	int kernel_decided;
	long page;
	unsigned min_pages;	/* smallest buffer holding two samples */

	struct cpubuf *bufs;
	unsigned nbufs;
	struct event *events;
	size_t nevents, events_cap;
	struct pollfd *pfd;

	pid_t *targets;
	size_t ntargets, targets_cap;
	size_t ntargets_given;	/* the first ones: asked for, not found */
	uint64_t attached_threads;
	struct thread *attached;
	size_t nattached, attached_cap;
	size_t nexited;		/* attached threads with exited set */
	struct tracee *tracees;
	size_t ntracees, tracees_cap;
	uint64_t pause_ns;

	struct ksyms ks;
	uint64_t nksyms;
	struct pmap *pmaps;
	size_t npmaps, pmaps_cap;
	uint64_t perfmap_bytes;
	char perfmap_dir[256];
	struct bidcache *bids;
	size_t nbids, bids_cap;
	uint8_t *vdso;		/* our own [vdso]: the same bytes as theirs */
	size_t vdso_len;

	struct queue q, spare;
	uint64_t seq, last_written;
	struct idset threads, procs;

	uint64_t samples, lost, lost_records, throttles, late, bad;
	uint64_t start_time, end_time;
	int did_attach, attached_ok, disabled;
	char err[256];
};

static int fail(struct sp_recorder *r, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sp_recorder *r, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return e;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- id sets ---------------------------------------------------------- */

static size_t id_slot(const struct idset *s, uint32_t id)
{
	size_t i = (id * 2654435761u) & (s->cap - 1);

	while (s->keys[i] && s->keys[i] != id)
		i = (i + 1) & (s->cap - 1);
	return i;
}

/* Add flags to id.  Returns 0 or -ENOMEM. */
static int id_add(struct idset *s, uint32_t id, uint8_t flags)
{
	size_t i;

	if (!id)
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		struct idset ns = { 0 };
		size_t j;

		ns.cap = s->cap ? s->cap * 2 : 64;
		ns.keys = calloc(ns.cap, sizeof(*ns.keys));
		ns.flags = calloc(ns.cap, sizeof(*ns.flags));
		if (!ns.keys || !ns.flags) {
			free(ns.keys);
			free(ns.flags);
			return -ENOMEM;
		}
		for (j = 0; j < s->cap; j++) {
			if (!s->keys[j])
				continue;
			i = id_slot(&ns, s->keys[j]);
			ns.keys[i] = s->keys[j];
			ns.flags[i] = s->flags[j];
		}
		ns.n = s->n;
		free(s->keys);
		free(s->flags);
		*s = ns;
	}
	i = id_slot(s, id);
	if (!s->keys[i]) {
		s->keys[i] = id;
		s->n++;
	}
	s->flags[i] |= flags | ID_SEEN;
	return 0;
}

static uint8_t id_flags(const struct idset *s, uint32_t id)
{
	size_t i;

	if (!s->cap || !id)
		return 0;
	i = id_slot(s, id);
	return s->keys[i] ? s->flags[i] : 0;
}

static void id_release(struct idset *s)
{
	free(s->keys);
	free(s->flags);
	memset(s, 0, sizeof(*s));
}

/* ---- the queue -------------------------------------------------------- */

/*
 * Room for a record of size bytes (a multiple of 8) stamped time; its last 8
 * bytes are zeroed so padding needs no care.  NULL when out of memory.  The
 * pointer is valid until the next q_add().
 */
static void *q_add(struct queue *q, uint64_t time, uint64_t seq, size_t size)
{
	uint8_t *p;

	if (q->len + size > q->cap) {
		size_t cap = q->cap ? q->cap : 1 << 20;
		uint8_t *b;

		while (cap < q->len + size)
			cap *= 2;
		b = realloc(q->buf, cap);
		if (!b)
			return NULL;
		q->buf = b;
		q->cap = cap;
	}
	if (q->n == q->vcap) {
		size_t cap = q->vcap ? q->vcap * 2 : 1024;
		struct queued *v = realloc(q->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		q->v = v;
		q->vcap = cap;
	}
	p = q->buf + q->len;
	memset(p + size - 8, 0, 8);
	q->v[q->n].time = time;
	q->v[q->n].seq = seq;
	q->v[q->n].off = q->len;
	q->n++;
	q->len += size;
	return p;
}

static void q_release(struct queue *q)
{
	free(q->buf);
	free(q->v);
	memset(q, 0, sizeof(*q));
}

static int cmp_queued(const void *a, const void *b)
{
	const struct queued *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* ---- kernel symbols -------------------------------------------------- */

static void ksyms_release(struct ksyms *k)
{
	free(k->addr);
	free(k->name);
	free(k->names);
	free(k->written);
	memset(k, 0, sizeof(*k));
}

struct ksym_ent {
	uint64_t addr;
	uint32_t name;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

/*
 * Load the text symbols of /proc/kallsyms.  Returns 0 (also when they are
 * hidden: every address reads 0, and none are loaded) or -ENOMEM.
 */
static int ksyms_load(struct ksyms *k)
{
	struct ksym_ent *v = NULL, *nv;
	size_t n = 0, cap = 0, len = 0, ncap = 0, i;
	char *line = NULL, *names = NULL, *nn;
	size_t lcap = 0;
	int nonzero = 0, e = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (getline(&line, &lcap, f) > 0) {
		char *p = line, *end, *name, *mod;
		unsigned long long a;
		size_t nl, ml;
		char t;

		a = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		t = end[1];
		if (t != 't' && t != 'T' && t != 'w' && t != 'W')
			continue;
		if (end[2] != ' ')
			continue;
		name = end + 3;
		nl = strcspn(name, "\t\n");
		mod = name[nl] == '\t' ? name + nl + 1 : NULL;
		ml = mod ? strcspn(mod, "\n") : 0;
		if (a)
			nonzero = 1;
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		while (len + nl + ml + 2 > ncap) {
			ncap = ncap ? ncap * 2 : 1 << 22;
			nn = realloc(names, ncap);
			if (!nn)
				goto nomem;
			names = nn;
		}
		v[n].addr = a;
		v[n].name = (uint32_t)len;
		n++;
		memcpy(names + len, name, nl);
		len += nl;
		if (ml) {
			names[len++] = ' ';
			memcpy(names + len, mod, ml);
			len += ml;
		}
		names[len++] = 0;
		if (len > UINT32_MAX - 4096)
			break;
	}
	if (!nonzero || !n)
		goto out;
	qsort(v, n, sizeof(*v), cmp_ksym);
	k->addr = malloc(n * sizeof(*k->addr));
	k->name = malloc(n * sizeof(*k->name));
	k->written = calloc((n + 63) / 64, sizeof(*k->written));
	if (!k->addr || !k->name || !k->written) {
		ksyms_release(k);
		goto nomem;
	}
	for (i = 0; i < n; i++) {
		k->addr[i] = v[i].addr;
		k->name[i] = v[i].name;
	}
	k->n = n;
	k->names = names;
	names = NULL;
	goto out;
nomem:
	e = -ENOMEM;
out:
	free(v);
	free(names);
	free(line);
	fclose(f);
	return e;
}

/* Index of the symbol holding addr, or -1. */
static ssize_t ksym_find(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;

	if (!k->n || addr < k->addr[0])
		return -1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->addr[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return (ssize_t)lo;
}

/* Write the KSYM records a sample's kernel ips need and that are not out yet. */
static int write_ksyms(struct sp_recorder *r, const struct sp_raw_sample *s)
{
	const uint64_t *ips = (const uint64_t *)(s + 1) + s->nr_regs;
	union {
		struct sp_ksym_rec k;
		uint8_t bytes[sizeof(struct sp_ksym_rec) + 1024];
	} u;
	struct ksyms *k = &r->ks;
	unsigned i;
	int e;

	for (i = 0; i < s->nr_kernel; i++) {
		ssize_t x = ksym_find(k, ips[i]);
		size_t j, nl;
		const char *name;

		if (x < 0 || (k->written[x / 64] & (1ull << (x % 64))))
			continue;
		k->written[x / 64] |= 1ull << (x % 64);
		name = k->names + k->name[x];
		nl = strnlen(name, sizeof(u.bytes) - sizeof(u.k) - 1);
		memset(&u.k, 0, sizeof(u.k));
		u.k.hdr.type = SP_REC_KSYM;
		u.k.hdr.size = sp_align8(sizeof(u.k) + nl + 1);
		u.k.start = k->addr[x];
		/* aliases share an address: the size runs to the next one */
		for (j = (size_t)x + 1; j < k->n && k->addr[j] == k->addr[x]; j++)
			;
		u.k.size = j < k->n ? k->addr[j] - k->addr[x] : 0;
		memcpy(u.k.name, name, nl);
		u.k.name[nl] = 0;
		e = sp_out_rec(r->out, &u, sizeof(u.k) + nl + 1);
		if (e)
			return e;
		r->nksyms++;
	}
	return 0;
}

/* ---- perf maps -------------------------------------------------------- */

/* Follow /tmp/perf-PID.map of process pid, owned by uid. */
static int pmap_add(struct sp_recorder *r, pid_t pid, uid_t uid)
{
	size_t i;

	for (i = 0; i < r->npmaps; i++) {
		if (r->pmaps[i].pid == pid) {
			/* a pid reused by a new process: start afresh */
			if (r->pmaps[i].exited) {
				memset(&r->pmaps[i], 0, sizeof(r->pmaps[i]));
				r->pmaps[i].pid = pid;
				r->pmaps[i].uid = uid;
			}
			return 0;
		}
	}
	if (r->npmaps == r->pmaps_cap) {
		size_t cap = r->pmaps_cap ? r->pmaps_cap * 2 : 16;
		struct pmap *v = realloc(r->pmaps, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->pmaps = v;
		r->pmaps_cap = cap;
	}
	memset(&r->pmaps[r->npmaps], 0, sizeof(r->pmaps[0]));
	r->pmaps[r->npmaps].pid = pid;
	r->pmaps[r->npmaps].uid = uid;
	r->npmaps++;
	return 0;
}

static struct pmap *pmap_get(struct sp_recorder *r, pid_t pid)
{
	size_t i;

	for (i = 0; i < r->npmaps; i++)
		if (r->pmaps[i].pid == pid)
			return &r->pmaps[i];
	return NULL;
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
	o->time = mono_ns();
	o->pid = (uint32_t)pid;
	o->flags = flags;
	o->len = len;
	memcpy(o->text, text, len);
	e = sp_out_rec(r->out, o, size);
	free(o);
	if (!e)
		r->perfmap_bytes += len;
	return e;
}

/*
 * Write what was appended to one perf map since the last look, whole lines
 * only.  The file is opened only when stat says it changed.
 */
static int pmap_read(struct sp_recorder *r, struct pmap *m)
{
	char path[320];
	struct stat st;
	uint32_t flags = 0;
	char *buf = NULL;
	off_t from, want;
	size_t got = 0, whole, done;
	int fd, e = 0;

	snprintf(path, sizeof(path), "%s/perf-%d.map", r->perfmap_dir,
		 (int)m->pid);
	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != m->uid) {
		m->seen = 0;
		return 0;
	}
	if (m->seen && st.st_ino == m->ino && st.st_dev == m->dev &&
	    st.st_size == m->size && st.st_mtim.tv_sec == m->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == m->mtime.tv_nsec)
		return 0;
	if (!m->seen || st.st_ino != m->ino || st.st_dev != m->dev ||
	    st.st_size < m->off) {
		if (m->off)	/* replaced or cut: what we wrote is stale */
			flags = SP_PERFMAP_RESET;
		m->off = 0;
	}
	m->seen = 1;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->size = st.st_size;
	m->mtime = st.st_mtim;
	from = m->off;
	want = st.st_size - from;
	if (want <= 0 && !flags)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || st.st_uid != m->uid || !S_ISREG(st.st_mode)) {
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
	close(fd);
	/* a line still being written waits for the next look */
	whole = got;
	while (whole && buf[whole - 1] != '\n')
		whole--;
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
	if (!e)
		m->off = from + (off_t)whole;
	/* a partial line: look again next time even if nothing changes */
	if (whole != got)
		m->size = -1;
	return e;
}

static int perfmap_pass(struct sp_recorder *r)
{
	size_t i, k = 0;
	int e = 0;

	for (i = 0; i < r->npmaps; i++) {
		struct pmap *m = &r->pmaps[i];

		if (!e)
			e = pmap_read(r, m);
		if (m->exited && !e)
			continue;	/* read a last time: forget it */
		r->pmaps[k++] = *m;
	}
	r->npmaps = k;
	return e;
}

/* ---- converting kernel records ---------------------------------------- */

/* The sample_id_all trailer for sample_type TID | TIME | CPU. */
struct id_trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

static int trailer(const struct perf_event_header *h, size_t fixed,
		   struct id_trailer *t)
{
	if (h->size < sizeof(*h) + fixed + sizeof(*t))
		return -1;
	memcpy(t, (const uint8_t *)h + h->size - sizeof(*t), sizeof(*t));
	return 0;
}

/* A cursor over a record's payload. */
struct cur {
	const uint8_t *p, *end;
};

static int take(struct cur *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	memcpy(out, c->p, n);
	c->p += n;
	return 0;
}

static int skip(struct cur *c, size_t n, const uint8_t **at)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	*at = c->p;
	c->p += n;
	return 0;
}

static int note_ids(struct sp_recorder *r, uint32_t pid, uint32_t tid,
		    uint8_t flags)
{
	if (id_add(&r->threads, tid, flags) || id_add(&r->procs, pid, 0))
		return -ENOMEM;
	return 0;
}

static int conv_sample(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	struct {
		uint64_t ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t period;
	} f;
	const uint8_t *ips = NULL, *regs = NULL, *stack = NULL;
	uint64_t nr = 0, abi, size, dyn = 0, i, k = 0, nk = 0;
	struct sp_raw_sample *s;
	size_t out, nregs = 0;
	uint8_t *p;

	if (take(&c, &f, sizeof(f)))
		goto bad;
	if (r->attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (take(&c, &nr, 8) || nr > 0xffff || skip(&c, nr * 8, &ips))
			goto bad;
	}
	if (take(&c, &abi, 8))
		goto bad;
	if (abi) {
		nregs = r->nregs;
		if (skip(&c, nregs * 8, &regs))
			goto bad;
	}
	if (take(&c, &size, 8))
		goto bad;
	if (size) {
		if (skip(&c, size, &stack) || take(&c, &dyn, 8) || dyn > size)
			goto bad;
	}
	/* kernel frames: the entries after PERF_CONTEXT_KERNEL up to a marker */
	for (i = 0; i < nr; i++) {
		uint64_t v;

		memcpy(&v, ips + i * 8, 8);
		if (v == PERF_CONTEXT_KERNEL) {
			k = i + 1;
			for (nk = 0; k + nk < nr; nk++) {
				memcpy(&v, ips + (k + nk) * 8, 8);
				if (v >= (uint64_t)PERF_CONTEXT_MAX)
					break;
			}
			break;
		}
	}
	out = sizeof(*s) + nregs * 8 + nk * 8 + sp_align8(dyn);
	s = q_add(&r->q, f.time, r->seq++, out);
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->hdr.type = SP_REC_SAMPLE;
	s->hdr.size = (uint32_t)out;
	s->time = f.time;
	s->pid = f.pid;
	s->tid = f.tid;
	s->cpu = f.cpu;
	s->misc = h->misc;
	s->abi = (uint16_t)abi;
	s->period = f.period;
	s->ip = f.ip;
	s->nr_regs = (uint16_t)nregs;
	s->nr_kernel = (uint16_t)nk;
	s->stack_len = (uint32_t)dyn;
	p = (uint8_t *)(s + 1);
	if (nregs)
		memcpy(p, regs, nregs * 8);
	p += nregs * 8;
	if (nk)
		memcpy(p, ips + k * 8, nk * 8);
	p += nk * 8;
	if (dyn)
		memcpy(p, stack, dyn);
	return note_ids(r, f.pid, f.tid, 0);
bad:
	r->bad++;
	return 0;
}

/*
 * A process's new [vdso] (after an exec): its bytes exist on no disk.  The
 * kernel maps the same image into every 64-bit process, so ours serves;
 * another size (a 32-bit process) is read from the process.
 */
static int queue_vdso(struct sp_recorder *r, uint32_t pid, uint64_t start,
		      uint64_t len, uint64_t time)
{
	struct sp_image_rec *im;
	size_t out;

	if (!len || len > (1u << 20))
		return 0;
	out = sizeof(*im) + sp_align8(len);
	im = q_add(&r->q, time, r->seq++, out);
	if (!im)
		return -ENOMEM;
	memset(im, 0, sizeof(*im));
	if (len == r->vdso_len) {
		memcpy(im->data, r->vdso, len);
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

static int conv_mmap(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
	} f;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		} dev;
		struct {
			uint8_t size, res8;
			uint16_t res16;
			uint8_t id[20];
		} bid;
	} u;
	uint32_t prot = PROT_READ | PROT_EXEC, flags = 0;
	struct id_trailer t;
	struct sp_mmap_rec *m;
	const char *name;
	size_t namemax, namelen, out;

	if (trailer(h, 0, &t) || take(&c, &f, sizeof(f)))
		goto bad;
	c.end -= sizeof(t);
	if (h->type == PERF_RECORD_MMAP2) {
		if (take(&c, &u, sizeof(u)) || take(&c, &prot, 4) ||
		    take(&c, &flags, 4))
			goto bad;
	} else {
		memset(&u, 0, sizeof(u));
		if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
			prot = PROT_READ;
	}
	if (!(prot & PROT_EXEC))
		return 0;
	if (c.p >= c.end)
		goto bad;
	name = (const char *)c.p;
	namemax = (size_t)(c.end - c.p);
	namelen = strnlen(name, namemax);
	if (namelen == namemax)
		goto bad;
	out = sp_align8(sizeof(*m) + namelen + 1);
	m = q_add(&r->q, t.time, r->seq++, out);
	if (!m)
		return -ENOMEM;
	memset(m, 0, sizeof(*m));
	m->hdr.type = SP_REC_MMAP;
	m->hdr.size = (uint32_t)out;
	m->time = t.time;
	m->pid = f.pid;
	m->tid = f.tid;
	m->start = f.addr;
	m->len = f.len;
	m->pgoff = f.pgoff;
	if (h->type == PERF_RECORD_MMAP2 &&
	    (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m->build_id_size = u.bid.size > 20 ? 20 : u.bid.size;
		memcpy(m->build_id, u.bid.id, m->build_id_size);
	} else {
		m->maj = u.dev.maj;
		m->min = u.dev.min;
		m->ino = u.dev.ino;
		m->ino_generation = u.dev.ino_generation;
	}
	m->prot = prot;
	m->mflags = flags;
	memcpy(m->filename, name, namelen + 1);
	if (!strcmp(name, "[vdso]"))
		return queue_vdso(r, f.pid, f.addr, f.len, t.time);
	return 0;
bad:
	r->bad++;
	return 0;
}

static int conv_comm(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	struct id_trailer t;
	uint32_t ids[2];
	struct sp_comm_rec *o;
	size_t n;

	if (trailer(h, 8, &t) || take(&c, ids, sizeof(ids)))
		goto bad;
	c.end -= sizeof(t);
	n = strnlen((const char *)c.p, (size_t)(c.end - c.p));
	if (n == (size_t)(c.end - c.p))
		goto bad;
	o = q_add(&r->q, t.time, r->seq++, sizeof(*o));
	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->hdr.type = SP_REC_COMM;
	o->hdr.size = sizeof(*o);
	o->time = t.time;
	o->pid = ids[0];
	o->tid = ids[1];
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
		o->flags = SP_COMM_EXEC;
	memcpy(o->comm, c.p, n < sizeof(o->comm) ? n : sizeof(o->comm) - 1);
	return note_ids(r, ids[0], ids[1], 0);
bad:
	r->bad++;
	return 0;
}

/* An attached thread has exited: its events close once they hang up. */
static void thread_exited(struct sp_recorder *r, pid_t tid)
{
	size_t i;

	for (i = r->nattached; i-- > 0;) {
		if (r->attached[i].tid == tid) {
			if (!r->attached[i].exited) {
				r->attached[i].exited = 1;
				r->nexited++;
			}
			return;
		}
	}
}

static int conv_task(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	struct {
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} f;
	struct sp_task_rec *o;
	int fork = h->type == PERF_RECORD_FORK;

	if (take(&c, &f, sizeof(f)))
		goto bad;
	o = q_add(&r->q, f.time, r->seq++, sizeof(*o));
	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->hdr.type = fork ? SP_REC_FORK : SP_REC_EXIT;
	o->hdr.size = sizeof(*o);
	o->time = f.time;
	o->pid = f.pid;
	o->ppid = f.ppid;
	o->tid = f.tid;
	o->ptid = f.ptid;
	if (fork) {
		if (f.pid != f.ppid) {
			struct pmap *pm = pmap_get(r, (pid_t)f.ppid);
			uid_t uid = pm ? pm->uid : geteuid();

			if (pmap_add(r, (pid_t)f.pid, uid))
				return -ENOMEM;
		}
		return note_ids(r, f.pid, f.tid, ID_FORKED);
	}
	if (f.pid == f.tid) {
		struct pmap *pm = pmap_get(r, (pid_t)f.pid);

		if (pm)
			pm->exited = 1;
	}
	if (id_flags(&r->threads, f.tid) & ID_ATTACHED)
		thread_exited(r, (pid_t)f.tid);
	return 0;
bad:
	r->bad++;
	return 0;
}

static int conv_lost(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	uint64_t f[2];
	struct id_trailer t;
	struct sp_lost_rec *o;

	if (trailer(h, sizeof(f), &t) || take(&c, f, sizeof(f)))
		goto bad;
	o = q_add(&r->q, t.time, r->seq++, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->hdr.type = SP_REC_LOST;
	o->hdr.size = sizeof(*o);
	o->time = t.time;
	o->id = f[0];
	o->lost = f[1];
	r->lost += f[1];
	r->lost_records++;
	return 0;
bad:
	r->bad++;
	return 0;
}

static int conv_throttle(struct sp_recorder *r,
			 const struct perf_event_header *h)
{
	struct cur c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	uint64_t f[3];		/* time, id, stream_id */
	struct sp_throttle_rec *o;

	if (take(&c, f, sizeof(f)))
		goto bad;
	o = q_add(&r->q, f[0], r->seq++, sizeof(*o));
	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->hdr.type = SP_REC_THROTTLE;
	o->hdr.size = sizeof(*o);
	o->time = f[0];
	o->id = f[1];
	o->throttled = h->type == PERF_RECORD_THROTTLE;
	if (o->throttled)
		r->throttles++;
	return 0;
bad:
	r->bad++;
	return 0;
}

static int convert(struct sp_recorder *r, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return conv_sample(r, h);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return conv_mmap(r, h);
	case PERF_RECORD_COMM:
		return conv_comm(r, h);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return conv_task(r, h);
	case PERF_RECORD_LOST:
		return conv_lost(r, h);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return conv_throttle(r, h);
	default:
		return 0;
	}
}

/* Move everything the buffers hold into the queue. */
static int collect(struct sp_recorder *r)
{
	const struct perf_event_header *h;
	unsigned i;
	int e;

	for (i = 0; i < r->nbufs; i++) {
		struct sp_ring *ring = r->bufs[i].ring;

		if (!ring || !sp_ring_begin(ring))
			continue;
		while ((h = sp_ring_next(ring))) {
			e = convert(r, h);
			if (e) {
				sp_ring_end(ring);
				return fail(r, e, "out of memory queueing records");
			}
		}
		sp_ring_end(ring);
	}
	return 0;
}

/* Write the queued records stamped at most horizon, in time order. */
static int write_until(struct sp_recorder *r, uint64_t horizon)
{
	struct queue *q = &r->q, *sp = &r->spare, tmp;
	size_t i, j;
	int e;

	if (!q->n)
		return 0;
	qsort(q->v, q->n, sizeof(*q->v), cmp_queued);
	for (i = 0; i < q->n && q->v[i].time <= horizon; i++) {
		const struct sp_rec_hdr *h = (const void *)(q->buf + q->v[i].off);

		if (q->v[i].time < r->last_written)
			r->late++;
		else
			r->last_written = q->v[i].time;
		if (h->type == SP_REC_SAMPLE && r->ks.n) {
			e = write_ksyms(r, (const struct sp_raw_sample *)h);
			if (e)
				return fail(r, e, "cannot write the raw stream: %s",
					    strerror(-e));
		}
		e = sp_out_write(r->out, h, h->size);
		if (e)
			return fail(r, e, "cannot write the raw stream: %s",
				    strerror(-e));
		if (h->type == SP_REC_SAMPLE)
			r->samples++;
	}
	sp->len = 0;
	sp->n = 0;
	for (j = i; j < q->n; j++) {
		const struct sp_rec_hdr *h = (const void *)(q->buf + q->v[j].off);
		void *p = q_add(sp, q->v[j].time, q->v[j].seq, h->size);

		if (!p)
			return fail(r, -ENOMEM, "out of memory queueing records");
		memcpy(p, h, h->size);
	}
	tmp = *q;
	*q = *sp;
	*sp = tmp;
	return 0;
}

/* ---- public API ------------------------------------------------------- */

void sp_record_opts_init(struct sp_record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->frequency = SP_RECORD_DEFAULT_FREQ;
	o->stack_size = SP_RECORD_DEFAULT_STACK;
	o->event = "cpu-clock";
	o->pages = 0;
	o->kernel = SP_RECORD_KERNEL_AUTO;
	o->attach = SP_ATTACH_STOP;
	o->attach_hold_ms = 0;
	o->perfmap_dir = NULL;
}

long long sp_record_max_frequency(void)
{
	long long v;
	int e = sp_procfs_read_ll("/proc/sys/kernel/perf_event_max_sample_rate",
				  &v);

	return e ? e : v;
}

static int find_vdso(const struct sp_procfs_map *m, void *arg)
{
	struct sp_procfs_map *out = arg;

	if (strcmp(m->path, "[vdso]"))
		return 0;
	out->start = m->start;
	out->end = m->end;
	return 1;
}

/* Keep a copy of our own [vdso], which is every 64-bit process's. */
static void copy_own_vdso(struct sp_recorder *r)
{
	struct sp_procfs_map m = { 0 };

	if (sp_procfs_maps(getpid(), find_vdso, &m) != 1 || m.end <= m.start ||
	    m.end - m.start > (1u << 20))
		return;
	if (getauxval(AT_SYSINFO_EHDR) != m.start)
		return;
	r->vdso = malloc(m.end - m.start);
	if (!r->vdso)
		return;
	memcpy(r->vdso, (const void *)(uintptr_t)m.start, m.end - m.start);
	r->vdso_len = m.end - m.start;
}

struct sp_recorder *sp_recorder_new(const struct sp_record_opts *o,
				    struct sp_out *out)
{
	struct sp_recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	snprintf(r->event, sizeof(r->event), "%s", o->event ? o->event : "");
	r->o.event = r->event;
	snprintf(r->perfmap_dir, sizeof(r->perfmap_dir), "%s",
		 o->perfmap_dir ? o->perfmap_dir : "/tmp");
	r->o.perfmap_dir = r->perfmap_dir;
	r->out = out;
	r->page = sysconf(_SC_PAGESIZE);
	copy_own_vdso(r);
	return r;
}

static void resume_all(struct sp_recorder *r);

void sp_recorder_free(struct sp_recorder *r)
{
	size_t i;

	if (!r)
		return;
	resume_all(r);
	for (i = 0; i < r->nbufs; i++)
		sp_ring_free(r->bufs[i].ring);
	for (i = 0; i < r->nevents; i++)
		if (r->events[i].fd >= 0)
			close(r->events[i].fd);
	free(r->bufs);
	free(r->events);
	free(r->pfd);
	free(r->targets);
	free(r->attached);
	free(r->tracees);
	free(r->pmaps);
	free(r->bids);
	free(r->vdso);
	ksyms_release(&r->ks);
	q_release(&r->q);
	q_release(&r->spare);
	id_release(&r->threads);
	id_release(&r->procs);
	free(r);
}

const char *sp_recorder_error(const struct sp_recorder *r)
{
	return r->err;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int not_permitted(struct sp_recorder *r, pid_t pid, int e)
{
	long long paranoid;

	if (sp_procfs_read_ll("/proc/sys/kernel/perf_event_paranoid",
			      &paranoid))
		return fail(r, e, "not permitted to profile %d; run as root or grant CAP_PERFMON",
			    (int)pid);
	return fail(r, e, "not permitted to profile %d: perf_event_paranoid is %lld; run as root or grant CAP_PERFMON",
		    (int)pid, paranoid);
}

static size_t open_fds(const struct sp_recorder *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nevents; i++)
		n += r->events[i].fd >= 0;
	return n;
}

static int open_error(struct sp_recorder *r, pid_t pid, pid_t tid, int cpu,
		      int e)
{
	struct rlimit rl;

	switch (-e) {
	case EACCES:
	case EPERM:
		return not_permitted(r, pid, -EACCES);
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return fail(r, -EOPNOTSUPP, "event '%s' is not supported here: %s",
			    r->event, r->attr.type == PERF_TYPE_HARDWARE ?
			    "no hardware counters for sampling (try cpu-clock)" :
			    strerror(-e));
	case EMFILE:
	case ENFILE:
		getrlimit(RLIMIT_NOFILE, &rl);
		return fail(r, -EMFILE, "too many open files: %zu events open, RLIMIT_NOFILE is %llu",
			    open_fds(r), (unsigned long long)rl.rlim_cur);
	default:
		return fail(r, e, "cannot open event '%s' for thread %d on cpu %d: %s",
			    r->event, (int)tid, cpu, strerror(-e));
	}
}

/* Open one event and give it to its CPU's buffer, mapping that first. */
static int open_one(struct sp_recorder *r, pid_t pid, pid_t tid, unsigned b)
{
	struct cpubuf *cb = &r->bufs[b];
	int fd, e;

	for (;;) {
		r->attr.wakeup_watermark = (uint32_t)(cb->pages * r->page / 4);
		fd = sp_perf_open(&r->attr, tid, cb->cpu);
		if (fd == -EINVAL && r->attr.build_id) {
			/* before 5.12: MMAP2 records carry device and inode */
			r->attr.build_id = 0;
			continue;
		}
		if ((fd == -EACCES || fd == -EPERM) && !r->kernel_decided &&
		    r->o.kernel == SP_RECORD_KERNEL_AUTO) {
			r->attr.exclude_kernel = 1;
			r->attr.sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
			r->attr.exclude_callchain_user = 0;
			r->attr.sample_max_stack = 0;
			r->kernel_decided = 1;
			continue;
		}
		if (fd < 0)
			return fd == -ESRCH ? fd : open_error(r, pid, tid, cb->cpu, fd);
		r->kernel_decided = 1;
		if (cb->ring) {
			e = sp_perf_set_output(fd, sp_ring_fd(cb->ring));
			if (e) {
				close(fd);
				return fail(r, e, "cannot share the buffer of cpu %d: %s",
					    cb->cpu, strerror(-e));
			}
			break;
		}
		cb->ring = sp_ring_new(fd, cb->pages);
		if (cb->ring)
			break;
		e = -errno;
		close(fd);
		if ((e == -EPERM || e == -ENOMEM) && !r->o.pages &&
		    cb->pages / 2 >= r->min_pages) {
			cb->pages /= 2;	/* the watermark follows on reopening */
			continue;
		}
		return fail(r, e, "cannot map a %u-page buffer for cpu %d: %s",
			    cb->pages, cb->cpu, strerror(-e));
	}
	if (r->nevents == r->events_cap) {
		size_t cap = r->events_cap ? r->events_cap * 2 : 64;
		struct event *v = realloc(r->events, cap * sizeof(*v));

		if (!v) {
			close(fd);
			return fail(r, -ENOMEM, "out of memory");
		}
		r->events = v;
		r->events_cap = cap;
	}
	r->events[r->nevents].fd = fd;
	r->events[r->nevents].buf = b;
	r->events[r->nevents].hup = 0;
	if (sp_ring_fd(cb->ring) == fd)
		cb->owner = cb->polled = r->nevents;
	r->nevents++;
	return 0;
}

/*
 * Open the events of one thread on every CPU.  Returns 1 when opened, 0
 * when the thread has gone, or -errno.
 */
static int open_thread(struct sp_recorder *r, pid_t pid, pid_t tid)
{
	size_t first = r->nevents;
	unsigned b;
	int e, gone = 0;

	for (b = 0; b < r->nbufs && !gone; b++) {
		e = open_one(r, pid, tid, b);
		/*
		 * Gone half-way: the events already open sample nothing and
		 * one may own a buffer; they close when they hang up.
		 */
		if (e == -ESRCH)
			gone = 1;
		else if (e)
			return e;
	}
	if (gone && first == r->nevents)
		return 0;
	if (r->nattached == r->attached_cap) {
		size_t cap = r->attached_cap ? r->attached_cap * 2 : 64;
		struct thread *v = realloc(r->attached, cap * sizeof(*v));

		if (!v)
			return fail(r, -ENOMEM, "out of memory");
		r->attached = v;
		r->attached_cap = cap;
	}
	r->attached[r->nattached].pid = pid;
	r->attached[r->nattached].tid = tid;
	r->attached[r->nattached].first = first;
	r->attached[r->nattached].n = r->nevents - first;
	r->attached[r->nattached].exited = gone;
	r->nexited += gone;
	r->nattached++;
	if (note_ids(r, (uint32_t)pid, (uint32_t)tid, ID_ATTACHED))
		return fail(r, -ENOMEM, "out of memory");
	return gone ? 0 : 1;
}

/* Point the poll slot of buffer b at an event that can still wake us. */
static void repoll(struct sp_recorder *r, unsigned b)
{
	struct cpubuf *cb = &r->bufs[b];
	size_t k;

	if (!cb->ring) {
		r->pfd[b].fd = -1;
		return;
	}
	if (!r->events[cb->owner].hup) {
		cb->polled = cb->owner;
		r->pfd[b].fd = r->events[cb->owner].fd;
		return;
	}
	r->pfd[b].fd = -1;
	for (k = 0; k < r->nevents; k++) {
		if (r->events[k].buf == b && r->events[k].fd >= 0 &&
		    !r->events[k].hup) {
			cb->polled = k;
			r->pfd[b].fd = r->events[k].fd;
			return;
		}
	}
}

/*
 * Close the events of exited attached threads that have hung up: a thread's
 * event lives on while threads it created after attaching still sample
 * through it (closing it would end theirs), and hangs up once they are gone.
 * The event that maps a buffer stays for the mapping's sake.
 */
static void release_exited(struct sp_recorder *r)
{
	size_t i, k, left = 0;

	if (!r->nexited)
		return;
	for (i = 0; i < r->nattached; i++) {
		struct thread *t = &r->attached[i];
		int open = 0;

		if (!t->exited)
			continue;
		for (k = t->first; k < t->first + t->n; k++) {
			struct event *ev = &r->events[k];
			struct pollfd p = { ev->fd, POLLIN, 0 };

			if (ev->fd < 0)
				continue;
			if (!ev->hup && poll(&p, 1, 0) == 1 &&
			    (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
				ev->hup = 1;
			if (!ev->hup) {
				open = 1;
				continue;
			}
			if (k == r->bufs[ev->buf].owner) {
				if (r->bufs[ev->buf].polled == k)
					repoll(r, ev->buf);
				continue;
			}
			close(ev->fd);
			ev->fd = -1;
			if (r->bufs[ev->buf].polled == k)
				repoll(r, ev->buf);
		}
		if (open)
			left++;
		else
			t->exited = 0;	/* done with it */
	}
	r->nexited = left;
}

/*
 * Threads in /proc that neither have events nor were announced by a FORK
 * record of ours (which means they inherited events).  Returns their number
 * in *n, filling tids (the caller frees it), or -errno.
 */
static int unknown_threads(struct sp_recorder *r, pid_t pid, pid_t **out,
			   size_t *n)
{
	pid_t *tids;
	size_t len, i, k = 0;
	int e = sp_procfs_tids(pid, &tids, &len);

	*n = 0;
	*out = NULL;
	if (e)
		return e == -ESRCH ? 0 : e;
	for (i = 0; i < len; i++)
		if (!id_flags(&r->threads, (uint32_t)tids[i]))
			tids[k++] = tids[i];
	*out = tids;
	*n = k;
	return 0;
}

/*
 * Threads that a not yet attached thread created while we attached have no
 * events: open theirs, until a scan finds nobody new.  A thread created by
 * an attached one is visible in /proc a moment before its FORK record is
 * written, so a newcomer is looked at again after a short pause.
 */
static int rescan(struct sp_recorder *r)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	int round, found, e;
	size_t t, i, n;
	pid_t *tids;

	for (round = 0; round < MAX_RESCANS; round++) {
		found = 0;
		for (t = 0; t < r->ntargets; t++) {
			e = collect(r);
			if (e)
				return e;
			e = unknown_threads(r, r->targets[t], &tids, &n);
			if (e)
				return fail(r, e, "cannot list the threads of %d: %s",
					    (int)r->targets[t], strerror(-e));
			if (n) {
				free(tids);
				nanosleep(&pause, NULL);
				e = collect(r);
				if (!e)
					e = unknown_threads(r, r->targets[t], &tids, &n);
				if (e)
					return e;
			}
			for (i = 0; i < n; i++) {
				e = open_thread(r, r->targets[t], tids[i]);
				if (e < 0) {
					free(tids);
					return e;
				}
				found += e;
			}
			free(tids);
		}
		if (!found)
			break;
	}
	return 0;
}

/* ---- pausing the targets (SP_ATTACH_STOP) ----------------------------- */

static int add_target(struct sp_recorder *r, pid_t tgid)
{
	size_t j;

	for (j = 0; j < r->ntargets; j++)
		if (r->targets[j] == tgid)
			return 0;
	if (r->ntargets == r->targets_cap) {
		size_t cap = r->targets_cap ? r->targets_cap * 2 : 8;
		pid_t *v = realloc(r->targets, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->targets = v;
		r->targets_cap = cap;
	}
	r->targets[r->ntargets++] = tgid;
	return 0;
}

static struct tracee *tracee_find(struct sp_recorder *r, pid_t tid)
{
	size_t i;

	for (i = 0; i < r->ntracees; i++)
		if (r->tracees[i].tid == tid)
			return &r->tracees[i];
	return NULL;
}

static struct tracee *tracee_add(struct sp_recorder *r, pid_t pid, pid_t tid)
{
	struct tracee *t;

	if (r->ntracees == r->tracees_cap) {
		size_t cap = r->tracees_cap ? r->tracees_cap * 2 : 64;
		struct tracee *v = realloc(r->tracees, cap * sizeof(*v));

		if (!v)
			return NULL;
		r->tracees = v;
		r->tracees_cap = cap;
	}
	t = &r->tracees[r->ntracees++];
	t->pid = pid;
	t->tid = tid;
	t->stopped = 0;
	t->sig = 0;
	return t;
}

/*
 * One wait status of a tracee.  Returns 1 when it is now stopped, 0 when
 * gone, -ENOMEM.
 */
static int tracee_status(struct sp_recorder *r, struct tracee *t, int st)
{
	unsigned long msg;
	int event, sig;
	pid_t pid = t->pid;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		t->tid = 0;	/* gone */
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	t->stopped = 1;
	event = st >> 16;
	sig = WSTOPSIG(st);
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		/* the newcomer is traced too and reports its own stop */
		if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) == 0 && msg) {
			pid_t nt = (pid_t)msg;

			if (event != PTRACE_EVENT_CLONE) {
				if (add_target(r, nt))
					return -ENOMEM;
				pid = nt;
			}
			if (!tracee_find(r, nt) && !tracee_add(r, pid, nt))
				return -ENOMEM;
		}
		break;
	case PTRACE_EVENT_STOP:
	case PTRACE_EVENT_EXEC:
		break;	/* our interrupt, or a group-stop: stays on detach */
	default:
		/* signal-delivery-stop: hand the signal back when resuming */
		if (!event)
			t->sig = sig;
		break;
	}
	return 1;
}

/* Wait until every tracee is stopped or gone, or the deadline passes. */
static int wait_stopped(struct sp_recorder *r)
{
	struct timespec nap = { 0, 200 * 1000 };
	uint64_t deadline = mono_ns() + STOP_WAIT_NS;
	size_t i, waiting;
	int st, e;
	pid_t p;

	do {
		waiting = 0;
		for (i = 0; i < r->ntracees; i++) {
			struct tracee *t = &r->tracees[i];

			if (!t->tid || t->stopped)
				continue;
			p = waitpid(t->tid, &st, __WALL | WNOHANG);
			if (p < 0 && errno == ECHILD) {
				t->tid = 0;
				continue;
			}
			if (p <= 0) {
				waiting++;
				continue;
			}
			e = tracee_status(r, &r->tracees[i], st);
			if (e < 0)
				return fail(r, e, "out of memory");
		}
		if (waiting)
			nanosleep(&nap, NULL);
	} while (waiting && mono_ns() < deadline);
	return 0;
}

static void resume_all(struct sp_recorder *r)
{
	size_t i;

	for (i = 0; i < r->ntracees; i++) {
		struct tracee *t = &r->tracees[i];

		if (!t->tid)
			continue;
		if (ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->sig) &&
		    !t->stopped) {
			/* never reported its stop: wait briefly, then let go */
			int st;
			int k;

			for (k = 0; k < 100; k++) {
				if (waitpid(t->tid, &st, __WALL | WNOHANG) != 0)
					break;
				usleep(1000);
			}
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
		}
	}
	r->ntracees = 0;
}

/*
 * Seize and interrupt every thread of every target, again until a scan of
 * /proc finds none new: a thread that a not yet seized one created is found
 * by the scan, one created by a seized one by PTRACE_O_TRACECLONE.
 */
static int pause_all(struct sp_recorder *r)
{
	const long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
			  PTRACE_O_TRACEVFORK;
	int round, found, e;
	size_t t, i, n;
	pid_t *tids;

	for (round = 0; round < MAX_RESCANS; round++) {
		found = 0;
		for (t = 0; t < r->ntargets; t++) {
			pid_t pid = r->targets[t];

			e = sp_procfs_tids(pid, &tids, &n);
			if (e == -ESRCH)
				continue;
			if (e)
				return fail(r, e, "cannot list the threads of %d: %s",
					    (int)pid, strerror(-e));
			for (i = 0; i < n; i++) {
				struct tracee *tr;

				if (tracee_find(r, tids[i]))
					continue;
				if (ptrace(PTRACE_SEIZE, tids[i], 0, (void *)opts)) {
					pid_t tid = tids[i];

					e = -errno;
					if (e == -ESRCH)
						continue;
					free(tids);
					return fail(r, e, "cannot pause thread %d of %d to attach: %s%s",
						    (int)tid, (int)pid, strerror(-e),
						    e == -EPERM ? " (traced by a debugger, or ptrace not allowed)" : "");
				}
				tr = tracee_add(r, pid, tids[i]);
				if (!tr) {
					ptrace(PTRACE_DETACH, tids[i], 0, 0);
					free(tids);
					return fail(r, -ENOMEM, "out of memory");
				}
				ptrace(PTRACE_INTERRUPT, tids[i], 0, 0);
				found++;
			}
			free(tids);
		}
		e = wait_stopped(r);
		if (e)
			return e;
		if (!found)
			break;
	}
	return 0;
}

/* ---- attaching -------------------------------------------------------- */

static int write_header(struct sp_recorder *r, unsigned ncpus)
{
	struct sp_raw_header h;

	memset(&h, 0, sizeof(h));
	memcpy(h.h.magic, SP_RAW_MAGIC, SP_MAGIC_LEN);
	h.h.version = SP_RAW_VERSION;
	h.h.header_size = sizeof(h);
	h.ev.type = r->attr.type;
	h.ev.flags = SP_EV_FREQ;
	if (r->attr.sample_type & PERF_SAMPLE_CALLCHAIN)
		h.ev.flags |= SP_EV_KERNEL;
	h.ev.config = r->attr.config;
	h.ev.freq_or_period = r->attr.sample_freq;
	h.ev.clockid = CLOCK_MONOTONIC;
	h.ev.ncpus = ncpus;
	h.ev.start_time = r->start_time;
	snprintf(h.ev.name, sizeof(h.ev.name), "%s", r->event);
	h.sample_type = r->attr.sample_type;
	h.regs_mask = r->attr.sample_regs_user;
	h.stack_size = r->attr.sample_stack_user;
	return sp_out_write(r->out, &h, sizeof(h));
}

static int synth_threads(struct sp_recorder *r)
{
	struct sp_comm_rec c;
	struct sp_task_rec t;
	size_t i;
	int e;

	for (i = 0; i < r->nattached; i++) {
		pid_t pid = r->attached[i].pid, tid = r->attached[i].tid;
		pid_t tgid, ppid = pid;

		memset(&c, 0, sizeof(c));
		c.hdr.type = SP_REC_COMM;
		c.hdr.size = sizeof(c);
		c.time = r->start_time;
		c.pid = (uint32_t)pid;
		c.tid = (uint32_t)tid;
		c.flags = SP_REC_SYNTH;
		if (sp_procfs_comm(pid, tid, c.comm) == 0) {
			e = sp_out_rec(r->out, &c, sizeof(c));
			if (e)
				return e;
		}
		if (tid == pid && sp_procfs_status(pid, &tgid, &ppid))
			ppid = 0;
		memset(&t, 0, sizeof(t));
		t.hdr.type = SP_REC_FORK;
		t.hdr.size = sizeof(t);
		t.time = r->start_time;
		t.pid = (uint32_t)pid;
		t.ppid = (uint32_t)ppid;
		t.tid = (uint32_t)tid;
		t.ptid = (uint32_t)ppid;
		t.flags = SP_REC_SYNTH;
		e = sp_out_rec(r->out, &t, sizeof(t));
		if (e)
			return e;
	}
	return 0;
}

struct synth_maps {
	struct sp_recorder *r;
	pid_t pid;
	int err;		/* a write error, which stops the walk */
	union {
		struct sp_mmap_rec m;
		uint8_t bytes[sizeof(struct sp_mmap_rec) + 4096 + 8];
	} u;
};

static int synth_vdso(struct synth_maps *s, const struct sp_procfs_map *m)
{
	struct sp_image_rec *im;
	size_t len = m->end - m->start;
	int e;

	if (!len || len > SP_REC_MAX - sizeof(*im) - 8)
		return 0;
	im = calloc(1, sizeof(*im) + sp_align8(len));
	if (!im)
		return -ENOMEM;
	if (sp_procfs_read_mem(s->pid, m->start, im->data, len)) {
		free(im);
		return 0;	/* no image: the unwinder does without */
	}
	im->hdr.type = SP_REC_IMAGE;
	im->hdr.size = (uint32_t)(sizeof(*im) + sp_align8(len));
	im->time = s->r->start_time;
	im->pid = (uint32_t)s->pid;
	im->flags = SP_REC_SYNTH;
	im->start = m->start;
	im->len = len;
	e = sp_out_rec(s->r->out, im, im->hdr.size);
	free(im);
	return e;
}

/* The build id of a mapped file, read once per file. */
static int map_build_id(struct sp_recorder *r, pid_t pid,
			const struct sp_procfs_map *m, uint8_t id[20])
{
	struct bidcache *c;
	size_t i;

	if (m->path[0] != '/' || !m->ino)
		return 0;
	for (i = 0; i < r->nbids; i++) {
		c = &r->bids[i];
		if (c->ino == m->ino && c->maj == m->maj && c->min == m->min) {
			if (c->len > 0)
				memcpy(id, c->id, (size_t)c->len);
			return c->len > 0 ? c->len : 0;
		}
	}
	if (r->nbids == r->bids_cap) {
		size_t cap = r->bids_cap ? r->bids_cap * 2 : 32;
		struct bidcache *v = realloc(r->bids, cap * sizeof(*v));

		if (!v)
			return 0;
		r->bids = v;
		r->bids_cap = cap;
	}
	c = &r->bids[r->nbids++];
	memset(c, 0, sizeof(*c));
	c->maj = m->maj;
	c->min = m->min;
	c->ino = m->ino;
	c->len = sp_procfs_build_id(pid, m, c->id, sizeof(c->id));
	if (c->len > 0)
		memcpy(id, c->id, (size_t)c->len);
	return c->len > 0 ? c->len : 0;
}

static int synth_map(const struct sp_procfs_map *m, void *arg)
{
	struct synth_maps *s = arg;
	struct sp_mmap_rec *o = &s->u.m;
	const char *name = *m->path ? m->path : "//anon";
	size_t n = strlen(name);
	int e;

	if (!(m->prot & PROT_EXEC))
		return 0;
	if (n > 4095)
		n = 4095;
	memset(o, 0, sizeof(*o));
	o->hdr.type = SP_REC_MMAP;
	o->hdr.size = sp_align8(sizeof(*o) + n + 1);
	o->time = s->r->start_time;
	o->pid = o->tid = (uint32_t)s->pid;
	o->start = m->start;
	o->len = m->end - m->start;
	o->pgoff = m->pgoff;
	o->maj = m->maj;
	o->min = m->min;
	o->ino = m->ino;
	o->prot = m->prot;
	o->mflags = m->mflags;
	o->flags = SP_REC_SYNTH;
	o->build_id_size = (uint8_t)map_build_id(s->r, s->pid, m, o->build_id);
	memcpy(o->filename, name, n);
	o->filename[n] = 0;
	e = sp_out_rec(s->r->out, o, sizeof(*o) + n + 1);
	if (!e && !strcmp(name, "[vdso]"))
		e = synth_vdso(s, m);
	if (e)
		s->err = e;
	return e;
}

/* Check the options and fill the attr.  Returns 0 or -errno. */
static int setup_attr(struct sp_recorder *r)
{
	struct sp_record_opts *o = &r->o;
	struct perf_event_attr *a = &r->attr;
	uint64_t config;
	unsigned min_pages;
	long long maxf;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (sp_perf_event_lookup(r->event, &a->type, &config))
		return fail(r, -EINVAL, "unknown event '%s': must be %s",
			    r->event, sp_perf_event_names());
	a->config = config;
	if (o->frequency < 1 || o->frequency > SP_RECORD_MAX_FREQ)
		return fail(r, -EINVAL, "invalid frequency %llu: must be 1..%u",
			    (unsigned long long)o->frequency, SP_RECORD_MAX_FREQ);
	maxf = sp_record_max_frequency();
	if (maxf > 0 && (long long)o->frequency > maxf)
		return fail(r, -EINVAL, "frequency %llu is above perf_event_max_sample_rate %lld",
			    (unsigned long long)o->frequency, maxf);
	if (o->stack_size < 8 || o->stack_size > SP_RECORD_MAX_STACK ||
	    o->stack_size % 8)
		return fail(r, -EINVAL, "invalid stack size %u: must be a multiple of 8 in 8..%u",
			    o->stack_size, SP_RECORD_MAX_STACK);
	if (o->pages && ((o->pages & (o->pages - 1)) ||
			 o->pages > SP_RECORD_MAX_PAGES))
		return fail(r, -EINVAL, "invalid buffer size %u pages: must be a power of 2 in 1..%u",
			    o->pages, SP_RECORD_MAX_PAGES);
	if (o->attach != SP_ATTACH_STOP && o->attach != SP_ATTACH_LIVE &&
	    o->attach != SP_ATTACH_ENABLE_ON_EXEC)
		return fail(r, -EINVAL, "invalid attach mode %d", (int)o->attach);

	/* a sample reserves its whole stack request: room for two at least */
	min_pages = 1;
	while ((uint64_t)min_pages * (uint64_t)r->page <
	       2ull * (o->stack_size + SAMPLE_OVERHEAD))
		min_pages *= 2;
	if (o->pages && o->pages < min_pages)
		return fail(r, -EINVAL, "a buffer of %u pages cannot hold two samples of a %u-byte stack: use -m %u or more, or a smaller --stack-size",
			    o->pages, o->stack_size, min_pages);
	r->min_pages = min_pages;

	/* STOP opens them disabled and enables them all before resuming */
	a->disabled = o->attach != SP_ATTACH_LIVE;
	a->enable_on_exec = o->attach == SP_ATTACH_ENABLE_ON_EXEC;
	a->inherit = 1;
	a->freq = 1;
	a->sample_freq = o->frequency;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = REGS_MASK;
	a->sample_stack_user = o->stack_size;
	a->mmap = 1;
	a->mmap2 = 1;
	a->build_id = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_hv = 1;
	a->watermark = 1;
	if (o->kernel == SP_RECORD_KERNEL_OFF) {
		a->exclude_kernel = 1;
		r->kernel_decided = 1;
	} else {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_user = 1;
		a->sample_max_stack = 127;
	}
	r->nregs = (unsigned)__builtin_popcountll(REGS_MASK);
	return 0;
}

/*
 * One event per thread and CPU: refuse up front what RLIMIT_NOFILE cannot
 * hold, rather than failing half-way with the targets paused.
 */
static int check_fd_budget(struct sp_recorder *r)
{
	struct rlimit rl;
	size_t t, total = 0, n;
	pid_t *tids;

	for (t = 0; t < r->ntargets; t++) {
		if (sp_procfs_tids(r->targets[t], &tids, &n) == 0) {
			total += n;
			free(tids);
		}
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	if ((uint64_t)total * r->nbufs + FD_RESERVE > rl.rlim_cur)
		return fail(r, -EMFILE, "%zu threads need %zu event descriptors (one per thread and cpu), above RLIMIT_NOFILE %llu: raise the hard limit (ulimit -Hn), or launch the command under sp-record, which needs one per cpu",
			    total, total * r->nbufs,
			    (unsigned long long)rl.rlim_cur);
	return 0;
}

static int enable_all(struct sp_recorder *r)
{
	size_t i;
	int e;

	for (i = 0; i < r->nevents; i++) {
		if (r->events[i].fd < 0)
			continue;
		e = sp_perf_enable(r->events[i].fd);
		if (e && e != -ESRCH)
			return fail(r, e, "cannot enable the events: %s",
				    strerror(-e));
	}
	return 0;
}

/* Open the events of every thread of every target. */
static int open_targets(struct sp_recorder *r)
{
	size_t i, nt, k;
	pid_t *tids;
	int e, any;

	for (i = 0; i < r->ntargets; i++) {
		any = 0;
		e = sp_procfs_tids(r->targets[i], &tids, &nt);
		if (e == -ESRCH && i >= r->ntargets_given)
			continue;	/* a child forked while pausing, gone */
		if (e == -ESRCH)
			return fail(r, e, "no such process %d", (int)r->targets[i]);
		if (e)
			return fail(r, e, "cannot list the threads of %d: %s",
				    (int)r->targets[i], strerror(-e));
		for (k = 0; k < nt; k++) {
			if (id_flags(&r->threads, (uint32_t)tids[k]) & ID_ATTACHED)
				continue;
			e = open_thread(r, r->targets[i], tids[k]);
			if (e < 0) {
				free(tids);
				return e;
			}
			any |= e;
		}
		free(tids);
		if (!any && i < r->ntargets_given)
			return fail(r, -ESRCH, "no such process %d", (int)r->targets[i]);
	}
	return 0;
}

static int hold(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	/* a signal ends the hold early; the caller resumes the targets */
	return nanosleep(&ts, NULL) ? -errno : 0;
}

static int write_existing(struct sp_recorder *r)
{
	size_t i;
	int e = synth_threads(r);

	for (i = 0; !e && i < r->ntargets; i++) {
		struct synth_maps *s = calloc(1, sizeof(*s));

		if (!s)
			return -ENOMEM;
		s->r = r;
		s->pid = r->targets[i];
		sp_procfs_maps(s->pid, synth_map, s);
		e = s->err;
		free(s);
	}
	return e;
}

int sp_recorder_attach(struct sp_recorder *r, const pid_t *pids, size_t n)
{
	struct sp_record_opts *o = &r->o;
	int cpus[MAX_CPUS];
	uint64_t t0 = 0;
	int ncpus, e;
	size_t i;

	if (r->did_attach)
		return fail(r, -EBUSY, "already attached");
	r->did_attach = 1;
	if (!n)
		return fail(r, -EINVAL, "no process to profile");
	e = setup_attr(r);
	if (e)
		return e;
	if (o->attach == SP_ATTACH_ENABLE_ON_EXEC && n != 1)
		return fail(r, -EINVAL, "enable-on-exec records one launched process, not %zu",
			    n);

	ncpus = sp_perf_online_cpus(cpus, MAX_CPUS);
	if (ncpus < 0)
		return fail(r, ncpus, "cannot read the online cpus: %s",
			    strerror(-ncpus));
	r->bufs = calloc((size_t)ncpus, sizeof(*r->bufs));
	r->pfd = calloc((size_t)ncpus, sizeof(*r->pfd));
	if (!r->bufs || !r->pfd)
		return fail(r, -ENOMEM, "out of memory");
	r->nbufs = (unsigned)ncpus;
	for (i = 0; i < r->nbufs; i++) {
		r->bufs[i].cpu = cpus[i];
		r->bufs[i].pages = o->pages ? o->pages : SP_RECORD_DEFAULT_PAGES;
	}

	/* the thread group of each pid, once */
	for (i = 0; i < n; i++) {
		pid_t tgid, ppid;

		e = sp_procfs_status(pids[i], &tgid, &ppid);
		if (e == -ESRCH || (!e && tgid <= 0) || pids[i] <= 0)
			return fail(r, -ESRCH, "no such process %d", (int)pids[i]);
		if (e)
			return fail(r, e, "cannot read /proc/%d/status: %s",
				    (int)pids[i], strerror(-e));
		if (add_target(r, tgid))
			return fail(r, -ENOMEM, "out of memory");
	}
	r->ntargets_given = r->ntargets;
	raise_nofile();
	if (o->kernel != SP_RECORD_KERNEL_OFF) {
		/* before any pause: it takes tens of milliseconds */
		e = ksyms_load(&r->ks);
		if (e)
			return fail(r, e, "out of memory");
	}
	for (i = 0; i < r->ntargets; i++) {
		uid_t uid;

		if (sp_procfs_uid(r->targets[i], &uid) == 0 &&
		    pmap_add(r, r->targets[i], uid))
			return fail(r, -ENOMEM, "out of memory");
	}

	r->start_time = mono_ns();
	if (o->attach == SP_ATTACH_ENABLE_ON_EXEC) {
		/* the child still runs our code: /proc has nothing of its own */
		e = open_thread(r, r->targets[0], r->targets[0]);
		if (e == 0)
			e = fail(r, -ESRCH, "no such process %d", (int)r->targets[0]);
		if (e < 0)
			return e;
		r->attached_threads = 1;
		e = write_header(r, r->nbufs);
		goto written;
	}
	e = check_fd_budget(r);
	if (e)
		return e;
	if (o->attach == SP_ATTACH_STOP) {
		t0 = mono_ns();
		e = pause_all(r);
		if (!e)
			e = open_targets(r);
		if (!e)
			e = rescan(r);	/* finds nobody unless a pause failed */
	} else {
		e = open_targets(r);
		if (!e)
			e = rescan(r);
	}
	if (!e && o->attach == SP_ATTACH_STOP) {
		/*
		 * Enabled before resuming: whatever a thread maps or starts
		 * from now on is reported by the kernel, so /proc can be read
		 * after the pause, which stays short.
		 */
		e = enable_all(r);
		if (!e && o->attach_hold_ms)
			hold(o->attach_hold_ms);
		resume_all(r);
		r->pause_ns = mono_ns() - t0;
		t0 = 0;
	}
	if (e)
		goto out;
	r->attached_threads = r->nattached;
	e = write_header(r, r->nbufs);
	if (!e)
		e = write_existing(r);
written:
	if (!e)
		e = sp_out_flush(r->out);
	if (e) {
		fail(r, e, "cannot write the raw stream: %s", strerror(-e));
		goto out;
	}
	for (i = 0; i < r->nbufs; i++) {
		r->pfd[i].fd = r->bufs[i].ring ? sp_ring_fd(r->bufs[i].ring) : -1;
		r->pfd[i].events = POLLIN;
	}
	if (r->ks.n && (r->attr.exclude_kernel ||
			!(r->attr.sample_type & PERF_SAMPLE_CALLCHAIN)))
		ksyms_release(&r->ks);
	r->attached_ok = 1;
out:
	if (t0) {
		resume_all(r);
		r->pause_ns = mono_ns() - t0;
	}
	return e;
}

int sp_recorder_wait(struct sp_recorder *r, int timeout_ms)
{
	unsigned i;
	int n;

	n = poll(r->pfd, r->nbufs, timeout_ms);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	for (i = 0; i < r->nbufs; i++) {
		struct cpubuf *cb = &r->bufs[i];

		if (!(r->pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL)))
			continue;
		/*
		 * The polled event's thread has exited and it has no
		 * children left, but other events of this CPU may still
		 * write into the buffer: wait on one of those, they all
		 * share its wakeups.
		 */
		r->events[cb->polled].hup = 1;
		repoll(r, i);
	}
	return 1;
}

int sp_recorder_consume(struct sp_recorder *r)
{
	uint64_t now = mono_ns(), before = sp_out_bytes(r->out);
	int e = collect(r);

	if (e)
		return e;
	release_exited(r);
	e = perfmap_pass(r);
	if (e)
		return fail(r, e, "cannot write the raw stream: %s",
			    strerror(-e));
	e = write_until(r, now > HORIZON_NS ? now - HORIZON_NS : 0);
	/* a pass is at most every few milliseconds: let the reader see it */
	if (!e && sp_out_bytes(r->out) != before) {
		e = sp_out_flush(r->out);
		if (e)
			return fail(r, e, "cannot write the raw stream: %s",
				    strerror(-e));
	}
	return e;
}

int sp_recorder_active(struct sp_recorder *r)
{
	size_t i;

	for (i = 0; i < r->ntargets; i++)
		if (sp_procfs_alive(r->targets[i]))
			return 1;
	return 0;
}

int sp_recorder_disable(struct sp_recorder *r)
{
	size_t i;
	int e = 0;

	if (r->disabled)
		return 0;
	r->disabled = 1;
	for (i = 0; i < r->nevents; i++) {
		int x;

		if (r->events[i].fd < 0)
			continue;
		x = sp_perf_disable(r->events[i].fd);
		if (x && x != -ESRCH && !e)
			e = x;
	}
	r->end_time = mono_ns();
	if (e)
		return fail(r, e, "cannot disable the events: %s", strerror(-e));
	return 0;
}

void sp_recorder_stats(const struct sp_recorder *r, struct sp_record_stats *st)
{
	uint64_t end = r->end_time ? r->end_time : mono_ns();

	memset(st, 0, sizeof(*st));
	st->samples = r->samples;
	st->lost = r->lost;
	st->lost_records = r->lost_records;
	st->throttles = r->throttles;
	st->threads = r->threads.n;
	st->processes = r->procs.n;
	st->duration_ns = r->start_time && end > r->start_time ?
			  end - r->start_time : 0;
	st->attach_threads = r->attached_threads;
	st->attach_pause_ns = r->pause_ns;
	st->events_open = open_fds(r);
	st->ksyms = r->nksyms;
	st->perfmap_bytes = r->perfmap_bytes;
}

int sp_recorder_finish(struct sp_recorder *r, struct sp_record_stats *st)
{
	struct sp_raw_summary s;
	int e;

	if (!r->attached_ok) {
		if (st)
			sp_recorder_stats(r, st);
		return fail(r, -EINVAL, "not attached");
	}
	sp_recorder_disable(r);
	e = collect(r);
	if (!e)
		e = perfmap_pass(r);
	if (!e)
		e = write_until(r, UINT64_MAX);
	if (!e) {
		memset(&s, 0, sizeof(s));
		s.hdr.type = SP_REC_SUMMARY;
		s.hdr.size = sizeof(s);
		s.samples = r->samples;
		s.lost = r->lost;
		s.lost_records = r->lost_records;
		s.throttles = r->throttles;
		s.threads = r->threads.n;
		s.processes = r->procs.n;
		s.start_time = r->start_time;
		s.end_time = r->end_time;
		s.duration_ns = r->end_time - r->start_time;
		e = sp_out_rec(r->out, &s, sizeof(s));
		if (!e)
			e = sp_out_flush(r->out);
	}
	if (e)
		fail(r, e, "cannot write the raw stream: %s", strerror(-e));
	if (st)
		sp_recorder_stats(r, st);
	return e;
}
