/* SPDX-License-Identifier: MIT */
/* record.c: attach to processes, drain the per-CPU buffers, write the raw stream. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "io.h"
#include "perf.h"
#include "proc.h"
#include "raw.h"
#include "record.h"

/*
 * x86_64 user registers AX..IP, FLAGS, CS, SS, R8-R15: bits 0-23 without
 * DS, ES, FS, GS (12-15), which the kernel refuses.
 */
#define REGS_MASK	0xff0fffull
#define MAX_CPUS	4096
#define MAX_RESCANS	100
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
	int fd;
	uint32_t buf;		/* index of its CPU's buffer */
	int hup;
};

struct cpubuf {
	int cpu;
	unsigned pages;
	struct sp_ring *ring;
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
	size_t ntargets;
	struct thread *attached;
	size_t nattached, attached_cap;

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
	return fork ? note_ids(r, f.pid, f.tid, ID_FORKED) : 0;
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
}

long long sp_record_max_frequency(void)
{
	long long v;
	int e = sp_procfs_read_ll("/proc/sys/kernel/perf_event_max_sample_rate",
				  &v);

	return e ? e : v;
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
	r->out = out;
	r->page = sysconf(_SC_PAGESIZE);
	return r;
}

void sp_recorder_free(struct sp_recorder *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nbufs; i++)
		sp_ring_free(r->bufs[i].ring);
	for (i = 0; i < r->nevents; i++)
		close(r->events[i].fd);
	free(r->bufs);
	free(r->events);
	free(r->pfd);
	free(r->targets);
	free(r->attached);
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
			    r->nevents, (unsigned long long)rl.rlim_cur);
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
		cb->polled = r->nevents;
	r->nevents++;
	return 0;
}

/*
 * Open the events of one thread on every CPU.  Returns 1 when opened, 0
 * when the thread has gone, or -errno.
 */
static int open_thread(struct sp_recorder *r, pid_t pid, pid_t tid)
{
	unsigned b;
	int e;

	for (b = 0; b < r->nbufs; b++) {
		e = open_one(r, pid, tid, b);
		/*
		 * Gone half-way: the events already open sample nothing and
		 * one may own a buffer, so they stay until the end.
		 */
		if (e == -ESRCH)
			return 0;
		if (e)
			return e;
	}
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
	r->nattached++;
	if (note_ids(r, (uint32_t)pid, (uint32_t)tid, ID_ATTACHED))
		return fail(r, -ENOMEM, "out of memory");
	return 1;
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
	memcpy(o->filename, name, n);
	o->filename[n] = 0;
	e = sp_out_rec(s->r->out, o, sizeof(*o) + n + 1);
	if (!e && !strcmp(name, "[vdso]"))
		e = synth_vdso(s, m);
	if (e)
		s->err = e;
	return e;
}

int sp_recorder_attach(struct sp_recorder *r, const pid_t *pids, size_t n)
{
	struct sp_record_opts *o = &r->o;
	struct perf_event_attr *a = &r->attr;
	int cpus[MAX_CPUS];
	uint64_t config;
	unsigned min_pages;
	long long maxf;
	int ncpus, e;
	size_t i, j;

	if (r->did_attach)
		return fail(r, -EBUSY, "already attached");
	r->did_attach = 1;
	if (!n)
		return fail(r, -EINVAL, "no process to profile");
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

	/* a sample reserves its whole stack request: room for two at least */
	min_pages = 1;
	while ((uint64_t)min_pages * (uint64_t)r->page <
	       2ull * (o->stack_size + SAMPLE_OVERHEAD))
		min_pages *= 2;
	if (o->pages && o->pages < min_pages)
		return fail(r, -EINVAL, "a buffer of %u pages cannot hold two samples of a %u-byte stack: use -m %u or more, or a smaller --stack-size",
			    o->pages, o->stack_size, min_pages);
	r->min_pages = min_pages;

	ncpus = sp_perf_online_cpus(cpus, MAX_CPUS);
	if (ncpus < 0)
		return fail(r, ncpus, "cannot read the online cpus: %s",
			    strerror(-ncpus));
	r->bufs = calloc((size_t)ncpus, sizeof(*r->bufs));
	r->pfd = calloc((size_t)ncpus, sizeof(*r->pfd));
	r->targets = calloc(n, sizeof(*r->targets));
	if (!r->bufs || !r->pfd || !r->targets)
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
		for (j = 0; j < r->ntargets && r->targets[j] != tgid; j++)
			;
		if (j == r->ntargets)
			r->targets[r->ntargets++] = tgid;
	}

	a->disabled = 0;
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
	raise_nofile();

	r->start_time = mono_ns();
	for (i = 0; i < r->ntargets; i++) {
		pid_t *tids;
		size_t nt, k;
		int any = 0;

		e = sp_procfs_tids(r->targets[i], &tids, &nt);
		if (e == -ESRCH)
			return fail(r, e, "no such process %d", (int)r->targets[i]);
		if (e)
			return fail(r, e, "cannot list the threads of %d: %s",
				    (int)r->targets[i], strerror(-e));
		for (k = 0; k < nt; k++) {
			e = open_thread(r, r->targets[i], tids[k]);
			if (e < 0) {
				free(tids);
				return e;
			}
			any |= e;
		}
		free(tids);
		if (!any)
			return fail(r, -ESRCH, "no such process %d", (int)r->targets[i]);
	}
	e = rescan(r);
	if (e)
		return e;

	e = write_header(r, r->nbufs);
	if (!e)
		e = synth_threads(r);
	for (i = 0; !e && i < r->ntargets; i++) {
		struct synth_maps *s = calloc(1, sizeof(*s));

		if (!s)
			return fail(r, -ENOMEM, "out of memory");
		s->r = r;
		s->pid = r->targets[i];
		sp_procfs_maps(s->pid, synth_map, s);
		e = s->err;
		free(s);
	}
	if (!e)
		e = sp_out_flush(r->out);
	if (e)
		return fail(r, e, "cannot write the raw stream: %s", strerror(-e));
	for (i = 0; i < r->nbufs; i++) {
		r->pfd[i].fd = r->bufs[i].ring ? sp_ring_fd(r->bufs[i].ring) : -1;
		r->pfd[i].events = POLLIN;
	}
	r->attached_ok = 1;
	return 0;
}

int sp_recorder_wait(struct sp_recorder *r, int timeout_ms)
{
	unsigned i;
	size_t k;
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
		 * The polled event's thread has exited, but inherited events
		 * of its children may still write into the buffer: wait on
		 * another event of this CPU, they all share its wakeups.
		 */
		r->events[cb->polled].hup = 1;
		r->pfd[i].fd = -1;
		for (k = 0; k < r->nevents; k++) {
			if (r->events[k].buf == i && !r->events[k].hup) {
				cb->polled = k;
				r->pfd[i].fd = r->events[k].fd;
				break;
			}
		}
	}
	return 1;
}

int sp_recorder_consume(struct sp_recorder *r)
{
	uint64_t now = mono_ns(), before = sp_out_bytes(r->out);
	int e = collect(r);

	if (e)
		return e;
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
		int x = sp_perf_disable(r->events[i].fd);

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

	st->samples = r->samples;
	st->lost = r->lost;
	st->lost_records = r->lost_records;
	st->throttles = r->throttles;
	st->threads = r->threads.n;
	st->processes = r->procs.n;
	st->duration_ns = r->start_time && end > r->start_time ?
			  end - r->start_time : 0;
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
		if (e)
			fail(r, e, "cannot write the raw stream: %s",
			     strerror(-e));
	}
	if (st)
		sp_recorder_stats(r, st);
	return e;
}
