/* SPDX-License-Identifier: MIT */
/*
 * pyframes.c: CPython's frames of each sample, into the stream.
 *
 * A process is looked at once, before attaching when it is given, or when
 * it maps python* or libpython* (its MMAP, or its maps read at the start):
 * when it runs a CPython this reads (record/python.h), the BPF program is
 * told where its frames are.  The program runs in every sample of the sampling
 * events and writes the frame chain of the sampled thread through the
 * BPF-output event of the CPU, into the same buffer, just before the
 * sample; the chain waits in its buffer's slot for that sample.  Its code
 * objects are read from the process the first time they are seen (while
 * they are still those the sample saw: their type and a stamp are
 * checked) and written as PYCODE records, each under an ID; the sample
 * gets a PYSTACK record of (code ID, instruction offset) frames before it.
 *
 * Events opened before the program was loaded get it too; the events the
 * kernel made for threads created before then (inherited from a launched
 * command's or a target's) do not, so the program is loaded before the
 * targets run, whatever they are: in the samples of a process it was not
 * told about, it only looks the process up.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/grow.h"
#include "format/python.h"
#include "python.h"
#include "recorder.h"

/* The procs value of a process whose CPython is not read (said once). */
#define REFUSED UINT64_MAX

int rec_python_setup(struct sp_recorder *r)
{
	if (r->o.python == SP_RECORD_PYTHON_OFF)
		return 0;
	r->ev.attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
	r->ev.idlen = 8;
	return 0;
}

void rec_python_release(struct rec_python *py)
{
	size_t i;

	sp_py_bpf_free(py->bpf);
	for (i = 0; i < py->n; i++) {
		free(py->v[i].p);
		free(py->v[i].c);
		sp_u64map_release(&py->v[i].codes);
	}
	free(py->v);
	sp_u64map_release(&py->procs);
	sp_u64map_release(&py->looked);
	sp_u64map_release(&py->out_ids);
	free(py->out_open);
	free(py->pending);
	free(py->pending_set);
	free(py->words);
	memset(py, 0, sizeof(*py));
}

/* Open the output event of buffer b, once. */
static int open_output(struct sp_recorder *r, unsigned b)
{
	struct rec_python *py = &r->py;
	struct rec_cpubuf *cb = &r->ev.bufs[b];
	uint64_t id;
	int e;

	if (py->out_open[b] || !cb->ring)
		return 0;
	e = sp_py_bpf_output(py->bpf, cb->cpu, sp_ring_fd(cb->ring), &id);
	if (e)
		return sp_err_set(&r->err, e, "cannot open the Python frames' output event on cpu %d: %s",
				  cb->cpu, strerror(-e));
	if (!sp_u64map_get(&py->out_ids, id, NULL))
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	py->out_open[b] = 1;
	return 0;
}

/*
 * Load the program, give it the events open so far and open the output
 * events.  A refusal is said in the stats once, and recording goes on
 * without Python frames.  0 or -errno for what stops the recording.
 */
static int load(struct sp_recorder *r)
{
	struct rec_python *py = &r->py;
	struct rec_events *ev = &r->ev;
	size_t i;
	int e;

	if (py->bpf || py->denied)
		return 0;
	py->out_open = calloc(ev->nbufs ? ev->nbufs : 1, 1);
	py->pending = calloc(ev->nbufs ? ev->nbufs : 1, sizeof(*py->pending));
	py->pending_set = calloc(ev->nbufs ? ev->nbufs : 1, 1);
	if (!py->out_open || !py->pending || !py->pending_set)
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	e = sp_py_bpf_open(&py->bpf, py->denied_why, sizeof(py->denied_why));
	if (e == -ENOMEM)
		return sp_err_set(&r->err, e, "out of memory");
	if (e) {
		py->denied = 1;	/* said if a CPython comes */
		return 0;
	}
	/* the switch-out samplers' too: Python frames of the waits */
	for (i = 0; i < ev->nevents; i++) {
		if (ev->events[i].fd < 0)
			continue;
		e = sp_py_bpf_attach(py->bpf, ev->events[i].fd);
		if (e && e != -ESRCH)
			return sp_err_set(&r->err, e, "cannot run the Python frames' program in the samples: %s",
					  strerror(-e));
	}
	for (i = 0; i < ev->nbufs; i++)
		if ((e = open_output(r, (unsigned)i)))
			return e;
	return 0;
}

int rec_python_event(struct sp_recorder *r, int fd, unsigned b)
{
	int e;

	if (!r->py.bpf)
		return 0;
	e = sp_py_bpf_attach(r->py.bpf, fd);
	if (e)
		return sp_err_set(&r->err, e, "cannot run the Python frames' program in the samples: %s",
				  strerror(-e));
	return open_output(r, b);
}

/*
 * Look at process pid once: its slot in v, NULL when it runs no CPython
 * this reads (or the program could not be loaded).  *err is set for what
 * stops the recording.
 */
static struct rec_pyproc *examine(struct sp_recorder *r, uint32_t pid,
				  int *err)
{
	struct rec_python *py = &r->py;
	struct sp_u64slot *s, *at;
	struct rec_pyproc *pp = NULL;
	struct sp_py_proc *p;
	char why[SP_ERR_MAX];
	size_t i;
	int is_new, found;

	*err = 0;
	s = sp_u64map_get(&py->procs, pid, &is_new);
	if (!s) {
		*err = sp_err_set(&r->err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (!is_new)
		return s->val && s->val != REFUSED ? &py->v[s->val - 1] : NULL;
	s->val = 0;
	if (!(at = sp_u64map_get(&py->looked, pid, NULL))) {
		*err = sp_err_set(&r->err, -ENOMEM, "out of memory");
		return NULL;
	}
	at->val = sp_mono_ns();	/* before /proc is read */
	p = malloc(sizeof(*p));
	if (!p) {
		*err = sp_err_set(&r->err, -ENOMEM, "out of memory");
		return NULL;
	}
	found = sp_py_find((pid_t)pid, p, why, sizeof(why));
	if (found == 1 && !(*err = load(r)) && !py->bpf) {
		/* the kernel refused the program: it is said now */
		found = -ENOTSUP;
		snprintf(why, sizeof(why), "%s", py->denied_why);
	}
	if (found == -ENOTSUP) {
		/* said once: not looked at again */
		s->val = REFUSED;
		if (!py->refused++ && !py->why[0])
			snprintf(py->why, sizeof(py->why), "%s", why);
	}
	if (found != 1 || *err || !py->bpf ||
	    sp_py_bpf_watch(py->bpf, (pid_t)pid, p)) {
		free(p);
		return NULL;
	}
	for (i = 0; i < py->n && py->v[i].pid; i++)
		;
	if (i == py->n && SP_GROW(py->v, py->cap, py->n + 1)) {
		free(p);
		*err = sp_err_set(&r->err, -ENOMEM, "out of memory");
		return NULL;
	}
	if (i == py->n)
		py->n++;
	pp = &py->v[i];
	memset(pp, 0, sizeof(*pp));
	pp->pid = pid;
	pp->p = p;
	/* the slot may have moved with the table */
	s = sp_u64map_find(&py->procs, pid);
	s->val = i + 1;
	return pp;
}

int rec_python_preload(struct sp_recorder *r)
{
	return r->o.python == SP_RECORD_PYTHON_OFF ? 0 : load(r);
}

int rec_python_early(struct sp_recorder *r, pid_t pid)
{
	int e = rec_python_preload(r);

	if (e || r->o.python == SP_RECORD_PYTHON_OFF)
		return e;
	examine(r, (uint32_t)pid, &e);
	return e;
}

void rec_python_forget(struct sp_recorder *r, uint32_t pid, uint64_t time)
{
	struct rec_python *py = &r->py;
	struct sp_u64slot *s = sp_u64map_find(&py->procs, pid);
	const struct sp_u64slot *at = sp_u64map_find(&py->looked, pid);
	struct rec_pyproc *pp;

	if (!s)
		return;
	if (time && at && time < at->val)
		return;		/* looked at after it: already the new program */
	if (s->val && s->val != REFUSED) {
		pp = &py->v[s->val - 1];
		free(pp->p);
		free(pp->c);
		sp_u64map_release(&pp->codes);
		memset(pp, 0, sizeof(*pp));
		if (py->bpf)
			sp_py_bpf_forget(py->bpf, (pid_t)pid);
	}
	sp_u64map_del(&py->procs, pid);
	sp_u64map_del(&py->looked, pid);
}

int rec_python_mapped(struct sp_recorder *r, uint32_t pid, const char *path)
{
	const char *base = strrchr(path, '/');
	struct sp_u64slot *s;
	int e;

	base = base ? base + 1 : path;
	if (r->o.python == SP_RECORD_PYTHON_OFF ||
	    (strncmp(base, "python", 6) && strncmp(base, "libpython", 9)))
		return 0;
	s = sp_u64map_find(&r->py.procs, pid);
	if (s && s->val)
		return 0;	/* known already, or refused */
	if (s)
		sp_u64map_del(&r->py.procs, pid);
	examine(r, pid, &e);
	return e;
}

int rec_python_is_chain(const struct sp_recorder *r, uint64_t id)
{
	return r->py.bpf && sp_u64map_find(&r->py.out_ids, id) != NULL;
}

int rec_python_chain(struct sp_recorder *r, const struct perf_event_header *h)
{
	struct rec_python *py = &r->py;
	/* id, pid/tid, time, cpu/res, then the raw size and data */
	size_t at = sizeof(*h) + 8 + 8 + 8 + 8;
	struct sp_py_chain *c = &py->pending[r->ev.draining];
	uint32_t size;

	py->pending_set[r->ev.draining] = 0;
	if (h->size < at + 4)
		return 0;
	memcpy(&size, (const uint8_t *)h + at, 4);
	if (size > h->size - at - 4)
		return 0;
	memset(c, 0, sizeof(*c));
	memcpy(c, (const uint8_t *)h + at + 4,
	       size < sizeof(*c) ? size : sizeof(*c));
	if (c->magic != SP_PY_MAGIC || c->n > SP_PY_MAXF ||
	    size < offsetof(struct sp_py_chain, f) +
		   (size_t)c->n * sizeof(c->f[0]))
		return 0;
	py->pending_set[r->ev.draining] = 1;
	return 0;
}

/* Queue the PYCODE record of a code object just read. */
static int write_code(struct sp_recorder *r, uint32_t pid, uint64_t time,
		      uint32_t id, uint64_t bytecode, const struct sp_py_code *c)
{
	size_t q = strlen(c->qualname[0] ? c->qualname : c->name);
	size_t f = strlen(c->filename);
	size_t size = sp_align8(sizeof(struct sp_pycode_rec) + q + f +
				c->linetable_len);
	struct sp_pycode_rec *o = rec_enqueue(r, time, size);
	char *p;

	if (!o)
		return -ENOMEM;
	memset(o, 0, size);
	o->hdr.type = SP_REC_PYCODE;
	o->hdr.size = (uint32_t)size;
	o->time = time;
	o->pid = pid;
	o->id = id;
	o->bytecode = bytecode;
	o->firstlineno = c->firstlineno;
	o->qualname_len = (uint32_t)q;
	o->filename_len = (uint32_t)f;
	o->linetable_len = (uint32_t)c->linetable_len;
	p = (char *)(o + 1);
	memcpy(p, c->qualname[0] ? c->qualname : c->name, q);
	memcpy(p + q, c->filename, f);
	if (c->linetable_len)
		memcpy(p + q + f, c->linetable, c->linetable_len);
	r->py.codes++;
	return 0;
}

/* The ID of the code object at addr, read and written the first time. */
static int code_id(struct sp_recorder *r, struct rec_pyproc *pp,
		   uint64_t time, uint64_t addr, uint64_t stamp, uint32_t *id)
{
	struct rec_python *py = &r->py;
	struct sp_u64slot *s = sp_u64map_find(&pp->codes, addr);
	struct sp_py_code c;
	int e, is_new;

	*id = 0;
	if (s && pp->c[s->val].stamp == stamp) {
		*id = pp->c[s->val].id;
		return 0;
	}
	e = sp_py_read_code((pid_t)pp->pid, pp->p, addr, stamp, &c);
	if (e == -ENOMEM)
		return e;
	if (e) {
		py->unreadable++;
		return 0;	/* gone, or another object now: unnamed */
	}
	if (!s) {
		if (SP_GROW(pp->c, pp->capc, pp->nc + 1) ||
		    !(s = sp_u64map_get(&pp->codes, addr, &is_new))) {
			free(c.linetable);
			return -ENOMEM;
		}
		s->val = pp->nc++;
	}
	pp->c[s->val].stamp = stamp;
	pp->c[s->val].id = ++py->next_id;
	*id = py->next_id;
	e = write_code(r, pp->pid, time, *id, addr + pp->p->co_code, &c);
	free(c.linetable);
	return e;
}

int rec_python_sample(struct sp_recorder *r, uint32_t pid, uint32_t tid,
		      uint64_t time)
{
	struct rec_python *py = &r->py;
	unsigned b = r->ev.draining;
	const struct sp_py_chain *c;
	const struct sp_u64slot *s;
	struct rec_pyproc *pp;
	struct sp_pystack_rec *o;
	size_t size;
	unsigned i;
	int e;

	/*
	 * Only a process looked at (when it was given, mapped CPython, or
	 * was found mapping it at the start) has a chain in its samples.
	 */
	if (r->o.python == SP_RECORD_PYTHON_OFF || !pid ||
	    !py->pending_set || !py->pending_set[b] ||
	    !(s = sp_u64map_find(&py->procs, pid)) || !s->val ||
	    s->val == REFUSED)
		return 0;
	pp = &py->v[s->val - 1];
	c = &py->pending[b];
	if (c->tid != tid || c->pid != pid)
		return 0;
	py->pending_set[b] = 0;
	if ((c->flags & SP_PY_NOTHREAD) || (!c->n && !(c->flags & SP_PY_FAULT)))
		return 0;	/* not a Python thread: native frames only */
	if (SP_GROW(py->words, py->nwords, c->n ? c->n : 1))
		return -ENOMEM;
	for (i = 0; i < c->n; i++) {
		uint64_t addr = c->f[i].code & ~(uint64_t)SP_PY_ENTRY;
		uint64_t start = addr + pp->p->co_code;
		uint32_t bits = 0, id = 0;

		if (c->f[i].code & SP_PY_ENTRY)
			bits |= SP_PYF_ENTRY;
		if ((bits & SP_PYF_ENTRY) && pp->p->where.entry_owner) {
			py->words[i] = sp_pyf_make(0, bits | SP_PYF_SHIM);
			continue;
		}
		if ((e = code_id(r, pp, time, addr, c->f[i].stamp, &id)))
			return e;
		if (c->f[i].instr >= start && c->f[i].instr - start < SP_PYF_NOOFF)
			bits |= (uint32_t)(c->f[i].instr - start);
		else
			bits |= SP_PYF_NOOFF;
		py->words[i] = sp_pyf_make(id, bits);
	}
	size = sizeof(*o) + 8u * c->n;
	o = rec_enqueue(r, time, size);
	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->hdr.type = SP_REC_PYSTACK;
	o->hdr.size = (uint32_t)size;
	o->time = time;
	o->pid = pid;
	o->tid = tid;
	o->n = (uint16_t)c->n;
	if (c->flags & SP_PY_TRUNC)
		o->flags |= SP_PYS_TRUNC;
	if (c->flags & SP_PY_FAULT)
		o->flags |= SP_PYS_FAULT;
	memcpy(o + 1, py->words, 8u * c->n);
	py->stacks++;
	/* counted at its first stack: one looked at just before its exec,
	   and again after, is one */
	if (!pp->stacks++)
		py->nprocs++;
	return 0;
}
