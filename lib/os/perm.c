/* SPDX-License-Identifier: MIT */
/* perm.c: why the kernel would not let us profile or trace a process, in words. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perm.h"
#include "procfs.h"

/* Reading ----------------------------------------------------------------- */

/*
 * The value after "key" on its line of a /proc status file: "Uid:\t0\t0..."
 * Returns a pointer into text, or NULL.
 */
static const char *field(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, n))
			return p + n;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static int read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
	return n ? 0 : -EIO;
}

/* The three first ids of an "Uid:" or "Gid:" line; 0 or -EINVAL. */
static int ids(const char *s, uint32_t out[3])
{
	unsigned long v;
	char *end;
	int i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < 3; i++) {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || end == s || v > UINT32_MAX)
			return -EINVAL;
		out[i] = (uint32_t)v;
		s = end;
	}
	return 0;
}

void sp_perm_read(struct sp_perm *p, pid_t pid, pid_t tid)
{
	char path[64], text[4096];
	const char *s, *c;
	long long v;
	struct stat st;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->tid = tid;
	p->target_dumpable = -1;
	p->uid = (uint32_t)getuid();
	p->gid = (uint32_t)getgid();
	if (!sp_procfs_read_ll("/proc/sys/kernel/perf_event_paranoid", &v)) {
		p->paranoid = v;
		p->have_paranoid = 1;
	}
	p->ptrace_scope = -1;
	if (!sp_procfs_read_ll("/proc/sys/kernel/yama/ptrace_scope", &v))
		p->ptrace_scope = (int)v;
	if (!read_text("/proc/self/status", text, sizeof(text)) &&
	    (s = field(text, "CapEff:")) && (c = field(text, "CapPrm:"))) {
		p->cap_eff = strtoull(s, NULL, 16);
		p->cap_prm = strtoull(c, NULL, 16);
		p->have_caps = 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!read_text(path, text, sizeof(text))) {
		if (!ids(field(text, "Uid:"), p->target_uid) &&
		    !ids(field(text, "Gid:"), p->target_gid))
			p->have_target = 1;
		if ((c = field(text, "CapPrm:"))) {
			p->target_cap_prm = strtoull(c, NULL, 16);
			p->have_target_caps = 1;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid,
		 (int)tid);
	if (!read_text(path, text, sizeof(text)) &&
	    (s = field(text, "TracerPid:")))
		p->tracer = (pid_t)strtol(s, NULL, 10);
	/*
	 * /proc/PID belongs to the effective user of a dumpable process, to
	 * root otherwise: telling only when that user is not root.
	 */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (p->have_target && p->target_uid[1] && !stat(path, &st))
		p->target_dumpable = st.st_uid == p->target_uid[1] ? 1 :
				     st.st_uid == 0 ? 0 : -1;
}

/* Words ------------------------------------------------------------------- */

struct text {
	char *buf;
	size_t size, len;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n;
}

static int has(const struct sp_perm *p, int cap)
{
	return p->have_caps && (p->cap_eff >> cap & 1);
}

/* What a value of perf_event_paranoid lets a process without CAP_PERFMON do. */
static const char *paranoid_allows(long long v)
{
	if (v > 2)
		return "no perf events at all";
	if (v == 2)
		return "profiling one's own processes, user space only";
	if (v == 1)
		return "profiling one's own processes, kernel included";
	if (v == 0)
		return "profiling one's own processes and whole cpus";
	return "profiling every process and cpu";
}

/* " (CapEff 0000000000000000)", or nothing when it could not be read. */
static void caps(struct text *t, const struct sp_perm *p)
{
	if (p->have_caps)
		put(t, " (CapEff %016llx)", (unsigned long long)p->cap_eff);
}

/* Whether the target's ids are ours: the kernel wants all six to be. */
static int owned(const struct sp_perm *p)
{
	int i;

	for (i = 0; i < 3; i++)
		if (p->target_uid[i] != p->uid || p->target_gid[i] != p->gid)
			return 0;
	return 1;
}

/*
 * The target may hold capabilities this process is not permitted: the
 * kernel then wants CAP_SYS_PTRACE (commoncap's ptrace access check).
 */
static int outranked(const struct sp_perm *p)
{
	return p->have_caps && p->have_target_caps &&
	       (p->target_cap_prm & ~p->cap_prm);
}

static void outranked_by(struct text *t, const struct sp_perm *p,
			 const char *need)
{
	put(t, "process %d holds capabilities that this process, without %s, is not permitted (its CapPrm %016llx; ours %016llx, CapEff %016llx)",
	    (int)p->pid, need, (unsigned long long)p->target_cap_prm,
	    (unsigned long long)p->cap_prm, (unsigned long long)p->cap_eff);
}

/* "process 1 belongs to uid 0 and this process runs as uid 65534" */
static void owner(struct text *t, const struct sp_perm *p)
{
	const uint32_t *u = p->target_uid, *g = p->target_gid;

	if (u[0] == u[1] && u[1] == u[2] && u[0] != p->uid)
		put(t, "process %d belongs to uid %u and this process runs as uid %u",
		    (int)p->pid, u[0], p->uid);
	else if (u[0] != p->uid || u[1] != p->uid || u[2] != p->uid)
		put(t, "process %d runs as uids %u, %u, %u (real, effective, saved) and this process as uid %u",
		    (int)p->pid, u[0], u[1], u[2], p->uid);
	else if (g[0] == g[1] && g[1] == g[2])
		put(t, "process %d belongs to group %u and this process runs as group %u",
		    (int)p->pid, g[0], p->gid);
	else
		put(t, "process %d runs as groups %u, %u, %u (real, effective, saved) and this process as group %u",
		    (int)p->pid, g[0], g[1], g[2], p->gid);
}

static void explain_profile(struct text *t, const struct sp_perm *p, int err)
{
	int perfmon = has(p, SP_CAP_PERFMON) || has(p, SP_CAP_SYS_ADMIN);
	int bypass = perfmon || has(p, SP_CAP_SYS_PTRACE);

	if (p->have_paranoid && p->paranoid > 2 && !perfmon) {
		put(t, "kernel.perf_event_paranoid is %lld, which allows %s without CAP_PERFMON, and this process has neither it nor CAP_SYS_ADMIN",
		    p->paranoid, paranoid_allows(p->paranoid));
		caps(t, p);
		put(t, ": run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid to 2");
		return;
	}
	if (p->have_target && !owned(p) && !bypass) {
		owner(t, p);
		put(t, " without CAP_PERFMON or CAP_SYS_PTRACE");
		caps(t, p);
		put(t, ": run as its owner or root, or grant CAP_PERFMON");
		return;
	}
	if (outranked(p) && !bypass) {
		outranked_by(t, p, "CAP_PERFMON or CAP_SYS_PTRACE");
		put(t, ": grant CAP_PERFMON");
		return;
	}
	if (p->have_target && p->target_dumpable == 0 && !bypass) {
		put(t, "process %d is not dumpable (a set-user-ID or set-group-ID program, or prctl(PR_SET_DUMPABLE, 0)) and this process has no CAP_PERFMON or CAP_SYS_PTRACE",
		    (int)p->pid);
		caps(t, p);
		put(t, ": run as root or grant CAP_PERFMON");
		return;
	}
	put(t, "no cause found here (");
	if (p->have_paranoid)
		put(t, "perf_event_paranoid %lld allows %s; ",
		    p->paranoid, paranoid_allows(p->paranoid));
	if (perfmon)
		put(t, "this process has CAP_PERFMON");
	else if (has(p, SP_CAP_SYS_PTRACE))
		put(t, "this process has CAP_SYS_PTRACE");
	else if (p->have_target)
		put(t, "process %d is this user's", (int)p->pid);
	else
		put(t, "the owner of process %d is unknown", (int)p->pid);
	/* the kernel's own refusals are EACCES; a seccomp filter's, EPERM */
	if (err == -EPERM)
		put(t, "): it answered EPERM, as a seccomp filter does (a container's): allow perf_event_open there");
	else
		put(t, "): a security module (SELinux, AppArmor) or a seccomp filter may forbid it");
}

/* The kernel's perf_allow_cpu(): paranoid 0 or less, or CAP_PERFMON. */
static void explain_profile_cpu(struct text *t, const struct sp_perm *p,
				int err)
{
	int perfmon = has(p, SP_CAP_PERFMON) || has(p, SP_CAP_SYS_ADMIN);

	if (p->have_paranoid && p->paranoid > 0 && !perfmon) {
		put(t, "kernel.perf_event_paranoid is %lld, which allows %s; every process of a cpu needs it at 0 or below, or CAP_PERFMON, and this process has neither it nor CAP_SYS_ADMIN",
		    p->paranoid, paranoid_allows(p->paranoid));
		caps(t, p);
		put(t, ": run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid to 0");
		return;
	}
	put(t, "no cause found here (");
	if (p->have_paranoid)
		put(t, "perf_event_paranoid %lld allows %s; ",
		    p->paranoid, paranoid_allows(p->paranoid));
	put(t, perfmon ? "this process has CAP_PERFMON" :
	    "this process has no CAP_PERFMON");
	if (err == -EPERM)
		put(t, "): it answered EPERM, as a seccomp filter does (a container's): allow perf_event_open there");
	else
		put(t, "): a security module (SELinux, AppArmor) or a seccomp filter may forbid it");
}

/* An event sampled in the kernel's own code: paranoid 1 allows it. */
static void explain_profile_kernel(struct text *t, const struct sp_perm *p,
				   int err)
{
	int perfmon = has(p, SP_CAP_PERFMON) || has(p, SP_CAP_SYS_ADMIN);

	if (p->have_paranoid && p->paranoid > 1 && !perfmon) {
		put(t, "kernel.perf_event_paranoid is %lld, which allows %s; a sample taken in the kernel (at a context switch) needs it at 1 or below, or CAP_PERFMON, and this process has neither it nor CAP_SYS_ADMIN",
		    p->paranoid, paranoid_allows(p->paranoid));
		caps(t, p);
		put(t, ": run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid to 1");
		return;
	}
	put(t, "no cause found here (");
	if (p->have_paranoid)
		put(t, "perf_event_paranoid %lld allows %s; ",
		    p->paranoid, paranoid_allows(p->paranoid));
	put(t, perfmon ? "this process has CAP_PERFMON" :
	    "this process has no CAP_PERFMON");
	put(t, err == -EPERM ?
	    "): it answered EPERM, as a seccomp filter does (a container's): allow perf_event_open there" :
	    "): a security module (SELinux, AppArmor) or a seccomp filter may forbid it");
}

static void explain_trace(struct text *t, const struct sp_perm *p,
			  enum sp_perm_op op)
{
	int cap = has(p, SP_CAP_SYS_PTRACE);

	if (op == SP_PERM_TRACE && p->tracer > 0) {
		put(t, "thread %d is traced by process %d already (a debugger?), and a thread has one tracer at most",
		    (int)p->tid, (int)p->tracer);
		return;
	}
	if (p->ptrace_scope >= 3) {
		put(t, "kernel.yama.ptrace_scope is %d, which allows no ptrace at all until reboot",
		    p->ptrace_scope);
		return;
	}
	if (p->ptrace_scope == 2 && !cap) {
		put(t, "kernel.yama.ptrace_scope is 2, which allows ptrace only with CAP_SYS_PTRACE, and this process has none");
		caps(t, p);
		put(t, ": run as root or grant CAP_SYS_PTRACE");
		return;
	}
	if (p->have_target && !owned(p) && !cap) {
		owner(t, p);
		put(t, " without CAP_SYS_PTRACE");
		caps(t, p);
		put(t, ": run as its owner or root, or grant CAP_SYS_PTRACE");
		return;
	}
	if (outranked(p) && !cap) {
		outranked_by(t, p, "CAP_SYS_PTRACE");
		put(t, ": grant CAP_SYS_PTRACE");
		return;
	}
	if (p->have_target && p->target_dumpable == 0 && !cap) {
		put(t, "process %d is not dumpable (a set-user-ID or set-group-ID program, or prctl(PR_SET_DUMPABLE, 0)) and this process has no CAP_SYS_PTRACE",
		    (int)p->pid);
		caps(t, p);
		put(t, ": run as root or grant CAP_SYS_PTRACE");
		return;
	}
	if (p->ptrace_scope == 1 && !cap) {
		put(t, "kernel.yama.ptrace_scope is 1, which allows ptrace of one's own descendants only without CAP_SYS_PTRACE, and this process has none");
		caps(t, p);
		put(t, ": run as root, grant CAP_SYS_PTRACE, or set kernel.yama.ptrace_scope to 0");
		return;
	}
	put(t, "no cause found here (");
	if (p->ptrace_scope < 0)
		put(t, "no Yama ptrace scope; ");
	else
		put(t, "kernel.yama.ptrace_scope is %d; ", p->ptrace_scope);
	if (cap)
		put(t, "this process has CAP_SYS_PTRACE");
	else if (p->have_target)
		put(t, "process %d is this user's", (int)p->pid);
	else
		put(t, "the owner of process %d is unknown", (int)p->pid);
	put(t, "): a security module (SELinux, AppArmor) or a seccomp filter may forbid it");
}

const char *sp_perm_explain(const struct sp_perm *p, enum sp_perm_op op,
			    int err, char *buf, size_t size)
{
	struct text t = { buf, size, 0 };

	if (!size)
		return buf;
	buf[0] = 0;
	put(&t, "%s was denied: ", op == SP_PERM_TRACE ? "ptrace" :
	    op == SP_PERM_READ_MEMORY ? "process_vm_readv" : "perf_event_open");
	if (op == SP_PERM_PROFILE)
		explain_profile(&t, p, err < 0 ? err : -err);
	else if (op == SP_PERM_PROFILE_KERNEL)
		explain_profile_kernel(&t, p, err < 0 ? err : -err);
	else if (op == SP_PERM_PROFILE_CPU)
		explain_profile_cpu(&t, p, err < 0 ? err : -err);
	else
		explain_trace(&t, p, op);
	return buf;
}
