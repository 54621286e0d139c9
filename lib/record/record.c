/* SPDX-License-Identifier: MIT */
/* record.c: a recording from attach to summary, and what it has seen. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/io.h"
#include "os/perfmap.h"
#include "os/procfs.h"
#include "python.h"
#include "recorder.h"

/*
 * How long after its timestamp a record may still be unpublished in a
 * buffer: the kernel stamps a record and then writes it with preemption
 * off, so this is microseconds on bare metal, but a virtual CPU can be
 * descheduled in between.  Records younger than this at the start of a pass
 * wait for the next one; a few milliseconds of queue cost nothing.
 */
#define HORIZON_NS	(10 * 1000 * 1000ull)

void sp_record_opts_init(struct sp_record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->frequency = SP_RECORD_DEFAULT_FREQ;
	o->stack_size = SP_RECORD_DEFAULT_STACK;
	o->stack_tail = SP_RECORD_DEFAULT_TAIL;
	o->event = "cpu-clock";
	o->pages = 0;
	o->kernel = SP_RECORD_KERNEL_AUTO;
	o->attach = SP_RECORD_ATTACH_STOP;
	o->attach_hold_ms = 0;
	o->perfmap_dir = NULL;
	o->cache_dir = NULL;
	o->cache_max = SP_RECORD_DEFAULT_CACHE_MAX;
}

long long sp_record_max_frequency(void)
{
	long long v;
	int e = sp_procfs_read_ll("/proc/sys/kernel/perf_event_max_sample_rate",
				  &v);

	return e ? e : v;
}

/* Threads and processes seen ---------------------------------------------- */

static int id_add(struct sp_u64map *m, uint32_t id, uint8_t flags)
{
	struct sp_u64slot *s;

	if (!id)
		return 0;
	s = sp_u64map_get(m, id, NULL);
	if (!s)
		return -ENOMEM;
	s->val |= flags | REC_ID_SEEN;
	return 0;
}

int rec_note_ids(struct sp_recorder *r, uint32_t pid, uint32_t tid,
		 uint8_t flags)
{
	if (id_add(&r->threads, tid, flags) ||
	    (tid && sp_idset_add(&r->seen_threads, tid) < 0) ||
	    (pid && sp_idset_add(&r->seen_procs, pid) < 0))
		return -ENOMEM;
	return 0;
}

int rec_set_flags(struct sp_recorder *r, uint32_t tid, uint8_t flags, int on)
{
	struct sp_u64slot *s;

	if (!tid)
		return 0;
	if (!on) {
		s = sp_u64map_find(&r->threads, tid);
		if (s)
			s->val &= ~(uint64_t)flags;
		return 0;
	}
	return id_add(&r->threads, tid, flags);
}

void rec_thread_gone(struct sp_recorder *r, uint32_t tid)
{
	sp_u64map_del(&r->threads, tid);
}

uint8_t rec_thread_flags(const struct sp_recorder *r, uint32_t tid)
{
	const struct sp_u64slot *s = tid ? sp_u64map_find(&r->threads, tid) : NULL;

	return s ? (uint8_t)s->val : 0;
}

/* Life -------------------------------------------------------------------- */

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
		 o->perfmap_dir ? o->perfmap_dir : SP_PERFMAP_DIR);
	r->o.perfmap_dir = r->perfmap_dir;
	if (o->cache_dir && !(r->keep.dir = strdup(o->cache_dir))) {
		free(r);
		return NULL;
	}
	r->o.cache_dir = r->keep.dir;
	r->out = out;
	r->host.cgroup_fd = -1;
	rec_copy_own_vdso(r);
	return r;
}

void sp_recorder_free(struct sp_recorder *r)
{
	if (!r)
		return;
	rec_resume_all(r);
	rec_events_release(&r->ev);
	rec_merge_release(&r->mg);
	rec_targets_release(&r->tg);
	rec_host_release(&r->host);
	rec_synth_release(&r->syn);
	rec_capture_release(&r->cap);
	rec_tail_release(&r->tail);
	rec_keep_release(&r->keep);
	rec_python_release(&r->py);
	sp_u64map_release(&r->threads);
	sp_idset_release(&r->seen_threads);
	sp_idset_release(&r->seen_procs);
	free(r);
}

const char *sp_recorder_error(const struct sp_recorder *r)
{
	return r->err.msg;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * Keep the targets paused ms milliseconds, or until *interrupted is set: in
 * short sleeps, since a signal that came before the first of them has been
 * handled already and would not cut it.  The caller resumes the targets.
 */
static void hold(unsigned ms, volatile sig_atomic_t *interrupted)
{
	uint64_t end = sp_mono_ns() + (uint64_t)ms * 1000000;
	struct timespec ts = { 0, 10 * 1000000L };

	while (!(interrupted && *interrupted) && sp_mono_ns() < end)
		nanosleep(&ts, NULL);
}

/* The targets: the thread group of each pid, once. */
static int find_targets(struct sp_recorder *r, const pid_t *pids, size_t n)
{
	size_t i;
	int e;

	for (i = 0; i < n; i++) {
		pid_t tgid, ppid;

		e = sp_procfs_status(pids[i], &tgid, &ppid);
		if (e == -ESRCH || (!e && tgid <= 0) || pids[i] <= 0)
			return sp_err_set(&r->err, -ESRCH, "no such process %d",
					  (int)pids[i]);
		if (e)
			return sp_err_set(&r->err, e, "cannot read /proc/%d/status: %s",
					  (int)pids[i], strerror(-e));
		if (rec_add_target(r, tgid))
			return sp_err_set(&r->err, -ENOMEM, "out of memory");
	}
	r->tg.given = r->tg.n;
	for (i = 0; i < r->tg.n; i++) {
		uid_t uid;

		if (sp_procfs_uid(r->tg.pids[i], &uid) == 0 &&
		    rec_pmap_follow(r, r->tg.pids[i], uid))
			return sp_err_set(&r->err, -ENOMEM, "out of memory");
		/* a CPython's program goes in before the events open */
		if ((e = rec_python_early(r, r->tg.pids[i])))
			return e;
	}
	return 0;
}

/*
 * The events of a launched child that has not exec'd yet: it still runs
 * our code, so /proc has nothing of its own to say and the kernel reports
 * everything from the exec on.
 */
static int attach_on_exec(struct sp_recorder *r)
{
	int e = rec_open_thread(r, r->tg.pids[0], r->tg.pids[0]);

	if (e == 0)
		e = sp_err_set(&r->err, -ESRCH, "no such process %d",
			       (int)r->tg.pids[0]);
	if (e < 0)
		return e;
	r->attached_threads = 1;
	if ((e = rec_python_preload(r)))
		return e;
	/* it has not run a line of its own yet */
	rec_pmap_born(r, r->tg.pids[0], sp_mono_ns());
	e = rec_write_header(r);
	if (e)
		return sp_err_set(&r->err, e, "cannot write the raw stream: %s",
				  strerror(-e));
	return 0;
}

static int attach_running(struct sp_recorder *r)
{
	uint64_t t0 = 0;
	int e = rec_check_fd_budget(r);

	if (e)
		return e;
	if (r->o.attach == SP_RECORD_ATTACH_STOP) {
		t0 = sp_mono_ns();
		e = rec_pause_all(r);
		if (!e)
			e = rec_open_targets(r);
		if (!e)
			e = rec_rescan(r);	/* finds nobody unless a pause failed */
		/*
		 * Enabled before resuming: whatever a thread maps or starts
		 * from now on is reported by the kernel, so /proc can be read
		 * after the pause, which stays short.
		 */
		if (!e)
			e = rec_enable_all(r);
		if (!e && r->o.attach_hold_ms)
			hold(r->o.attach_hold_ms, r->o.interrupted);
		/* on every path, errors included */
		rec_resume_all(r);
		r->tg.pause_ns = sp_mono_ns() - t0;
	} else {
		e = rec_open_targets(r);
		if (!e)
			e = rec_rescan(r);
	}
	if (e)
		return e;
	r->attached_threads = r->ev.nattached;
	e = rec_write_header(r);
	if (!e)
		e = rec_write_existing(r);
	if (e)
		return sp_err_set(&r->err, e, "cannot write the raw stream: %s",
				  strerror(-e));
	return 0;
}

/*
 * Every process: one event per CPU, enabled before /proc is read so that
 * what starts or maps meanwhile is reported by the kernel.
 */
static int attach_host(struct sp_recorder *r)
{
	int e = rec_open_cpus(r);

	if (!e)
		e = rec_enable_all(r);
	if (e)
		return e;
	e = rec_write_header(r);
	if (e)
		return sp_err_set(&r->err, e, "cannot write the raw stream: %s",
				  strerror(-e));
	return rec_host_existing(r);
}

int sp_recorder_attach(struct sp_recorder *r, const pid_t *pids, size_t n)
{
	int host = r->o.attach == SP_RECORD_ATTACH_HOST;
	int e;

	if (r->did_attach)
		return sp_err_set(&r->err, -EBUSY, "already attached");
	r->did_attach = 1;
	if (!n && !host)
		return sp_err_set(&r->err, -EINVAL, "no process to profile");
	e = rec_events_setup(r);
	if (!e)
		e = rec_tail_setup(r);
	if (!e)
		e = rec_host_setup(r, pids, n);
	if (e)
		return e;
	if (r->o.attach == SP_RECORD_ATTACH_ON_EXEC && n != 1)
		return sp_err_set(&r->err, -EINVAL, "enable-on-exec records one launched process, not %zu",
				  n);
	e = rec_events_cpus(r);
	if (!e && !host)
		e = find_targets(r, pids, n);
	if (e)
		return e;
	raise_nofile();
	/* before any pause: it takes tens of milliseconds */
	if (r->o.kernel != SP_RECORD_KERNEL_OFF && rec_capture_load_ksyms(r))
		return sp_err_set(&r->err, -ENOMEM, "out of memory");

	r->start_time = sp_mono_ns();
	r->start_realtime = sp_realtime_of(r->start_time);
	if (host)
		e = attach_host(r);
	else if (r->o.attach == SP_RECORD_ATTACH_ON_EXEC)
		e = attach_on_exec(r);
	else
		e = attach_running(r);
	if (e)
		return e;
	e = sp_out_flush(r->out);
	if (e)
		return sp_err_set(&r->err, e, "cannot write the raw stream: %s",
				  strerror(-e));
	rec_poll_ready(r);
	if (r->ev.attr.exclude_kernel ||
	    !(r->ev.attr.sample_type & PERF_SAMPLE_CALLCHAIN))
		rec_capture_drop_ksyms(r);
	r->attached_ok = 1;
	return 0;
}

/* Recording --------------------------------------------------------------- */

int sp_recorder_wait(struct sp_recorder *r, int timeout_ms)
{
	/* a Python's code objects are read soon, before they may go */
	if (r->py.bpf && (timeout_ms < 0 || timeout_ms > REC_PYTHON_PASS_MS))
		timeout_ms = REC_PYTHON_PASS_MS;
	return rec_poll(r, timeout_ms);
}

int sp_recorder_consume(struct sp_recorder *r)
{
	uint64_t now = sp_mono_ns(), before = sp_out_bytes(r->out), wait;
	int e = rec_collect(r);

	if (e)
		return e;
	rec_release_exited(r);
	/* before the MMAP records go out: a reader may open their files now */
	if (rec_keep_pass(r, 0))
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	e = rec_perfmap_pass(r);
	if (e)
		return sp_err_set(&r->err, e, "cannot write the raw stream: %s",
				  strerror(-e));
	wait = rec_offcpu_horizon(r, HORIZON_NS);
	e = rec_write_until(r, now > wait ? now - wait : 0);
	/* a pass is at most every few milliseconds: let the reader see it */
	if (!e && sp_out_bytes(r->out) != before) {
		e = sp_out_flush(r->out);
		if (e)
			return sp_err_set(&r->err, e, "cannot write the raw stream: %s",
					  strerror(-e));
	}
	return e;
}

int sp_recorder_active(struct sp_recorder *r)
{
	return r->host.on || rec_targets_alive(r);
}

int sp_recorder_disable(struct sp_recorder *r)
{
	int e;

	if (r->ev.disabled)
		return 0;
	e = rec_disable_all(r);
	r->end_time = sp_mono_ns();
	return e;
}

void sp_recorder_stats(const struct sp_recorder *r, struct sp_record_stats *st)
{
	uint64_t end = r->end_time ? r->end_time : sp_mono_ns();

	memset(st, 0, sizeof(*st));
	st->samples = r->samples;
	st->lost = r->lost;
	st->lost_records = r->lost_records;
	st->throttles = r->throttles;
	st->threads = r->seen_threads.n;
	st->processes = r->seen_procs.n;
	st->duration_ns = r->start_time && end > r->start_time ?
			  end - r->start_time : 0;
	st->attach_threads = r->attached_threads;
	st->attach_pause_ns = r->tg.pause_ns;
	st->events_open = rec_open_fds(r);
	st->ksyms = r->cap.nksyms;
	st->perfmap_bytes = r->cap.perfmap_bytes;
	st->deep = r->tail.deep;
	st->tails = r->tail.captured;
	st->tails_changed = r->tail.changed;
	st->tails_denied = r->tail.denied;
	st->tails_denied_why = r->tail.denied_why;
	st->tail_bytes = r->tail.bytes;
	st->kept = r->keep.kept;
	st->kept_bytes = r->keep.kept_bytes;
	st->keep_failed = r->keep.failed;
	st->cache_files = r->keep.store_files;
	st->cache_bytes = r->keep.store_bytes;
	st->cache_evicted = r->keep.evicted;
	st->cache_error = r->keep.trim_err;
	st->filtered = r->host.filtered;
	st->py_procs = r->py.nprocs;
	st->py_stacks = r->py.stacks;
	st->py_codes = r->py.codes;
	st->py_unreadable = r->py.unreadable;
	st->py_refused = r->py.refused;
	st->py_why = r->py.why;
	sp_py_bpf_stats(r->py.bpf, &st->py_bpf_runs, &st->py_bpf_ns);
	st->switches = r->ev.switches;
	st->offcpu = r->ev.offcpu;
	st->offcpu_short = r->ev.offcpu_short;
	st->offcpu_stacks = r->ev.sw_on || r->ev.sw_main;
	st->offcpu_why = r->ev.sw_why;
}

int sp_recorder_cpu_lost(const struct sp_recorder *r, size_t i, int *cpu,
			 uint64_t *lost)
{
	if (i >= r->ev.nbufs)
		return -ENOENT;
	*cpu = r->ev.bufs[i].cpu;
	*lost = r->ev.bufs[i].lost;
	return 0;
}

int sp_recorder_finish(struct sp_recorder *r, struct sp_record_stats *st)
{
	struct sp_raw_summary s;
	int e;

	if (!r->attached_ok) {
		if (st)
			sp_recorder_stats(r, st);
		return sp_err_set(&r->err, -EINVAL, "not attached");
	}
	sp_recorder_disable(r);
	e = rec_collect(r);
	/* the last look while the targets may still map what they mapped */
	if (!e && rec_keep_pass(r, 1))
		e = -ENOMEM;
	if (!e)
		e = rec_perfmap_pass(r);
	if (!e)
		e = rec_write_until(r, UINT64_MAX);
	if (!e) {
		memset(&s, 0, sizeof(s));
		s.hdr.type = SP_REC_SUMMARY;
		s.hdr.size = sizeof(s);
		s.samples = r->samples;
		s.lost = r->lost;
		s.lost_records = r->lost_records;
		s.throttles = r->throttles;
		s.threads = r->seen_threads.n;
		s.processes = r->seen_procs.n;
		s.start_time = r->start_time;
		s.end_time = r->end_time;
		s.duration_ns = r->end_time - r->start_time;
		e = sp_out_rec(r->out, &s, sizeof(s));
		if (!e)
			e = sp_out_flush(r->out);
	}
	if (e)
		sp_err_set(&r->err, e, "cannot write the raw stream: %s",
			   strerror(-e));
	else
		rec_keep_finish(r);	/* the stream is whole either way */
	if (st)
		sp_recorder_stats(r, st);
	return e;
}
