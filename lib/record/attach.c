/* SPDX-License-Identifier: MIT */
/* attach.c: the target processes, their threads, and pausing them to attach. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"
#include "os/perm.h"
#include "os/procfs.h"
#include "recorder.h"

#define MAX_RESCANS	100
#define STOP_WAIT_NS	(2000 * 1000 * 1000ull)	/* for a thread to pause */

int rec_add_target(struct sp_recorder *r, pid_t tgid)
{
	struct rec_targets *tg = &r->tg;
	size_t j;

	for (j = 0; j < tg->n; j++)
		if (tg->pids[j] == tgid)
			return 0;
	if (SP_GROW(tg->pids, tg->cap, tg->n + 1))
		return -ENOMEM;
	tg->pids[tg->n++] = tgid;
	return 0;
}

int rec_targets_alive(const struct sp_recorder *r)
{
	size_t i;

	for (i = 0; i < r->tg.n; i++)
		if (sp_procfs_alive(r->tg.pids[i]))
			return 1;
	return 0;
}

void rec_targets_release(struct rec_targets *tg)
{
	free(tg->pids);
	free(tg->tracees);
	memset(tg, 0, sizeof(*tg));
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
		if (!rec_thread_flags(r, (uint32_t)tids[i]))
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
int rec_rescan(struct sp_recorder *r)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	int round, found, e;
	size_t t, i, n;
	pid_t *tids;

	for (round = 0; round < MAX_RESCANS; round++) {
		found = 0;
		for (t = 0; t < r->tg.n; t++) {
			pid_t pid = r->tg.pids[t];

			e = rec_collect(r);
			if (e)
				return e;
			e = unknown_threads(r, pid, &tids, &n);
			if (e)
				return sp_err_set(&r->err, e, "cannot list the threads of %d: %s",
						  (int)pid, strerror(-e));
			if (n) {
				free(tids);
				nanosleep(&pause, NULL);
				e = rec_collect(r);
				if (!e)
					e = unknown_threads(r, pid, &tids, &n);
				if (e)
					return e;
			}
			for (i = 0; i < n; i++) {
				e = rec_open_thread(r, pid, tids[i]);
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

int rec_open_targets(struct sp_recorder *r)
{
	struct rec_targets *tg = &r->tg;
	size_t i, nt, k;
	pid_t *tids;
	int e, any;

	for (i = 0; i < tg->n; i++) {
		any = 0;
		e = sp_procfs_tids(tg->pids[i], &tids, &nt);
		if (e == -ESRCH && i >= tg->given)
			continue;	/* a child forked while pausing, gone */
		if (e == -ESRCH)
			return sp_err_set(&r->err, e, "no such process %d",
					  (int)tg->pids[i]);
		if (e)
			return sp_err_set(&r->err, e, "cannot list the threads of %d: %s",
					  (int)tg->pids[i], strerror(-e));
		for (k = 0; k < nt; k++) {
			if (rec_thread_flags(r, (uint32_t)tids[k]) & REC_ID_ATTACHED)
				continue;
			e = rec_open_thread(r, tg->pids[i], tids[k]);
			if (e < 0) {
				free(tids);
				return e;
			}
			any |= e;
		}
		free(tids);
		if (!any && i < tg->given)
			return sp_err_set(&r->err, -ESRCH, "no such process %d",
					  (int)tg->pids[i]);
	}
	return 0;
}

/* Pausing the targets (SP_RECORD_ATTACH_STOP) ------------------------------ */

/* Whether thread tid of pid exists and is no zombie. */
static int thread_runs(pid_t pid, pid_t tid)
{
	char st;

	return !sp_procfs_state(pid, tid, &st) && st != 'Z' && st != 'X' &&
	       st != 'x';
}

static struct rec_tracee *tracee_find(struct rec_targets *tg, pid_t tid)
{
	size_t i;

	for (i = 0; i < tg->ntracees; i++)
		if (tg->tracees[i].tid == tid)
			return &tg->tracees[i];
	return NULL;
}

static struct rec_tracee *tracee_add(struct rec_targets *tg, pid_t pid,
				     pid_t tid)
{
	struct rec_tracee *t;

	if (SP_GROW(tg->tracees, tg->tracees_cap, tg->ntracees + 1))
		return NULL;
	t = &tg->tracees[tg->ntracees++];
	t->pid = pid;
	t->tid = tid;
	t->stopped = 0;
	t->sig = 0;
	return t;
}

/*
 * One wait status of a tracee (an index: the array may grow).  Returns 1
 * when it is now stopped, 0 when gone, -ENOMEM.
 */
static int tracee_status(struct sp_recorder *r, size_t i, int st)
{
	struct rec_targets *tg = &r->tg;
	struct rec_tracee *t = &tg->tracees[i];
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
				if (rec_add_target(r, nt))
					return -ENOMEM;
				pid = nt;
			}
			if (!tracee_find(tg, nt) && !tracee_add(tg, pid, nt))
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
	struct rec_targets *tg = &r->tg;
	struct timespec nap = { 0, 200 * 1000 };
	uint64_t deadline = sp_mono_ns() + STOP_WAIT_NS;
	size_t i, waiting;
	int st, e;
	pid_t p;

	do {
		waiting = 0;
		for (i = 0; i < tg->ntracees; i++) {
			struct rec_tracee *t = &tg->tracees[i];

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
			e = tracee_status(r, i, st);
			if (e < 0)
				return sp_err_set(&r->err, e, "out of memory");
		}
		if (waiting)
			nanosleep(&nap, NULL);
	} while (waiting && sp_mono_ns() < deadline);
	return 0;
}

void rec_resume_all(struct sp_recorder *r)
{
	struct rec_targets *tg = &r->tg;
	size_t i;

	for (i = 0; i < tg->ntracees; i++) {
		struct rec_tracee *t = &tg->tracees[i];

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
	tg->ntracees = 0;
}

static int pause_error(struct sp_recorder *r, pid_t pid, pid_t tid, int e)
{
	struct sp_perm p;
	char why[SP_ERR_MAX];

	if (e != -EPERM)
		return sp_err_set(&r->err, e, "cannot pause thread %d of %d to attach: %s",
				  (int)tid, (int)pid, strerror(-e));
	sp_perm_read(&p, pid, tid);
	sp_perm_explain(&p, SP_PERM_TRACE, e, why, sizeof(why));
	return sp_err_set(&r->err, e, "cannot pause thread %d of %d to attach: %s",
			  (int)tid, (int)pid, why);
}

/*
 * Seize and interrupt every thread of every target, again until a scan of
 * /proc finds none new: a thread that a not yet seized one created is found
 * by the scan, one created by a seized one by PTRACE_O_TRACECLONE.
 */
int rec_pause_all(struct sp_recorder *r)
{
	const long opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
			  PTRACE_O_TRACEVFORK;
	struct rec_targets *tg = &r->tg;
	int round, found, e;
	size_t t, i, n;
	pid_t *tids;

	for (round = 0; round < MAX_RESCANS; round++) {
		found = 0;
		for (t = 0; t < tg->n; t++) {
			pid_t pid = tg->pids[t];

			e = sp_procfs_tids(pid, &tids, &n);
			if (e == -ESRCH)
				continue;
			if (e)
				return sp_err_set(&r->err, e, "cannot list the threads of %d: %s",
						  (int)pid, strerror(-e));
			for (i = 0; i < n; i++) {
				if (tracee_find(tg, tids[i]))
					continue;
				if (ptrace(PTRACE_SEIZE, tids[i], 0, (void *)opts)) {
					pid_t tid = tids[i];

					e = -errno;
					/* gone, or a zombie (a leader that
					 * called pthread_exit): nothing runs */
					if (e == -ESRCH || (e == -EPERM &&
					    !thread_runs(pid, tid)))
						continue;
					free(tids);
					return pause_error(r, pid, tid, e);
				}
				if (!tracee_add(tg, pid, tids[i])) {
					ptrace(PTRACE_DETACH, tids[i], 0, 0);
					free(tids);
					return sp_err_set(&r->err, -ENOMEM, "out of memory");
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
