/* SPDX-License-Identifier: MIT */
/*
 * stacktail.c: stack tails: the rest of a stack deeper than its sample's
 * copy, read from the live process when the sample is drained.
 *
 * perf copies at most 64 KiB of a sample's stack.  When the copy is full
 * and the stack mapping goes on above it, the outer frames (the oldest,
 * which rarely change while the sample waits in the ring buffer) are read
 * with process_vm_readv(2), from a little below the end of the copy up to
 * the top of the mapping that holds the sample's SP.  The tail is kept only
 * when the overlap, which must hold a return address, is byte for byte the
 * end of the copy: the frames at the seam have not changed since the
 * sample.  Otherwise the stack stays cut where the copy ends.
 *
 * The thread runs on while it is read, and the read is no snapshot: the
 * overlap is read first, then the tail from the top of the stack down,
 * page by page, then the overlap again, and both must match.  Frames above
 * the seam change only if the thread returns above it; if it did so and
 * called down again while the tail was read, the second overlap shows it,
 * since calls go down faster than a read does.  What no read can tell is a
 * thread that returned above the seam and stays there: the bytes below its
 * SP are dead but unchanged, and pass the check.  A tail is a good guess
 * about frames that did not change, not a proof.
 *
 * The mappings come from /proc/PID/maps, read once per process and again
 * only on a miss (at most once a drain pass), never per sample.  The tail
 * is queued whole before its sample; when it is written, in stream order,
 * it shrinks to the bytes that differ from the thread's previous tail
 * (format/tail.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "base/grow.h"
#include "os/perm.h"
#include "os/procfs.h"
#include "recorder.h"

/* The overlap: at least this many bytes, holding a return address ... */
#define OVERLAP_MIN	512
/* ... found within this many below the end of the copy. */
#define OVERLAP_MAX	4096
/* pieces of one read, from the top of the stack down */
#define READ_IOVS	1024

/* The mappings of one process that matter here, ascending. */
struct smap {
	uint64_t start, end;
	uint32_t prot;
};

struct tail_proc {
	struct smap *v;
	size_t n, cap;
	uint64_t pass;		/* of the last read of its maps */
	int stale;		/* a read failed: re-read on the next look */
};

int rec_tail_setup(struct sp_recorder *r)
{
	struct rec_tail *t = &r->tail;

	if (r->o.stack_tail > SP_RECORD_MAX_TAIL)
		return sp_err_set(&r->err, -EINVAL, "invalid stack tail %u: must be 0..%u",
				  r->o.stack_tail, SP_RECORD_MAX_TAIL);
	t->max = r->o.stack_tail;
	t->sp_index = sp_raw_reg_index(r->ev.attr.sample_regs_user,
				       SP_RAW_REG_SP);
	t->pass = 1;
	if (t->max && !t->tails) {
		t->tails = sp_tails_new();
		t->local = calloc(READ_IOVS, sizeof(*t->local));
		t->remote = calloc(READ_IOVS, sizeof(*t->remote));
		if (!t->tails || !t->local || !t->remote)
			return sp_err_set(&r->err, -ENOMEM, "out of memory");
	}
	return 0;
}

void rec_tail_pass(struct sp_recorder *r)
{
	r->tail.pass++;
}

static void proc_free(struct tail_proc *p)
{
	if (p)
		free(p->v);
	free(p);
}

void rec_tail_release(struct rec_tail *t)
{
	uint32_t i;

	for (i = 0; i < t->procs.nslots; i++)
		if (t->procs.slots[i].used)
			proc_free((struct tail_proc *)(uintptr_t)t->procs.slots[i].val);
	sp_u64map_release(&t->procs);
	sp_tails_free(t->tails);
	free(t->buf);
	free(t->local);
	free(t->remote);
	memset(t, 0, sizeof(*t));
}

static int add_map(const struct sp_procfs_map *m, void *arg)
{
	struct tail_proc *p = arg;

	/* stacks are writable, return addresses point into code */
	if (!(m->prot & (PROT_WRITE | PROT_EXEC)))
		return 0;
	if (SP_GROW(p->v, p->cap, p->n + 1))
		return -ENOMEM;
	p->v[p->n].start = m->start;
	p->v[p->n].end = m->end;
	p->v[p->n].prot = m->prot;
	p->n++;
	return 0;
}

static int read_maps(struct rec_tail *t, pid_t pid, struct tail_proc *p)
{
	int e;

	p->n = 0;
	p->pass = t->pass;
	p->stale = 0;
	e = sp_procfs_maps(pid, add_map, p);
	if (e == -ENOMEM)
		return e;
	if (e)
		p->n = 0;	/* gone, or unreadable: no tails */
	return 0;
}

static const struct smap *find(const struct tail_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->v[mid].start)
			hi = mid;
		else if (addr >= p->v[mid].end)
			lo = mid + 1;
		else
			return &p->v[mid];
	}
	return NULL;
}

/*
 * The writable mapping of pid holding sp, reading the maps when pid is new
 * or, at most once a pass, when they miss it or a read failed.  *m is NULL
 * when there is none.  0 or -ENOMEM.
 */
static int stack_map(struct sp_recorder *r, uint32_t pid, uint64_t sp,
		     struct tail_proc **pp, const struct smap **m)
{
	struct rec_tail *t = &r->tail;
	struct sp_u64slot *s = sp_u64map_get(&t->procs, pid, NULL);
	struct tail_proc *p;

	*m = NULL;
	if (!s)
		return -ENOMEM;
	p = (struct tail_proc *)(uintptr_t)s->val;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->val = (uint64_t)(uintptr_t)p;
		if (read_maps(t, (pid_t)pid, p))
			return -ENOMEM;
	}
	*pp = p;
	*m = find(p, sp);
	if ((!*m || p->stale) && p->pass != t->pass) {
		if (read_maps(t, (pid_t)pid, p))
			return -ENOMEM;
		*m = find(p, sp);
	}
	if (*m && !((*m)->prot & PROT_WRITE))
		*m = NULL;
	return 0;
}

static int is_code(const struct tail_proc *p, uint64_t v)
{
	const struct smap *m = find(p, v);

	return m && (m->prot & PROT_EXEC);
}

/*
 * How many bytes at the end of the copy the tail must match: OVERLAP_MIN,
 * or down to the first word that points into code if that lies further;
 * 0 when no such word is within OVERLAP_MAX.
 */
static uint32_t overlap(const struct tail_proc *p, const uint8_t *stack,
			uint32_t len)
{
	uint32_t off;

	for (off = len & ~7u; off >= 8 && len - off < OVERLAP_MAX; off -= 8) {
		uint64_t v;

		memcpy(&v, stack + off - 8, 8);
		if (is_code(p, v)) {
			uint32_t need = len - (off - 8);

			if (need < OVERLAP_MIN)
				need = OVERLAP_MIN;
			return need < len ? need : len;
		}
	}
	return 0;
}

/*
 * The kernel would not let us read thread tid of pid (Yama's ptrace scope,
 * a security module): count it, and say why once, while the process is
 * there to be asked about.
 */
static void denied(struct rec_tail *t, uint32_t pid, uint32_t tid, int err)
{
	struct sp_perm perm;

	if (!t->denied++) {
		sp_perm_read(&perm, (pid_t)pid, (pid_t)tid);
		sp_perm_explain(&perm, SP_PERM_READ_MEMORY, err, t->denied_why,
				sizeof(t->denied_why));
	}
}

int rec_tail_capture(struct sp_recorder *r, uint32_t pid, uint32_t tid,
		     uint64_t time, const uint8_t *regs, const uint8_t *stack,
		     uint32_t len)
{
	struct rec_tail *t = &r->tail;
	struct tail_proc *p = NULL;
	const struct smap *m;
	struct sp_tail_rec *o;
	uint64_t sp, seam, want, hi, lo, chunk = 4096;
	uint32_t ov;
	size_t k = 0;
	ssize_t n;
	int e;

	/* a copy shorter than the overlap cannot vouch for a tail */
	if (!t->max || t->sp_index < 0 || !pid || len < OVERLAP_MIN)
		return 0;
	memcpy(&sp, regs + 8 * t->sp_index, 8);
	seam = sp + len;
	if (seam < sp)
		return 0;
	e = stack_map(r, pid, sp, &p, &m);
	if (e || !m || m->end <= seam)
		return e;
	t->deep++;
	ov = overlap(p, stack, len);
	if (!ov) {
		t->unread++;
		return 0;
	}
	want = m->end - seam;
	if (want > t->max)
		want = t->max;
	if (SP_GROW(t->buf, t->cap, 2 * ov + want))
		return -ENOMEM;
	while (want / chunk + 3 >= READ_IOVS)
		chunk *= 2;
	/* the overlap, the tail in pieces from its top down, the overlap */
	t->remote[k].iov_base = (void *)(uintptr_t)(seam - ov);
	t->remote[k].iov_len = ov;
	t->local[k].iov_base = t->buf + ov + want;
	t->local[k].iov_len = ov;
	k++;
	for (hi = seam + want; hi > seam; hi = lo, k++) {
		lo = (hi - 1) & ~(chunk - 1);
		if (lo < seam)
			lo = seam;
		t->remote[k].iov_base = (void *)(uintptr_t)lo;
		t->remote[k].iov_len = hi - lo;
		t->local[k].iov_base = t->buf + ov + (lo - seam);
		t->local[k].iov_len = hi - lo;
	}
	t->remote[k].iov_base = (void *)(uintptr_t)(seam - ov);
	t->remote[k].iov_len = ov;
	t->local[k].iov_base = t->buf;
	t->local[k].iov_len = ov;
	k++;
	n = process_vm_readv((pid_t)pid, t->local, k, t->remote, k, 0);
	if (n < 0 && (errno == EPERM || errno == EACCES))
		denied(t, pid, tid, -errno);
	if (n != (ssize_t)(2 * ov + want)) {
		/* gone, not permitted, or the maps have changed */
		p->stale = 1;
		t->unread++;
		return 0;
	}
	if (memcmp(t->buf, stack + len - ov, ov) ||
	    memcmp(t->buf + ov + want, stack + len - ov, ov)) {
		t->changed++;
		return 0;
	}
	o = rec_enqueue(r, time, sp_align8(sizeof(*o) + want));
	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->hdr.type = SP_REC_TAIL;
	o->hdr.size = sp_align8(sizeof(*o) + want);
	o->time = time;
	o->pid = pid;
	o->tid = tid;
	o->start = seam;
	o->len = (uint32_t)want;
	memcpy(o->data, t->buf + ov, want);
	t->captured++;
	return 0;
}

void rec_tail_write(struct sp_recorder *r, struct sp_rec_hdr *h)
{
	struct rec_tail *t = &r->tail;

	if (!t->tails)
		return;
	if (h->type == SP_REC_TAIL) {
		/* on -ENOMEM it goes out whole, which the reader takes too */
		sp_tails_encode(t->tails, (struct sp_tail_rec *)h);
		t->bytes += h->size;
	} else if (h->type == SP_REC_EXIT) {
		const struct sp_task_rec *x = (const void *)h;

		sp_tails_forget(t->tails, x->tid);
		if (x->pid == x->tid) {
			struct sp_u64slot *s = sp_u64map_find(&t->procs, x->pid);

			if (s) {
				proc_free((struct tail_proc *)(uintptr_t)s->val);
				sp_u64map_del(&t->procs, x->pid);
			}
		}
	}
}
