/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * python.bpf.c: CPython's frame chain at the instant of a sample.
 *
 * Attached to the recorder's sampling events (PERF_EVENT_IOC_SET_BPF), it
 * runs in the sample's own interrupt, before the kernel writes the sample.
 * For a process of the `procs` map it finds the sampled thread's state
 * (cached per thread, checked by its native thread id), walks at most
 * SP_PY_MAXF frames with bpf_probe_read_user, which never faults a page
 * in, and writes them through the `out` BPF-output event of its CPU: that
 * event shares the CPU's buffer, so the chain lands just before the
 * sample it belongs to.  It returns 1: the sample is written as always.
 * Names and lines are the recorder's business, later, from the code
 * objects (immutable; the stamp tells a reused address).
 *
 * The helpers it uses are GPL-only: the object is dual-licensed.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "pychain.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct sp_py_where);
} procs SEC(".maps");

/* tid -> its PyThreadState, checked before use */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} tstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sp_py_chain);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} out SEC(".maps");

static __always_inline __u64 word(__u64 addr, int *err)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		*err = 1;
	return v;
}

/* The stamp of the code object at code (pychain.h). */
static __always_inline __u64 stamp(__u64 code, const struct sp_py_where *w,
				   int *err)
{
	__u64 b[SP_PY_STAMP_LEN / 8] = { 0 };

	if (bpf_probe_read_user(b, sizeof(b), (const void *)(code + w->co_stamp)))
		*err = 1;
	return sp_py_stamp(b);
}

/* The thread state of tid, or 0. */
static __always_inline __u64 tstate_of(const struct sp_py_where *w, __u32 tid,
				       int *err)
{
	__u64 *cached = bpf_map_lookup_elem(&tstates, &tid);
	__u64 ts;
	int i;

	if (cached && *cached &&
	    (__u32)word(*cached + w->ts_tid, err) == tid && !*err)
		return *cached;
	*err = 0;
	ts = word(word(w->runtime + w->interp_head, err) + w->threads_head,
		  err);
	for (i = 0; i < 256 && ts && !*err; i++) {
		if ((__u32)word(ts + w->ts_tid, err) == tid && !*err) {
			bpf_map_update_elem(&tstates, &tid, &ts, BPF_ANY);
			return ts;
		}
		ts = word(ts + w->ts_next, err);
	}
	return 0;
}

SEC("perf_event")
int sp_py_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id, zero = 0, n = 0;
	const struct sp_py_where *w = bpf_map_lookup_elem(&procs, &pid);
	struct sp_py_chain *c;
	__u64 ts, fr, size;
	int err = 0, i;

	if (!w)
		return 1;
	c = bpf_map_lookup_elem(&scratch, &zero);
	if (!c)
		return 1;
	c->magic = SP_PY_MAGIC;
	c->tid = tid;
	c->pid = pid;
	c->flags = 0;
	ts = tstate_of(w, tid, &err);
	if (!ts) {
		c->flags = err ? SP_PY_FAULT : SP_PY_NOTHREAD;
		goto emit;
	}
	if (w->ts_cframe != SP_PY_NONE)
		fr = word(word(ts + w->ts_cframe, &err) + w->frame, &err);
	else
		fr = word(ts + w->frame, &err);
	for (i = 0; i < SP_PY_MAXF && fr && !err; i++) {
		struct sp_py_frame *f = &c->f[n & (SP_PY_MAXF - 1)];
		__u8 e = 0;

		f->code = word(fr + w->fr_code, &err);
		f->instr = word(fr + w->fr_instr, &err);
		if (bpf_probe_read_user(&e, 1, (const void *)(fr + w->fr_entry)))
			err = 1;
		if (w->entry_owner ? e == 3 : e != 0)
			f->code |= SP_PY_ENTRY;
		f->stamp = stamp(f->code & ~(__u64)SP_PY_ENTRY, w, &err);
		fr = word(fr + w->fr_prev, &err);
		if (!err)
			n++;
	}
	if (err)
		c->flags |= SP_PY_FAULT;
	else if (fr)
		c->flags |= SP_PY_TRUNC;
emit:
	c->n = n;
	size = __builtin_offsetof(struct sp_py_chain, f) +
	       (__u64)n * sizeof(struct sp_py_frame);
	if (size > sizeof(*c))
		size = sizeof(*c);
	bpf_perf_event_output(ctx, &out, BPF_F_CURRENT_CPU, c, size);
	return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
