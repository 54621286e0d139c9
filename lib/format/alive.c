/* SPDX-License-Identifier: MIT */
/* alive.c: the processes of a stream alive, from their threads' records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "alive.h"
#include "python.h"

struct proc {
	uint32_t pid;
	uint32_t *tids;		/* its threads alive, in no order */
	size_t ntids, captids;
	int ended;		/* no thread left since end_time */
	uint64_t end_time;
};

/* A process that ended at time, unless it came back since. */
struct ended {
	uint32_t pid;
	uint64_t time;
};

struct sp_alive {
	sp_alive_forget_fn *forget;
	void *arg;
	struct sp_u64map procs;		/* pid -> struct proc pointer */
	struct sp_u64map threads;	/* pid << 32 | tid -> index in tids */
	struct ended *ended;		/* in the order they ended: a queue */
	size_t head, n, cap;
};

struct sp_alive *sp_alive_new(sp_alive_forget_fn *forget, void *arg)
{
	struct sp_alive *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->forget = forget;
	a->arg = arg;
	return a;
}

void sp_alive_free(struct sp_alive *a)
{
	uint32_t i;

	if (!a)
		return;
	for (i = 0; i < a->procs.nslots; i++) {
		struct proc *p;

		if (!a->procs.slots[i].used)
			continue;
		p = (struct proc *)(uintptr_t)a->procs.slots[i].val;
		free(p->tids);
		free(p);
	}
	sp_u64map_release(&a->procs);
	sp_u64map_release(&a->threads);
	free(a->ended);
	free(a);
}

static struct proc *find(const struct sp_alive *a, uint32_t pid)
{
	const struct sp_u64slot *slot = sp_u64map_find(&a->procs, pid);

	return slot ? (struct proc *)(uintptr_t)slot->val : NULL;
}

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

/* Thread tid of p is alive; a process that had ended lives again. */
static int thread_add(struct sp_alive *a, struct proc *p, uint32_t tid)
{
	struct sp_u64slot *slot;
	int is_new;

	slot = sp_u64map_get(&a->threads, thread_key(p->pid, tid), &is_new);
	if (!slot)
		return -ENOMEM;
	if (!is_new)
		return 0;
	if (SP_GROW(p->tids, p->captids, p->ntids + 1)) {
		sp_u64map_del(&a->threads, thread_key(p->pid, tid));
		return -ENOMEM;
	}
	slot->val = p->ntids;
	p->tids[p->ntids++] = tid;
	p->ended = 0;
	return 0;
}

static void thread_del(struct sp_alive *a, struct proc *p, uint32_t tid)
{
	struct sp_u64slot *slot;
	uint64_t i;

	slot = sp_u64map_find(&a->threads, thread_key(p->pid, tid));
	if (!slot)
		return;
	i = slot->val;
	sp_u64map_del(&a->threads, thread_key(p->pid, tid));
	if (i >= p->ntids)
		return;
	/* the last one takes its place */
	p->tids[i] = p->tids[--p->ntids];
	if (i < p->ntids) {
		slot = sp_u64map_find(&a->threads,
				      thread_key(p->pid, p->tids[i]));
		if (slot)
			slot->val = i;
	}
}

static void threads_clear(struct sp_alive *a, struct proc *p)
{
	size_t i;

	for (i = 0; i < p->ntids; i++)
		sp_u64map_del(&a->threads, thread_key(p->pid, p->tids[i]));
	p->ntids = 0;
}

/* The process pid, known from now on with its main thread. */
static struct proc *see(struct sp_alive *a, uint32_t pid)
{
	struct sp_u64slot *slot;
	struct proc *p;
	int is_new;

	slot = sp_u64map_get(&a->procs, pid, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return (struct proc *)(uintptr_t)slot->val;
	p = calloc(1, sizeof(*p));
	if (!p) {
		sp_u64map_del(&a->procs, pid);
		return NULL;
	}
	p->pid = pid;
	slot->val = (uint64_t)(uintptr_t)p;
	if (thread_add(a, p, pid)) {
		sp_u64map_del(&a->procs, pid);
		free(p);
		return NULL;
	}
	return p;
}

int sp_alive_see(struct sp_alive *a, uint32_t pid)
{
	return see(a, pid) ? 0 : -ENOMEM;
}

static void forget(struct sp_alive *a, struct proc *p)
{
	if (a->forget)
		a->forget(a->arg, p->pid);
	threads_clear(a, p);
	sp_u64map_del(&a->procs, p->pid);
	free(p->tids);
	free(p);
}

/*
 * The EXIT of its last thread came at time: keep it SP_ALIVE_LINGER_NS
 * for the records stamped before that, which may still come.
 */
static int end(struct sp_alive *a, struct proc *p, uint64_t time)
{
	if (SP_GROW(a->ended, a->cap, a->n + 1))
		return -ENOMEM;
	a->ended[a->n++] = (struct ended){ p->pid, time };
	p->ended = 1;
	p->end_time = time;
	return 0;
}

/* Forget the processes that ended SP_ALIVE_LINGER_NS or more before now. */
static void expire(struct sp_alive *a, uint64_t now)
{
	while (a->head < a->n) {
		const struct ended *e = &a->ended[a->head];
		struct proc *p;

		if (e->time > now || now - e->time < SP_ALIVE_LINGER_NS)
			break;
		a->head++;
		p = find(a, e->pid);
		/* not if it came back, nor a new process with its pid */
		if (p && p->ended && p->end_time == e->time)
			forget(a, p);
	}
	if (a->head == a->n) {
		a->head = a->n = 0;
	} else if (a->head >= 64 && a->head * 2 >= a->n) {
		a->n -= a->head;
		memmove(a->ended, a->ended + a->head, a->n * sizeof(*a->ended));
		a->head = 0;
	}
}

static int apply_comm(struct sp_alive *a, const struct sp_comm_rec *c)
{
	struct proc *p = see(a, c->pid);

	if (!p || thread_add(a, p, c->tid))
		return -ENOMEM;
	/*
	 * An exec leaves one thread, the one that ran it, which has the
	 * process's ID from then on.
	 */
	if (c->tid == c->pid && (c->flags & SP_COMM_EXEC) &&
	    !(c->flags & SP_REC_SYNTH)) {
		threads_clear(a, p);
		if (thread_add(a, p, c->pid))
			return -ENOMEM;
	}
	return 0;
}

static int apply_fork(struct sp_alive *a, const struct sp_task_rec *t)
{
	struct proc *p;

	/* a pid given to a new process: the old one is gone for good */
	if (t->pid != t->ppid && !(t->flags & SP_REC_SYNTH) &&
	    (p = find(a, t->pid)))
		forget(a, p);
	p = see(a, t->pid);
	return p && !thread_add(a, p, t->tid) ? 0 : -ENOMEM;
}

static int apply_exit(struct sp_alive *a, const struct sp_task_rec *t)
{
	struct proc *p = find(a, t->pid);

	if (!p)
		return 0;
	thread_del(a, p, t->tid);
	/* the last thread, or one nobody announced, exiting after it */
	return p->ntids ? 0 : end(a, p, t->time);
}

int sp_alive_apply(struct sp_alive *a, const struct sp_rec_hdr *rec)
{
	switch (rec->type) {
	case SP_REC_MMAP:
		expire(a, ((const struct sp_mmap_rec *)rec)->time);
		return sp_alive_see(a, ((const struct sp_mmap_rec *)rec)->pid);
	case SP_REC_IMAGE:
		expire(a, ((const struct sp_image_rec *)rec)->time);
		return sp_alive_see(a, ((const struct sp_image_rec *)rec)->pid);
	case SP_REC_COMM:
		expire(a, ((const struct sp_comm_rec *)rec)->time);
		return apply_comm(a, (const struct sp_comm_rec *)rec);
	case SP_REC_FORK:
		expire(a, ((const struct sp_task_rec *)rec)->time);
		return apply_fork(a, (const struct sp_task_rec *)rec);
	case SP_REC_EXIT:
		expire(a, ((const struct sp_task_rec *)rec)->time);
		return apply_exit(a, (const struct sp_task_rec *)rec);
	/* records of a process that end nothing: they make it known */
	case SP_REC_PERFMAP:
		return sp_alive_see(a, ((const struct sp_perfmap_rec *)rec)->pid);
	case SP_REC_PYCODE:
		return sp_alive_see(a, ((const struct sp_pycode_rec *)rec)->pid);
	default:
		return 0;
	}
}

int sp_alive_known(const struct sp_alive *a, uint32_t pid)
{
	return find(a, pid) != NULL;
}

int sp_alive_ended(const struct sp_alive *a, uint32_t pid)
{
	const struct proc *p = find(a, pid);

	return p && p->ended;
}

const uint32_t *sp_alive_threads(const struct sp_alive *a, uint32_t pid,
				 size_t *n)
{
	const struct proc *p = find(a, pid);

	*n = p ? p->ntids : 0;
	return p ? p->tids : NULL;
}

size_t sp_alive_count(const struct sp_alive *a)
{
	return a->procs.n;
}
