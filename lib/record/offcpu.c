/* SPDX-License-Identifier: MIT */
/*
 * offcpu.c: time off the CPU: the switch records of every target thread,
 * and its stack at each switch-out where the kernel permits.
 *
 * The main event gets context_switch, so the kernel writes a SWITCH record
 * each time a thread leaves a CPU and each time it comes back, for any
 * user who may profile the thread.  The stack at a switch-out comes from
 * a second event, context-switches sampled at every one (period 1), in
 * the same buffer; its samples are told from the main event's by
 * PERF_SAMPLE_IDENTIFIER.  The kernel takes that sample in its own code,
 * so with exclude_kernel it gives none at all, and with the kernel it
 * needs root, CAP_PERFMON or perf_event_paranoid <= 1: a trial open
 * decides, and without it the SWITCH records alone give each thread's time
 * off the CPU, with no stack.
 *
 * A thread switching 100,000 times a second would fill any buffer with
 * stack copies; --off-cpu-min drops, in time order, the samples of waits
 * shorter than it before they are written (their time stays in the SWITCH
 * records), and the queue waits long enough for the switch-in to be seen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/grow.h"
#include "os/perf.h"
#include "os/perm.h"
#include "recorder.h"

int rec_offcpu_setup(struct sp_recorder *r)
{
	struct rec_events *ev = &r->ev;
	struct perf_event_attr *a = &ev->attr, *sw = &ev->swattr;
	struct sp_perm p;
	int fd, can;

	if (!r->o.off_cpu)
		return 0;
	if (r->o.off_cpu_min > SP_RECORD_MAX_OFFCPU_MIN)
		return sp_err_set(&r->err, -EINVAL, "invalid off-CPU minimum %llu ns: must be at most 1 s",
				  (unsigned long long)r->o.off_cpu_min);
	a->context_switch = 1;
	*sw = *a;
	sw->type = PERF_TYPE_SOFTWARE;
	sw->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	sw->freq = 0;
	sw->sample_period = 1;
	sw->exclude_kernel = 0;		/* sampled in the kernel, or never */
	sw->disabled = 1;
	sw->enable_on_exec = 0;
	fd = sp_perf_open(sw, 0, -1);
	can = fd >= 0;
	if (can) {
		close(fd);
	} else if (fd == -EACCES || fd == -EPERM) {
		sp_perm_read(&p, getpid(), getpid());
		p.have_target = 0;
		sp_perm_explain(&p, SP_PERM_PROFILE_KERNEL, fd, ev->sw_why,
				sizeof(ev->sw_why));
	} else {
		snprintf(ev->sw_why, sizeof(ev->sw_why),
			 "the context-switches event cannot be sampled here: %s",
			 strerror(-fd));
	}
	sw->disabled = a->disabled;
	sw->enable_on_exec = a->enable_on_exec;

	if (r->o.off_cpu == SP_RECORD_OFFCPU_ONLY) {
		/* the main event samples the switch-outs, or nothing */
		a->type = PERF_TYPE_SOFTWARE;
		a->freq = 0;
		if (can) {
			a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
			a->sample_period = 1;
			a->exclude_kernel = 0;
			ev->sw_main = 1;
		} else {
			a->config = PERF_COUNT_SW_DUMMY;
			a->sample_period = 0;
		}
		return 0;
	}
	if (!can)
		return 0;
	/* the second event: samples only, the main one has the rest */
	a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	sw->sample_type = a->sample_type;
	sw->mmap = sw->mmap2 = sw->build_id = 0;
	sw->comm = sw->comm_exec = sw->task = 0;
	sw->context_switch = 0;
	ev->idlen = 8;
	ev->sw_on = 1;
	return 0;
}

int rec_offcpu_open(struct sp_recorder *r, pid_t tid, unsigned b, int ring_fd)
{
	struct rec_events *ev = &r->ev;
	struct rec_cpubuf *cb = &ev->bufs[b];
	uint64_t id;
	int fd, e;

	if (!ev->sw_on)
		return 0;
	if (r->host.on && r->host.cgroup_fd >= 0)
		fd = sp_perf_open_cgroup(&ev->swattr, r->host.cgroup_fd, cb->cpu);
	else
		fd = sp_perf_open(&ev->swattr, tid, cb->cpu);
	if (fd == -ESRCH)
		return fd;
	if (fd < 0)
		return sp_err_set(&r->err, fd, "cannot open the context-switches event for thread %d on cpu %d: %s",
				  (int)tid, cb->cpu, strerror(-fd));
	e = sp_perf_set_output(fd, ring_fd);
	if (!e && ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		e = -errno;
	if (e) {
		close(fd);
		return sp_err_set(&r->err, e, "cannot share the buffer of cpu %d: %s",
				  cb->cpu, strerror(-e));
	}
	if (!sp_u64map_get(&ev->sw_ids, id, NULL) ||
	    SP_GROW(ev->events, ev->events_cap, ev->nevents + 1)) {
		close(fd);
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	}
	ev->events[ev->nevents].fd = fd;
	ev->events[ev->nevents].buf = b;
	ev->events[ev->nevents].hup = 0;
	ev->nevents++;
	return rec_python_event(r, fd, b);
}

int rec_offcpu_is_switch(const struct sp_recorder *r, uint64_t id)
{
	return sp_u64map_find(&r->ev.sw_ids, id) != NULL;
}

int rec_offcpu_convert(struct sp_recorder *r, const struct perf_event_header *h,
		       uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	struct sp_switch_rec *o;

	/* the idle task, and the pipeline's own threads */
	if (!tid || rec_host_own(r, tid))
		return 0;
	o = rec_enqueue(r, time, sizeof(*o));
	if (!o)
		return -ENOMEM;
	memset(o, 0, sizeof(*o));
	o->hdr.type = SP_REC_SWITCH;
	o->hdr.size = sizeof(*o);
	o->time = time;
	o->pid = pid;
	o->tid = tid;
	o->cpu = cpu;
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT)
		o->flags |= SP_SWITCH_OUT;
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
		o->flags |= SP_SWITCH_PREEMPT;
	return 0;
}

int rec_offcpu_short(struct sp_recorder *r, uint8_t *drop, uint64_t horizon)
{
	struct rec_queue *q = &r->mg.q;
	struct sp_u64map next_in = { 0 };
	uint64_t min = r->o.off_cpu_min;
	size_t i;

	/* from the newest back: the next switch-in of each thread */
	for (i = q->n; i-- > 0;) {
		const struct sp_rec_hdr *h = (const void *)(q->buf + q->v[i].off);
		struct sp_u64slot *s;

		if (h->type == SP_REC_SWITCH) {
			const struct sp_switch_rec *w = (const void *)h;

			if (w->flags & SP_SWITCH_OUT)
				continue;
			s = sp_u64map_get(&next_in, w->tid, NULL);
			if (!s) {
				sp_u64map_release(&next_in);
				return -ENOMEM;
			}
			s->val = w->time;
		} else if (h->type == SP_REC_OFFCPU &&
			   q->v[i].time <= horizon) {
			const struct sp_raw_sample *o = (const void *)h;

			/* no switch-in yet: off at least as long as min */
			s = sp_u64map_find(&next_in, o->tid);
			drop[i] = s && s->val - o->time < min;
		}
	}
	sp_u64map_release(&next_in);
	return 0;
}

uint64_t rec_offcpu_horizon(const struct sp_recorder *r, uint64_t horizon)
{
	return r->o.off_cpu && r->o.off_cpu_min > horizon ?
	       r->o.off_cpu_min : horizon;
}
