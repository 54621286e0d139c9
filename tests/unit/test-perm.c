/* SPDX-License-Identifier: MIT */
/* test-perm.c: the words for a denied perf_event_open or ptrace, in every situation. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "os/perm.h"
#include "unit.h"

#define CAP(c) (1ull << (c))

static char buf[512];

/* A target of ours, no capabilities anywhere, paranoid 2, no Yama. */
static struct sp_perm base(void)
{
	struct sp_perm p;
	int i;

	memset(&p, 0, sizeof(p));
	p.pid = 42;
	p.tid = 43;
	p.have_paranoid = 1;
	p.paranoid = 2;
	p.have_caps = 1;
	p.ptrace_scope = -1;
	p.uid = p.gid = 1000;
	p.have_target = 1;
	for (i = 0; i < 3; i++)
		p.target_uid[i] = p.target_gid[i] = 1000;
	p.have_target_caps = 1;
	p.target_dumpable = 1;
	return p;
}

static const char *profile(const struct sp_perm *p, int err)
{
	return sp_perm_explain(p, SP_PERM_PROFILE, err, buf, sizeof(buf));
}

static const char *trace(const struct sp_perm *p)
{
	return sp_perm_explain(p, SP_PERM_TRACE, -EPERM, buf, sizeof(buf));
}

#define HAS(s, sub) CHECK(strstr((s), (sub)) != NULL)
#define LACKS(s, sub) CHECK(strstr((s), (sub)) == NULL)

static void test_paranoid(void)
{
	struct sp_perm p = base();

	p.paranoid = 3;
	CHECK_STR(profile(&p, -EACCES),
		  "perf_event_open was denied: kernel.perf_event_paranoid is 3, which allows no perf events at all without CAP_PERFMON, and this process has neither it nor CAP_SYS_ADMIN (CapEff 0000000000000000): run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid to 2");
	/* it comes first: not even one's own processes */
	p.uid = 65534;
	HAS(profile(&p, -EACCES), "kernel.perf_event_paranoid is 3");
	/* CAP_PERFMON or CAP_SYS_ADMIN lets past it */
	p = base();
	p.paranoid = 3;
	p.cap_eff = CAP(SP_CAP_PERFMON);
	LACKS(profile(&p, -EACCES), "is 3, which");
	HAS(buf, "this process has CAP_PERFMON");
	p.cap_eff = CAP(SP_CAP_SYS_ADMIN);
	LACKS(profile(&p, -EACCES), "is 3, which");
	/* below 3 it is never the cause of a refusal sp-record sees */
	p = base();
	p.paranoid = -1;
	CHECK_STR(profile(&p, -EACCES),
		  "perf_event_open was denied: no cause found here (perf_event_paranoid -1 allows profiling every process and cpu; process 42 is this user's): a security module (SELinux, AppArmor) or a seccomp filter may forbid it");
	p.paranoid = 2;
	HAS(profile(&p, -EACCES), "perf_event_paranoid 2 allows profiling one's own processes, user space only");
	/* unreadable: not mentioned, not guessed */
	p.have_paranoid = 0;
	LACKS(profile(&p, -EACCES), "paranoid");
}

static void test_owner(void)
{
	struct sp_perm p = base();

	/* another user's process at paranoid -1: the owner, not paranoid */
	p.paranoid = -1;
	p.uid = p.gid = 65534;
	p.target_uid[0] = p.target_uid[1] = p.target_uid[2] = 0;
	p.target_gid[0] = p.target_gid[1] = p.target_gid[2] = 0;
	CHECK_STR(profile(&p, -EACCES),
		  "perf_event_open was denied: process 42 belongs to uid 0 and this process runs as uid 65534 without CAP_PERFMON or CAP_SYS_PTRACE (CapEff 0000000000000000): run as its owner or root, or grant CAP_PERFMON");
	LACKS(buf, "paranoid");
	CHECK_STR(trace(&p),
		  "ptrace was denied: process 42 belongs to uid 0 and this process runs as uid 65534 without CAP_SYS_PTRACE (CapEff 0000000000000000): run as its owner or root, or grant CAP_SYS_PTRACE");
	/* either capability lets perf past the owner, only one ptrace */
	p.cap_eff = CAP(SP_CAP_SYS_PTRACE);
	LACKS(profile(&p, -EACCES), "belongs to");
	HAS(buf, "this process has CAP_SYS_PTRACE");
	LACKS(trace(&p), "belongs to");
	p.cap_eff = CAP(SP_CAP_PERFMON);
	LACKS(profile(&p, -EACCES), "belongs to");
	HAS(trace(&p), "belongs to uid 0");

	/* a set-user-ID program: its ids differ among themselves */
	p = base();
	p.target_uid[1] = p.target_uid[2] = 0;
	HAS(profile(&p, -EACCES), "process 42 runs as uids 1000, 0, 0 (real, effective, saved) and this process as uid 1000 without");
	/* the groups count too */
	p = base();
	p.target_gid[0] = p.target_gid[1] = p.target_gid[2] = 5;
	HAS(profile(&p, -EACCES), "process 42 belongs to group 5 and this process runs as group 1000 without");
	p.target_gid[1] = 6;
	HAS(profile(&p, -EACCES), "runs as groups 5, 6, 5 (real, effective, saved)");
	/* the owner unknown: never blamed */
	p = base();
	p.have_target = 0;
	p.uid = 65534;
	HAS(profile(&p, -EACCES), "the owner of process 42 is unknown");
	LACKS(buf, "belongs");
}

static void test_outranked(void)
{
	struct sp_perm p = base();

	/* root without capabilities, and root's process with them */
	p.uid = p.gid = 0;
	p.target_uid[0] = p.target_uid[1] = p.target_uid[2] = 0;
	p.target_gid[0] = p.target_gid[1] = p.target_gid[2] = 0;
	p.target_cap_prm = 0x1ffffffffffull;
	CHECK_STR(profile(&p, -EACCES),
		  "perf_event_open was denied: process 42 holds capabilities that this process, without CAP_PERFMON or CAP_SYS_PTRACE, is not permitted (its CapPrm 000001ffffffffff; ours 0000000000000000, CapEff 0000000000000000): grant CAP_PERFMON");
	HAS(trace(&p), "without CAP_SYS_PTRACE, is not permitted");
	/* permitted them all: not the cause */
	p.cap_prm = 0x1ffffffffffull;
	LACKS(profile(&p, -EACCES), "holds capabilities");
	p.cap_prm = 0;
	p.cap_eff = CAP(SP_CAP_SYS_PTRACE);
	LACKS(profile(&p, -EACCES), "holds capabilities");
	LACKS(trace(&p), "holds capabilities");
}

static void test_dumpable(void)
{
	struct sp_perm p = base();

	p.target_dumpable = 0;
	HAS(profile(&p, -EACCES), "process 42 is not dumpable (a set-user-ID or set-group-ID program, or prctl(PR_SET_DUMPABLE, 0)) and this process has no CAP_PERFMON or CAP_SYS_PTRACE");
	HAS(trace(&p), "process 42 is not dumpable");
	p.target_dumpable = -1;
	LACKS(profile(&p, -EACCES), "dumpable");
}

static void test_seccomp(void)
{
	struct sp_perm p = base();

	/* everything allows it: EPERM is a filter's answer */
	HAS(profile(&p, -EPERM), "it answered EPERM, as a seccomp filter does (a container's): allow perf_event_open there");
	HAS(profile(&p, EPERM), "it answered EPERM");
	LACKS(profile(&p, -EACCES), "answered EPERM");
}

static void test_trace(void)
{
	struct sp_perm p = base();

	p.tracer = 77;
	CHECK_STR(trace(&p),
		  "ptrace was denied: thread 43 is traced by process 77 already (a debugger?), and a thread has one tracer at most");
	p.tracer = 0;
	p.ptrace_scope = 3;
	p.cap_eff = CAP(SP_CAP_SYS_PTRACE);
	HAS(trace(&p), "kernel.yama.ptrace_scope is 3, which allows no ptrace at all until reboot");
	p.ptrace_scope = 2;
	LACKS(trace(&p), "ptrace_scope is 2,");
	p.cap_eff = 0;
	HAS(trace(&p), "kernel.yama.ptrace_scope is 2, which allows ptrace only with CAP_SYS_PTRACE, and this process has none (CapEff 0000000000000000)");
	p.ptrace_scope = 1;
	HAS(trace(&p), "kernel.yama.ptrace_scope is 1, which allows ptrace of one's own descendants only without CAP_SYS_PTRACE");
	/* of another user's process the owner is the cause first */
	p.uid = 65534;
	HAS(trace(&p), "belongs to uid 1000");
	p.uid = 1000;
	p.ptrace_scope = 0;
	HAS(trace(&p), "no cause found here (kernel.yama.ptrace_scope is 0; process 42 is this user's)");
	p.ptrace_scope = -1;
	HAS(trace(&p), "no cause found here (no Yama ptrace scope;");
	/* Yama plays no part in perf_event_open */
	p.ptrace_scope = 2;
	LACKS(profile(&p, -EACCES), "ptrace_scope");
}

/* Reading another process's memory (stack tails): ptrace's rules. */
static void test_read_memory(void)
{
	struct sp_perm p = base();
	const char *s;

	/* a debugger there already stops ptrace, not process_vm_readv */
	p.tracer = 77;
	p.ptrace_scope = 1;
	s = sp_perm_explain(&p, SP_PERM_READ_MEMORY, -EPERM, buf, sizeof(buf));
	HAS(s, "process_vm_readv was denied: kernel.yama.ptrace_scope is 1, which allows ptrace of one's own descendants only");
	LACKS(s, "tracer");
	p.uid = 65534;
	s = sp_perm_explain(&p, SP_PERM_READ_MEMORY, -EPERM, buf, sizeof(buf));
	HAS(s, "process_vm_readv was denied: process 42 belongs to uid 1000");
}

static void test_cut(void)
{
	struct sp_perm p = base();
	char small[16];

	memset(small, 'x', sizeof(small));
	sp_perm_explain(&p, SP_PERM_PROFILE, -EACCES, small, sizeof(small));
	CHECK(strlen(small) == sizeof(small) - 1);
	CHECK(sp_perm_explain(&p, SP_PERM_TRACE, -EPERM, small, 0) == small);
}

static void test_read_self(void)
{
	struct sp_perm p;

	sp_perm_read(&p, getpid(), getpid());
	CHECK(p.pid == getpid());
	CHECK(p.have_target && p.have_caps && p.have_target_caps);
	CHECK(p.target_uid[0] == (uint32_t)getuid());
	CHECK(p.target_gid[0] == (uint32_t)getgid());
	CHECK(p.target_cap_prm == p.cap_prm);
	/* our own process is never the cause */
	LACKS(profile(&p, -EACCES), "belongs to");
	LACKS(buf, "holds capabilities");
	/* one that does not exist: its owner is unknown, not guessed */
	sp_perm_read(&p, 0x3fffffff, 0x3fffffff);
	CHECK(!p.have_target && !p.have_target_caps && p.target_dumpable == -1);
}

static const char *profile_cpu(const struct sp_perm *p, int err)
{
	return sp_perm_explain(p, SP_PERM_PROFILE_CPU, err, buf, sizeof(buf));
}

/* Every process of a CPU: paranoid 0 or CAP_PERFMON, whoever owns what. */
static void test_profile_cpu(void)
{
	struct sp_perm p = base();

	p.have_target = 0;
	CHECK_STR(profile_cpu(&p, -EACCES),
		  "perf_event_open was denied: kernel.perf_event_paranoid is 2, which allows profiling one's own processes, user space only; every process of a cpu needs it at 0 or below, or CAP_PERFMON, and this process has neither it nor CAP_SYS_ADMIN (CapEff 0000000000000000): run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid to 0");
	p.paranoid = 1;
	HAS(profile_cpu(&p, -EACCES), "kernel.perf_event_paranoid is 1, ");
	/* 0 allows it: the cause is elsewhere */
	p.paranoid = 0;
	HAS(profile_cpu(&p, -EACCES), "no cause found here (perf_event_paranoid 0 allows profiling one's own processes and whole cpus; this process has no CAP_PERFMON): a security module");
	HAS(profile_cpu(&p, -EPERM), "as a seccomp filter does");
	/* CAP_PERFMON or CAP_SYS_ADMIN lets past paranoid */
	p.paranoid = 2;
	p.cap_eff = CAP(SP_CAP_PERFMON);
	HAS(profile_cpu(&p, -EACCES), "no cause found here");
	p.cap_eff = CAP(SP_CAP_SYS_ADMIN);
	LACKS(profile_cpu(&p, -EACCES), "kernel.perf_event_paranoid is");
	/* unknown paranoid: nothing said of it */
	p.have_paranoid = 0;
	p.cap_eff = 0;
	LACKS(profile_cpu(&p, -EACCES), "paranoid");
}

int main(void)
{
	test_paranoid();
	test_owner();
	test_outranked();
	test_dumpable();
	test_seccomp();
	test_trace();
	test_read_memory();
	test_cut();
	test_read_self();
	test_profile_cpu();
	return unit_done("test-perm");
}
