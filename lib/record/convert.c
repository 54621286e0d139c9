/* SPDX-License-Identifier: MIT */
/* convert.c: the kernel's perf records, re-framed as raw-stream records. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recorder.h"

/*
 * The sample_id_all trailer for sample_type TID | TIME | CPU, followed by
 * the IDENTIFIER when off-CPU samples share the buffer (idlen 8).
 */
struct id_trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

/* The trailer's bytes: what the payload's end moves back by. */
static size_t trailer_size(const struct sp_recorder *r)
{
	return sizeof(struct id_trailer) + r->ev.idlen;
}

static int trailer(const struct sp_recorder *r,
		   const struct perf_event_header *h, size_t fixed,
		   struct id_trailer *t)
{
	size_t n = trailer_size(r);

	if (h->size < sizeof(*h) + fixed + n)
		return -1;
	memcpy(t, (const uint8_t *)h + h->size - n, sizeof(*t));
	return 0;
}

/* A cursor over a record's payload. */
struct cur {
	const uint8_t *p, *end;
};

static struct cur payload(const struct perf_event_header *h)
{
	return (struct cur){ (const uint8_t *)(h + 1),
			     (const uint8_t *)h + h->size };
}

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

/* A record that does not parse: counted, skipped. */
static int bad(struct sp_recorder *r)
{
	r->bad++;
	return 0;
}

static int conv_sample(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = payload(h);
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
	uint64_t id = 0;
	int off, e;
	uint8_t *p;

	if (r->ev.idlen && take(&c, &id, 8))
		return bad(r);
	if (rec_python_is_chain(r, id))
		return rec_python_chain(r, h);
	if (take(&c, &f, sizeof(f)))
		return bad(r);
	off = r->ev.sw_main || (r->ev.idlen && rec_offcpu_is_switch(r, id));
	if (off && !f.tid)
		return 0;	/* the idle task leaving a CPU: work came */
	if (r->ev.attr.sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (take(&c, &nr, 8) || nr > 0xffff || skip(&c, nr * 8, &ips))
			return bad(r);
	}
	if (take(&c, &abi, 8))
		return bad(r);
	if (abi) {
		nregs = r->ev.nregs;
		if (skip(&c, nregs * 8, &regs))
			return bad(r);
	}
	if (take(&c, &size, 8))
		return bad(r);
	if (size) {
		if (skip(&c, size, &stack) || take(&c, &dyn, 8) || dyn > size)
			return bad(r);
	}
	/* the pipeline's own, known already; the rest is decided in time
	   order, when written (merge.c) */
	if (rec_host_own(r, f.tid))
		return 0;
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
	/* the Python frames the BPF program read in this sample */
	if ((e = rec_python_sample(r, f.pid, f.tid, f.time)))
		return e;
	/* a full copy of a deeper stack: its tail goes first */
	if (dyn && dyn == size && regs) {
		e = rec_tail_capture(r, f.pid, f.tid, f.time, regs, stack,
					 (uint32_t)dyn);

		if (e)
			return e;
	}
	out = sizeof(*s) + nregs * 8 + nk * 8 + sp_align8(dyn);
	s = rec_enqueue(r, f.time, out);
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->hdr.type = off ? SP_REC_OFFCPU : SP_REC_SAMPLE;
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
	return rec_note_ids(r, f.pid, f.tid, 0);
}

static int conv_mmap(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = payload(h);
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

	if (trailer(r, h, 0, &t) || take(&c, &f, sizeof(f)))
		return bad(r);
	c.end -= trailer_size(r);
	if (h->type == PERF_RECORD_MMAP2) {
		if (take(&c, &u, sizeof(u)) || take(&c, &prot, 4) ||
		    take(&c, &flags, 4))
			return bad(r);
	} else {
		memset(&u, 0, sizeof(u));
		if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
			prot = PROT_READ;
	}
	if (!(prot & PROT_EXEC))
		return 0;
	if (c.p >= c.end)
		return bad(r);
	name = (const char *)c.p;
	namemax = (size_t)(c.end - c.p);
	namelen = strnlen(name, namemax);
	if (namelen == namemax)
		return bad(r);
	out = sp_align8(sizeof(*m) + namelen + 1);
	m = rec_enqueue(r, t.time, out);
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
	if (m->build_id_size &&
	    rec_keep_mapping(r, f.pid, f.addr, f.len, t.time, name,
			     m->build_id, m->build_id_size, 0, 0, 0))
		return -ENOMEM;
	if (!strcmp(name, "[vdso]"))
		return rec_capture_vdso(r, f.pid, f.addr, f.len, t.time);
	return rec_python_mapped(r, f.pid, name);
}

static int conv_comm(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = payload(h);
	struct id_trailer t;
	uint32_t ids[2];
	struct sp_comm_rec *o;
	size_t n;

	if (trailer(r, h, 8, &t) || take(&c, ids, sizeof(ids)))
		return bad(r);
	c.end -= trailer_size(r);
	n = strnlen((const char *)c.p, (size_t)(c.end - c.p));
	if (n == (size_t)(c.end - c.p))
		return bad(r);
	o = rec_enqueue(r, t.time, sizeof(*o));
	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->hdr.type = SP_REC_COMM;
	o->hdr.size = sizeof(*o);
	o->time = t.time;
	o->pid = ids[0];
	o->tid = ids[1];
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
		o->flags = SP_COMM_EXEC;
		rec_keep_forget(r, ids[0], t.time);	/* a new address space */
		rec_pmap_exec(r, (pid_t)ids[0]);
		rec_python_forget(r, ids[0], t.time);
	}
	memcpy(o->comm, c.p, n < sizeof(o->comm) ? n : sizeof(o->comm) - 1);
	return rec_note_ids(r, ids[0], ids[1], 0);
}

static int conv_task(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = payload(h);
	struct {
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} f;
	struct sp_task_rec *o;
	int fork = h->type == PERF_RECORD_FORK;

	if (take(&c, &f, sizeof(f)))
		return bad(r);
	o = rec_enqueue(r, f.time, sizeof(*o));
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
		if (f.pid != f.ppid)
			rec_python_forget(r, f.pid, f.time);	/* a reused pid */
		if (f.pid != f.ppid &&
		    (rec_pmap_fork(r, (pid_t)f.pid, (pid_t)f.ppid, f.time) ||
		     rec_keep_fork(r, f.pid, f.ppid, f.time)))
			return -ENOMEM;
		return rec_note_ids(r, f.pid, f.tid, REC_ID_FORKED);
	}
	if (f.pid == f.tid) {
		rec_pmap_exit(r, (pid_t)f.pid);
		rec_keep_forget(r, f.pid, f.time);
		rec_python_forget(r, f.pid, 0);
	}
	if (rec_thread_flags(r, f.tid) & REC_ID_ATTACHED)
		rec_thread_exited(r, (pid_t)f.tid);
	return 0;
}

static int conv_lost(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct cur c = payload(h);
	uint64_t f[2];
	struct id_trailer t;
	struct sp_lost_rec *o;

	if (trailer(r, h, sizeof(f), &t) || take(&c, f, sizeof(f)))
		return bad(r);
	o = rec_enqueue(r, t.time, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->hdr.type = SP_REC_LOST;
	o->hdr.size = sizeof(*o);
	o->time = t.time;
	o->id = f[0];
	o->lost = f[1];
	r->lost += f[1];
	r->lost_records++;
	r->ev.bufs[r->ev.draining].lost += f[1];
	return 0;
}

static int conv_throttle(struct sp_recorder *r,
			 const struct perf_event_header *h)
{
	struct cur c = payload(h);
	uint64_t f[3];		/* time, id, stream_id */
	struct sp_throttle_rec *o;

	if (take(&c, f, sizeof(f)))
		return bad(r);
	o = rec_enqueue(r, f[0], sizeof(*o));
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
}

/* PERF_RECORD_SWITCH, or SWITCH_CPU_WIDE with the other task's ids first. */
static int conv_switch(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct id_trailer t;

	if (trailer(r, h, h->type == PERF_RECORD_SWITCH_CPU_WIDE ? 8 : 0, &t))
		return bad(r);
	return rec_offcpu_convert(r, h, t.pid, t.tid, t.time, t.cpu);
}

int rec_convert(struct sp_recorder *r, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return conv_switch(r, h);
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
