/* SPDX-License-Identifier: MIT */
/*
 * perm.h: why the kernel would not let this process profile or trace
 * another one, in words.
 *
 * perf_event_open(2) and ptrace(2) answer EACCES or EPERM and nothing
 * more, while the cause is one of several: kernel.perf_event_paranoid,
 * missing capabilities, Yama's kernel.yama.ptrace_scope, a target owned by
 * another user, holding capabilities we lack or not dumpable, or a
 * security module.  Reading what the
 * kernel weighs (sp_perm_read) is kept apart from choosing the words
 * (sp_perm_explain), which depends on nothing else, so that every
 * situation can be tested without creating it.
 */
#ifndef SP_PERM_H
#define SP_PERM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Capability numbers (linux/capability.h), as bits of CapEff. */
#define SP_CAP_SYS_PTRACE	19
#define SP_CAP_SYS_ADMIN	21
#define SP_CAP_PERFMON		38

/* What the kernel weighs; a field it could not read is marked unknown. */
struct sp_perm {
	pid_t pid;			/* the target process */
	pid_t tid;			/* its thread in question */
	int have_paranoid;
	long long paranoid;		/* kernel.perf_event_paranoid */
	int have_caps;
	uint64_t cap_eff;		/* this process's effective capabilities */
	uint64_t cap_prm;		/* and permitted ones */
	int ptrace_scope;		/* kernel.yama.ptrace_scope; -1: no Yama */
	uint32_t uid, gid;		/* this process's real ids */
	int have_target;
	uint32_t target_uid[3];		/* real, effective, saved */
	uint32_t target_gid[3];
	int have_target_caps;
	uint64_t target_cap_prm;	/* the target's permitted capabilities */
	int target_dumpable;		/* 1, 0, or -1 unknown */
	pid_t tracer;			/* TracerPid of the thread; 0: none */
};

/* What was denied. */
enum sp_perm_op {
	SP_PERM_PROFILE,	/* perf_event_open(2) of a thread */
	SP_PERM_PROFILE_CPU,	/* perf_event_open(2) of every task on a CPU
				   (or of a cgroup's): no target process */
	SP_PERM_PROFILE_KERNEL,	/* perf_event_open(2) of an event sampled
				   in the kernel (context switches) */
	SP_PERM_TRACE,		/* ptrace(PTRACE_SEIZE) of a thread */
	SP_PERM_READ_MEMORY,	/* process_vm_readv(2): ptrace's rules, but
				   a tracer already there is no obstacle */
};

/*
 * Fill p from the live system for thread tid of process pid: /proc/sys,
 * /proc/self/status and /proc/PID/status.  What cannot be read stays
 * unknown, never guessed.
 */
void sp_perm_read(struct sp_perm *p, pid_t pid, pid_t tid);

/*
 * Why op on p's target failed with err (-EACCES or -EPERM; of
 * perf_event_open, the kernel's own refusals are EACCES, a seccomp
 * filter's EPERM): one line without the program name, what was denied and
 * the cause that applies first, with the facts that show it and what
 * would allow it ("perf_event_open was denied: process 1 belongs to uid 0
 * and this process runs as uid 65534 without CAP_PERFMON or CAP_SYS_PTRACE
 * (CapEff 0000000000000000): run as its owner or root, or grant
 * CAP_PERFMON").  Written into buf (cut at size); returns buf.  Depends on
 * its arguments alone.
 */
const char *sp_perm_explain(const struct sp_perm *p, enum sp_perm_op op,
			    int err, char *buf, size_t size);

#endif
