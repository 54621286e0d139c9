/* SPDX-License-Identifier: MIT */
/* events.c: perf events per thread and CPU, their shared per-CPU ring buffers. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/io.h"
#include "os/perm.h"
#include "os/procfs.h"
#include "recorder.h"

/*
 * x86_64 user registers AX..IP, FLAGS, CS, SS, R8-R15: bits 0-23 without
 * DS, ES, FS, GS (12-15), which the kernel refuses.
 */
#define REGS_MASK	0xff0fffull
#define MAX_CPUS	4096
#define FD_RESERVE	64	/* descriptors kept for everything else */
/* a sample's bytes besides its stack: fields, 20 registers, 127 kernel ips */
#define SAMPLE_OVERHEAD	1536

int rec_events_setup(struct sp_recorder *r)
{
	struct sp_record_opts *o = &r->o;
	struct perf_event_attr *a = &r->ev.attr;
	uint64_t config;
	unsigned min_pages;
	long long maxf;

	r->ev.page = sysconf(_SC_PAGESIZE);
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (sp_perf_event_lookup(r->event, &a->type, &config))
		return sp_err_set(&r->err, -EINVAL, "unknown event '%s': must be %s",
				  r->event, sp_perf_event_names());
	a->config = config;
	if (o->frequency < 1 || o->frequency > SP_RECORD_MAX_FREQ)
		return sp_err_set(&r->err, -EINVAL, "invalid frequency %llu: must be 1..%u",
				  (unsigned long long)o->frequency, SP_RECORD_MAX_FREQ);
	maxf = sp_record_max_frequency();
	if (maxf > 0 && (long long)o->frequency > maxf)
		return sp_err_set(&r->err, -EINVAL, "frequency %llu is above perf_event_max_sample_rate %lld",
				  (unsigned long long)o->frequency, maxf);
	if (o->stack_size < 8 || o->stack_size > SP_RECORD_MAX_STACK ||
	    o->stack_size % 8)
		return sp_err_set(&r->err, -EINVAL, "invalid stack size %u: must be a multiple of 8 in 8..%u",
				  o->stack_size, SP_RECORD_MAX_STACK);
	if (o->pages && ((o->pages & (o->pages - 1)) ||
			 o->pages > SP_RECORD_MAX_PAGES))
		return sp_err_set(&r->err, -EINVAL, "invalid buffer size %u pages: must be a power of 2 in 1..%u",
				  o->pages, SP_RECORD_MAX_PAGES);
	if (o->attach != SP_RECORD_ATTACH_STOP &&
	    o->attach != SP_RECORD_ATTACH_LIVE &&
	    o->attach != SP_RECORD_ATTACH_ON_EXEC &&
	    o->attach != SP_RECORD_ATTACH_HOST)
		return sp_err_set(&r->err, -EINVAL, "invalid attach mode %d",
				  (int)o->attach);

	/* a sample reserves its whole stack request: room for two at least */
	min_pages = 1;
	while ((uint64_t)min_pages * (uint64_t)r->ev.page <
	       2ull * (o->stack_size + SAMPLE_OVERHEAD))
		min_pages *= 2;
	if (o->pages && o->pages < min_pages)
		return sp_err_set(&r->err, -EINVAL, "a buffer of %u pages cannot hold two samples of a %u-byte stack: use -m %u or more, or a smaller --stack-size",
				  o->pages, o->stack_size, min_pages);
	r->ev.min_pages = min_pages;

	/* STOP opens them disabled and enables them all before resuming */
	a->disabled = o->attach != SP_RECORD_ATTACH_LIVE;
	a->enable_on_exec = o->attach == SP_RECORD_ATTACH_ON_EXEC;
	/* an event of every task on a CPU has no children to pass on to */
	a->inherit = o->attach != SP_RECORD_ATTACH_HOST;
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
		r->ev.kernel_decided = 1;
	} else {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_user = 1;
		a->sample_max_stack = 127;
	}
	r->ev.nregs = (unsigned)__builtin_popcountll(REGS_MASK);
	rec_python_setup(r);
	return rec_offcpu_setup(r);
}

int rec_events_cpus(struct sp_recorder *r)
{
	struct rec_events *ev = &r->ev;
	int cpus[MAX_CPUS];
	int n = sp_perf_online_cpus(cpus, MAX_CPUS);
	unsigned i;

	if (n < 0)
		return sp_err_set(&r->err, n, "cannot read the online cpus: %s",
				  strerror(-n));
	ev->bufs = calloc((size_t)n, sizeof(*ev->bufs));
	/* and one for the reader of the stream */
	ev->pfd = calloc((size_t)n + 1, sizeof(*ev->pfd));
	if (!ev->bufs || !ev->pfd)
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	ev->nbufs = (unsigned)n;
	ev->pfd[n].fd = -1;
	for (i = 0; i < ev->nbufs; i++) {
		ev->bufs[i].cpu = cpus[i];
		ev->bufs[i].pages = r->o.pages ? r->o.pages :
				    SP_RECORD_DEFAULT_PAGES;
	}
	return 0;
}

void rec_events_release(struct rec_events *ev)
{
	size_t i;

	for (i = 0; i < ev->nbufs; i++)
		sp_ring_free(ev->bufs[i].ring);
	for (i = 0; i < ev->nevents; i++)
		if (ev->events[i].fd >= 0)
			close(ev->events[i].fd);
	free(ev->bufs);
	free(ev->events);
	free(ev->pfd);
	free(ev->attached);
	sp_u64map_release(&ev->sw_ids);
	memset(ev, 0, sizeof(*ev));
}

size_t rec_open_fds(const struct sp_recorder *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->ev.nevents; i++)
		n += r->ev.events[i].fd >= 0;
	return n;
}

static int not_permitted(struct sp_recorder *r, pid_t pid, pid_t tid, int e)
{
	struct sp_perm p;
	char why[SP_ERR_MAX];

	if (pid < 0) {
		sp_perm_read(&p, getpid(), getpid());
		p.have_target = 0;
		sp_perm_explain(&p, SP_PERM_PROFILE_CPU, e, why, sizeof(why));
		return sp_err_set(&r->err, -EACCES, "not permitted to profile %s: %s",
				  r->o.cgroup ? "a cgroup" : "every process",
				  why);
	}
	sp_perm_read(&p, pid, tid);
	sp_perm_explain(&p, SP_PERM_PROFILE, e, why, sizeof(why));
	return sp_err_set(&r->err, -EACCES, "not permitted to profile %d: %s",
			  (int)pid, why);
}

static int open_error(struct sp_recorder *r, pid_t pid, pid_t tid, int cpu,
		      int e)
{
	struct rlimit rl;

	switch (-e) {
	case EACCES:
	case EPERM:
		return not_permitted(r, pid, tid, e);
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return sp_err_set(&r->err, -EOPNOTSUPP, "event '%s' is not supported here: %s",
				  r->event, r->ev.attr.type == PERF_TYPE_HARDWARE ?
				  "no hardware counters for sampling (try cpu-clock)" :
				  strerror(-e));
	case EMFILE:
	case ENFILE:
		getrlimit(RLIMIT_NOFILE, &rl);
		return sp_err_set(&r->err, -EMFILE, "too many open files: %zu events open, RLIMIT_NOFILE is %llu",
				  rec_open_fds(r), (unsigned long long)rl.rlim_cur);
	default:
		return sp_err_set(&r->err, e, "cannot open event '%s' for thread %d on cpu %d: %s",
				  r->event, (int)tid, cpu, strerror(-e));
	}
}

/* Open one event and give it to its CPU's buffer, mapping that first. */
static int open_one(struct sp_recorder *r, pid_t pid, pid_t tid, unsigned b)
{
	struct rec_events *ev = &r->ev;
	struct rec_cpubuf *cb = &ev->bufs[b];
	struct perf_event_attr *a = &ev->attr;
	int fd, e;

	for (;;) {
		a->wakeup_watermark = (uint32_t)(cb->pages * ev->page / 4);
		if (r->host.on && r->host.cgroup_fd >= 0)
			fd = sp_perf_open_cgroup(a, r->host.cgroup_fd, cb->cpu);
		else
			fd = sp_perf_open(a, tid, cb->cpu);
		if (fd == -EINVAL && a->build_id) {
			/* before 5.12: MMAP2 records carry device and inode */
			a->build_id = 0;
			continue;
		}
		if ((fd == -EACCES || fd == -EPERM) && !ev->kernel_decided &&
		    r->o.kernel == SP_RECORD_KERNEL_AUTO) {
			a->exclude_kernel = 1;
			a->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
			a->exclude_callchain_user = 0;
			a->sample_max_stack = 0;
			ev->kernel_decided = 1;
			continue;
		}
		if (fd < 0)
			return fd == -ESRCH ? fd : open_error(r, pid, tid, cb->cpu, fd);
		ev->kernel_decided = 1;
		if (cb->ring) {
			e = sp_perf_set_output(fd, sp_ring_fd(cb->ring));
			if (e) {
				close(fd);
				return sp_err_set(&r->err, e, "cannot share the buffer of cpu %d: %s",
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
		    cb->pages / 2 >= ev->min_pages) {
			cb->pages /= 2;	/* the watermark follows on reopening */
			continue;
		}
		return sp_err_set(&r->err, e, "cannot map a %u-page buffer for cpu %d: %s",
				  cb->pages, cb->cpu, strerror(-e));
	}
	if (SP_GROW(ev->events, ev->events_cap, ev->nevents + 1)) {
		close(fd);
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	}
	ev->events[ev->nevents].fd = fd;
	ev->events[ev->nevents].buf = b;
	ev->events[ev->nevents].hup = 0;
	if (sp_ring_fd(cb->ring) == fd)
		cb->owner = cb->polled = ev->nevents;
	ev->nevents++;
	if ((e = rec_python_event(r, fd, b)))
		return e;
	return rec_offcpu_open(r, tid, b, sp_ring_fd(cb->ring));
}

int rec_open_thread(struct sp_recorder *r, pid_t pid, pid_t tid)
{
	struct rec_events *ev = &r->ev;
	size_t first = ev->nevents;
	struct rec_thread *t;
	unsigned b;
	int e, gone = 0;

	for (b = 0; b < ev->nbufs && !gone; b++) {
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
	if (gone && first == ev->nevents)
		return 0;
	if (SP_GROW(ev->attached, ev->attached_cap, ev->nattached + 1))
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	t = &ev->attached[ev->nattached++];
	t->pid = pid;
	t->tid = tid;
	t->first = first;
	t->n = ev->nevents - first;
	t->exited = gone;
	ev->nexited += gone;
	if (rec_note_ids(r, (uint32_t)pid, (uint32_t)tid, REC_ID_ATTACHED))
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	return gone ? 0 : 1;
}

int rec_open_cpus(struct sp_recorder *r)
{
	unsigned b;
	int e;

	for (b = 0; b < r->ev.nbufs; b++) {
		e = open_one(r, -1, -1, b);
		if (e == -ESRCH)	/* of a task, never of a CPU */
			e = sp_err_set(&r->err, e, "cannot open event '%s' on cpu %d: %s",
				       r->event, r->ev.bufs[b].cpu, strerror(-e));
		if (e)
			return e;
	}
	return 0;
}

int rec_check_fd_budget(struct sp_recorder *r)
{
	struct rlimit rl;
	size_t t, total = 0, n;
	pid_t *tids;

	for (t = 0; t < r->tg.n; t++) {
		if (sp_procfs_tids(r->tg.pids[t], &tids, &n) == 0) {
			total += n;
			free(tids);
		}
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	if ((uint64_t)total * r->ev.nbufs + FD_RESERVE > rl.rlim_cur)
		return sp_err_set(&r->err, -EMFILE, "%zu threads need %zu event descriptors (one per thread and cpu) and %d more are kept in reserve for files, %zu in all, above RLIMIT_NOFILE %llu: raise the hard limit (ulimit -Hn), or launch the command under sp-record, which needs one per cpu",
				  total, total * r->ev.nbufs, FD_RESERVE,
				  total * r->ev.nbufs + FD_RESERVE,
				  (unsigned long long)rl.rlim_cur);
	return 0;
}

int rec_enable_all(struct sp_recorder *r)
{
	size_t i;
	int e;

	for (i = 0; i < r->ev.nevents; i++) {
		if (r->ev.events[i].fd < 0)
			continue;
		e = sp_perf_enable(r->ev.events[i].fd);
		if (e && e != -ESRCH)
			return sp_err_set(&r->err, e, "cannot enable the events: %s",
					  strerror(-e));
	}
	return 0;
}

int rec_disable_all(struct sp_recorder *r)
{
	size_t i;
	int e = 0;

	if (r->ev.disabled)
		return 0;
	r->ev.disabled = 1;
	for (i = 0; i < r->ev.nevents; i++) {
		int x;

		if (r->ev.events[i].fd < 0)
			continue;
		x = sp_perf_disable(r->ev.events[i].fd);
		if (x && x != -ESRCH && !e)
			e = x;
	}
	if (e)
		return sp_err_set(&r->err, e, "cannot disable the events: %s",
				  strerror(-e));
	return 0;
}

void rec_poll_ready(struct sp_recorder *r)
{
	unsigned i;

	for (i = 0; i < r->ev.nbufs; i++) {
		r->ev.pfd[i].fd = r->ev.bufs[i].ring ?
				  sp_ring_fd(r->ev.bufs[i].ring) : -1;
		r->ev.pfd[i].events = POLLIN;
	}
	/* no event: POLLERR or POLLHUP come anyway, when the reader has gone */
	r->ev.pfd[i].fd = sp_out_pipe(r->out);
	r->ev.pfd[i].events = 0;
}

/* Point the poll slot of buffer b at an event that can still wake us. */
static void repoll(struct rec_events *ev, unsigned b)
{
	struct rec_cpubuf *cb = &ev->bufs[b];
	size_t k;

	if (!cb->ring) {
		ev->pfd[b].fd = -1;
		return;
	}
	if (!ev->events[cb->owner].hup) {
		cb->polled = cb->owner;
		ev->pfd[b].fd = ev->events[cb->owner].fd;
		return;
	}
	ev->pfd[b].fd = -1;
	for (k = 0; k < ev->nevents; k++) {
		if (ev->events[k].buf == b && ev->events[k].fd >= 0 &&
		    !ev->events[k].hup) {
			cb->polled = k;
			ev->pfd[b].fd = ev->events[k].fd;
			return;
		}
	}
}

int rec_poll(struct sp_recorder *r, int timeout_ms)
{
	struct rec_events *ev = &r->ev;
	unsigned i;
	int n;

	n = poll(ev->pfd, ev->nbufs + 1, timeout_ms);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if (ev->pfd[ev->nbufs].revents & (POLLERR | POLLHUP))
		return -EPIPE;
	for (i = 0; i < ev->nbufs; i++) {
		if (!(ev->pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL)))
			continue;
		/*
		 * The polled event's thread has exited and it has no
		 * children left, but other events of this CPU may still
		 * write into the buffer: wait on one of those, they all
		 * share its wakeups.
		 */
		ev->events[ev->bufs[i].polled].hup = 1;
		repoll(ev, i);
	}
	return 1;
}

int rec_collect(struct sp_recorder *r)
{
	const struct perf_event_header *h;
	unsigned i;
	int e;

	rec_tail_pass(r);
	for (i = 0; i < r->ev.nbufs; i++) {
		struct sp_ring *ring = r->ev.bufs[i].ring;

		if (!ring || !sp_ring_begin(ring))
			continue;
		r->ev.draining = i;
		while ((h = sp_ring_next(ring))) {
			e = rec_convert(r, h);
			if (e) {
				sp_ring_end(ring);
				return sp_err_set(&r->err, e, "out of memory queueing records");
			}
		}
		sp_ring_end(ring);
	}
	return 0;
}

void rec_thread_exited(struct sp_recorder *r, pid_t tid)
{
	struct rec_events *ev = &r->ev;
	size_t i;

	for (i = ev->nattached; i-- > 0;) {
		if (ev->attached[i].tid == tid) {
			if (!ev->attached[i].exited) {
				ev->attached[i].exited = 1;
				ev->nexited++;
			}
			return;
		}
	}
}

/*
 * A thread's event lives on while threads it created after attaching still
 * sample through it (closing it would end theirs), and hangs up once they
 * are gone.  The event that maps a buffer stays for the mapping's sake.
 */
void rec_release_exited(struct sp_recorder *r)
{
	struct rec_events *ev = &r->ev;
	size_t i, k, left = 0;

	if (!ev->nexited)
		return;
	for (i = 0; i < ev->nattached; i++) {
		struct rec_thread *t = &ev->attached[i];
		int open = 0;

		if (!t->exited)
			continue;
		for (k = t->first; k < t->first + t->n; k++) {
			struct rec_event *e = &ev->events[k];
			struct pollfd p = { e->fd, POLLIN, 0 };

			if (e->fd < 0)
				continue;
			if (!e->hup && poll(&p, 1, 0) == 1 &&
			    (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
				e->hup = 1;
			if (!e->hup) {
				open = 1;
				continue;
			}
			if (k == ev->bufs[e->buf].owner) {
				if (ev->bufs[e->buf].polled == k)
					repoll(ev, e->buf);
				continue;
			}
			close(e->fd);
			e->fd = -1;
			if (ev->bufs[e->buf].polled == k)
				repoll(ev, e->buf);
		}
		if (open)
			left++;
		else
			t->exited = 0;	/* done with it */
	}
	ev->nexited = left;
}
