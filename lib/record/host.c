/* SPDX-License-Identifier: MIT */
/*
 * host.c: the whole host as the target: which threads' samples are
 * written, and what /proc says of every process when recording begins.
 *
 * The kernel samples every task of every CPU (events.c); what is not
 * wanted is dropped here, sample by sample, from two flags each thread
 * carries in the recorder's table: REC_ID_OWN for the recorder and the
 * pipeline it writes into (which would otherwise profile itself),
 * REC_ID_NAMED when --comm names the thread.  A thread inherits both from
 * the thread that created it; a COMM record (an exec, a prctl) decides the
 * name anew.
 *
 * The pipeline is found by its pipes, not by process group (a script
 * without job control runs everything in one group, the programs it means
 * to profile too): the recorder's output, when a pipe or a FIFO, is read by
 * the next stage, whose standard output is read by the one after, and so
 * on.  Stages that exec after /proc was read are caught at their exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"

#include "format/tail.h"
#include "os/procfs.h"
#include "recorder.h"

void rec_host_release(struct rec_host *h)
{
	if (h->on && h->cgroup_fd >= 0)
		close(h->cgroup_fd);
	free(h->comms);
	free(h->pick_pids);
	free(h->pick_tids);
	sp_u64map_release(&h->pipes);
	memset(h, 0, sizeof(*h));
	h->cgroup_fd = -1;
}

static int cmp_pid(const void *a, const void *b);

static int parse_comms(struct sp_recorder *r, const char *list)
{
	struct rec_host *h = &r->host;
	const char *p = list;
	size_t n = 1;

	for (; *p; p++)
		n += *p == ',';
	h->comms = calloc(n, sizeof(*h->comms));
	if (!h->comms)
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	for (p = list; ; p++) {
		size_t len = strcspn(p, ",");

		/* the kernel keeps 15 bytes of a name */
		if (!len || len > 15)
			return sp_err_set(&r->err, -EINVAL, "invalid thread name '%.*s' in '%s': must be 1..15 bytes, as the kernel keeps them",
					  (int)len, p, list);
		memcpy(h->comms[h->ncomms++], p, len);
		p += len;
		if (!*p)
			break;
	}
	return 0;
}

/* The key of a pipe or FIFO: its device and inode, mixed. */
static uint64_t pipe_key(const struct stat *st)
{
	uint64_t k[2] = { st->st_dev, st->st_ino };

	return sp_hash_bytes(k, sizeof(k)) | 1;
}

/*
 * The processes (-p) and threads (--tid) to keep, ascending; each must
 * exist now.  0 or -errno.
 */
static int pick(struct sp_recorder *r, const pid_t *pids, size_t n)
{
	struct rec_host *h = &r->host;
	const char *p = r->o.tids;
	size_t i, cap = 1;
	char *end;
	long v;

	h->picking = n || p;
	if (n && !(h->pick_pids = malloc(n * sizeof(*pids))))
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		if (!sp_procfs_alive(pids[i]))
			return sp_err_set(&r->err, -ESRCH, "no such process %d",
					  (int)pids[i]);
		h->pick_pids[h->npick_pids++] = pids[i];
	}
	if (n)
		qsort(h->pick_pids, n, sizeof(*pids), cmp_pid);
	if (!p)
		return 0;
	for (; *p; p++)
		cap += *p == ',';
	if (!(h->pick_tids = calloc(cap, sizeof(*h->pick_tids))))
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	for (p = r->o.tids; ; p = end + 1) {
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 1 || v > INT32_MAX ||
		    (*end && *end != ','))
			return sp_err_set(&r->err, -EINVAL, "invalid thread id in '%s'",
					  r->o.tids);
		if (!sp_procfs_alive((pid_t)v))
			return sp_err_set(&r->err, -ESRCH, "no such thread %ld",
					  v);
		h->pick_tids[h->npick_tids++] = (pid_t)v;
		if (!*end)
			break;
	}
	qsort(h->pick_tids, h->npick_tids, sizeof(pid_t), cmp_pid);
	return 0;
}

int rec_host_setup(struct sp_recorder *r, const pid_t *pids, size_t n)
{
	struct rec_host *h = &r->host;
	int e;

	h->cgroup_fd = -1;
	h->on = r->o.attach == SP_RECORD_ATTACH_HOST;
	if (!h->on) {
		if (r->o.cgroup || r->o.comms || r->o.tids)
			return sp_err_set(&r->err, -EINVAL, "a cgroup, thread names or thread ids filter the whole host only");
		return 0;
	}
	if ((e = pick(r, pids, n)))
		return e;
	if (r->o.comms && (e = parse_comms(r, r->o.comms)))
		return e;
	if (r->o.cgroup) {
		h->cgroup_fd = open(r->o.cgroup, O_RDONLY | O_DIRECTORY |
				    O_CLOEXEC);
		if (h->cgroup_fd < 0)
			return sp_err_set(&r->err, -errno, "cannot open cgroup '%s': %s",
					  r->o.cgroup, strerror(errno));
	}
	if (!r->o.include_self) {
		struct stat st;
		int fd = sp_out_pipe(r->out);

		h->self = getpid();
		/* the stream's reader, if it is a pipe, is the next stage */
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
		    !sp_u64map_get(&h->pipes, pipe_key(&st), NULL))
			return sp_err_set(&r->err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* The key of the pipe or FIFO that descriptor fd of pid is, or 0. */
static uint64_t pipe_of(pid_t pid, int fd)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	if (stat(path, &st) || !S_ISFIFO(st.st_mode))
		return 0;
	return pipe_key(&st);
}

/*
 * Whether pid reads one of the pipeline's pipes: then what it writes to
 * is one more.  1, 0 or -ENOMEM.
 */
static int joins_pipeline(struct rec_host *h, pid_t pid)
{
	uint64_t in, out;

	if (!h->pipes.n || !(in = pipe_of(pid, 0)) ||
	    !sp_u64map_find(&h->pipes, in))
		return 0;
	out = pipe_of(pid, 1);
	if (out && !sp_u64map_get(&h->pipes, out, NULL))
		return -ENOMEM;
	return 1;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * Mark in mark[] the processes among pids (ascending), whose parents are
 * in ppids, that seed(h, pid) names (1; -ENOMEM) and their descendants,
 * until no more join.  0 or -ENOMEM.
 */
static int spread(struct rec_host *h, const pid_t *pids, const pid_t *ppids,
		  size_t n, uint8_t *mark, int (*seed)(struct rec_host *, pid_t))
{
	size_t i, joined;
	int e;

	do {
		joined = 0;
		for (i = 0; i < n; i++) {
			const pid_t *parent;

			if (mark[i])
				continue;
			parent = bsearch(&ppids[i], pids, n, sizeof(*pids),
					 cmp_pid);
			if (parent && mark[parent - pids])
				e = 1;
			else if ((e = seed(h, pids[i])) < 0)
				return e;
			mark[i] = (uint8_t)e;
			joined += (size_t)e;
		}
	} while (joined);
	return 0;
}

/* The recorder, and those reading the pipeline's pipes. */
static int pipeline_seed(struct rec_host *h, pid_t pid)
{
	return pid == h->self ? 1 : joins_pipeline(h, pid);
}

/* A process -p names. */
static int picked_seed(struct rec_host *h, pid_t pid)
{
	return bsearch(&pid, h->pick_pids, h->npick_pids, sizeof(pid_t),
		       cmp_pid) != NULL;
}

static int named(const struct rec_host *h, const char *comm)
{
	size_t i;

	for (i = 0; i < h->ncomms; i++)
		if (!strncmp(h->comms[i], comm, 16))
			return 1;
	return 0;
}

int rec_host_own(struct sp_recorder *r, uint32_t tid)
{
	if (!r->host.on || !(rec_thread_flags(r, tid) & REC_ID_OWN))
		return 0;
	r->host.filtered++;
	return 1;
}

/* Whether the samples of thread tid are written. */
static int wanted(struct sp_recorder *r, uint32_t tid)
{
	uint8_t f = rec_thread_flags(r, tid);

	return !(f & REC_ID_OWN) && (!r->host.ncomms || (f & REC_ID_NAMED)) &&
	       (!r->host.picking || (f & REC_ID_PICKED));
}

/* Thread tid was created by ptid: it is of the same group, with its name. */
static int host_fork(struct sp_recorder *r, uint32_t tid, uint32_t ptid)
{
	uint8_t f;

	f = rec_thread_flags(r, ptid) &
	    (REC_ID_OWN | REC_ID_NAMED | REC_ID_PICKED);
	/* a tid used again: nothing of the last one's carries over */
	if (rec_set_flags(r, tid, REC_ID_OWN | REC_ID_NAMED | REC_ID_PICKED, 0))
		return -ENOMEM;
	return f ? rec_set_flags(r, tid, f, 1) : 0;
}

/* Thread tid of pid took the name comm, at an exec of pid when exec is set. */
static int host_comm(struct sp_recorder *r, uint32_t pid, uint32_t tid,
		     const char *comm, int exec)
{
	int e = 0;

	/* a stage of the pipeline forked before /proc was read, exec'd after */
	if (exec && (e = joins_pipeline(&r->host, (pid_t)pid)) > 0)
		e = rec_set_flags(r, tid, REC_ID_OWN, 1);
	if (e)
		return -ENOMEM;
	if (!r->host.ncomms)
		return 0;
	return rec_set_flags(r, tid, REC_ID_NAMED, named(&r->host, comm));
}

int rec_host_write(struct sp_recorder *r, const struct sp_rec_hdr *h)
{
	const struct sp_task_rec *t = (const void *)h;
	const struct sp_comm_rec *c = (const void *)h;
	uint32_t tid;

	switch (h->type) {
	case SP_REC_FORK:
		return host_fork(r, t->tid, t->ptid) ? -ENOMEM : 1;
	case SP_REC_COMM:
		/* a synthesized one was judged when /proc was read */
		if (!(c->flags & SP_REC_SYNTH) &&
		    host_comm(r, c->pid, c->tid, c->comm,
			      (c->flags & SP_COMM_EXEC) != 0))
			return -ENOMEM;
		return 1;
	case SP_REC_SAMPLE:
	case SP_REC_OFFCPU:
		tid = ((const struct sp_raw_sample *)h)->tid;
		if (wanted(r, tid))
			return 1;
		r->host.filtered++;
		return 0;
	case SP_REC_SWITCH:
		return wanted(r, ((const struct sp_switch_rec *)h)->tid);
	case SP_REC_TAIL:
		/* it goes with the sample after it, of its thread */
		return wanted(r, ((const struct sp_tail_rec *)h)->tid);
	default:
		return 1;
	}
}

/* A thread --tid names. */
static int picked_thread(const struct rec_host *h, pid_t tid)
{
	return h->npick_tids && bsearch(&tid, h->pick_tids, h->npick_tids, sizeof(pid_t),
		       cmp_pid) != NULL;
}

/* One process as /proc has it now; one that has gone is skipped. */
static int existing_process(struct sp_recorder *r, pid_t pid, pid_t ppid,
			    int own, int picked)
{
	struct rec_host *h = &r->host;
	pid_t *tids;
	size_t n, i;
	uid_t uid;
	int e = 0;

	if (sp_procfs_tids(pid, &tids, &n))
		return 0;
	for (i = 0; !e && i < n; i++) {
		char comm[16];
		int have = sp_procfs_comm(pid, tids[i], comm) == 0;
		uint8_t f = (uint8_t)((own ? REC_ID_OWN : 0) |
				      (have && named(h, comm) ? REC_ID_NAMED : 0) |
				      (picked || picked_thread(h, tids[i]) ?
				       REC_ID_PICKED : 0));

		if (rec_note_ids(r, (uint32_t)pid, (uint32_t)tids[i], f)) {
			e = -ENOMEM;
			break;
		}
		e = rec_synth_thread(r, pid, tids[i],
				     tids[i] == pid ? ppid : pid,
				     have ? comm : NULL);
	}
	free(tids);
	if (!e && sp_procfs_uid(pid, &uid) == 0 && rec_pmap_follow(r, pid, uid))
		e = -ENOMEM;
	if (!e)
		e = rec_synth_maps(r, pid);
	h->processes++;
	return e;
}

int rec_host_existing(struct sp_recorder *r)
{
	pid_t *pids, *ppids, tgid;
	uint8_t *own, *picked;
	size_t n, i;
	int e = sp_procfs_pids(&pids, &n);

	if (e)
		return sp_err_set(&r->err, e, "cannot list /proc: %s",
				  strerror(-e));
	own = calloc(n + 1, 1);
	picked = calloc(n + 1, 1);
	ppids = calloc(n + 1, sizeof(*ppids));
	e = own && picked && ppids ? 0 : -ENOMEM;
	for (i = 0; !e && i < n; i++)
		if (sp_procfs_status(pids[i], &tgid, &ppids[i]))
			ppids[i] = 0;
	if (!e && r->host.self)
		e = spread(&r->host, pids, ppids, n, own, pipeline_seed);
	if (!e && r->host.npick_pids)
		e = spread(&r->host, pids, ppids, n, picked, picked_seed);
	for (i = 0; !e && i < n; i++)
		e = existing_process(r, pids[i], ppids[i], own[i], picked[i]);
	/* the idle tasks, which are in no /proc: perf's name for them */
	if (!e)
		e = rec_synth_comm(r, 0, 0, "swapper");
	free(own);
	free(picked);
	free(ppids);
	free(pids);
	if (e == -ENOMEM)
		return sp_err_set(&r->err, e, "out of memory");
	if (e)
		return sp_err_set(&r->err, e, "cannot write the raw stream: %s",
				  strerror(-e));
	return 0;
}
