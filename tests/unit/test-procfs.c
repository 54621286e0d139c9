/* SPDX-License-Identifier: MIT */
/* test-procfs.c: unit tests of proc.c (maps lines, status, threads, memory). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/perf.h"
#include "elf/buildid.h"
#include "os/procfs.h"
#include "unit.h"

static void test_parse_map(void)
{
	struct sp_procfs_map m;
	char l1[] = "55d0c8a00000-55d0c8a21000 r-xp 00002000 fd:01 1835041                    /usr/bin/cat\n";
	char l2[] = "7ffd5a5f0000-7ffd5a5f2000 r-xp 00000000 00:00 0                          [vdso]\n";
	char l3[] = "7f0000000000-7f0000001000 rwxs 00000000 00:00 0   \n";
	char l4[] = "7f0000001000-7f0000002000 r-xp 0000a000 103:0a 42 /tmp/a dir/lib x.so (deleted)";
	char l5[] = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";
	char l6[] = "7F0000000000-7F0000001000 r--p 00000000 00:00 0";
	char bad1[] = "55d0c8a00000 55d0c8a21000 r-xp 00000000 fd:01 1 /x";
	char bad2[] = "1000-2000 rxp 00000000 fd:01 1 /x";
	char bad3[] = "1000-2000 r-xq 00000000 fd:01 1 /x";
	char bad4[] = "1000-2000 r-xp 00000000 fd01 1 /x";
	char bad5[] = "2000-1000 r-xp 00000000 fd:01 1 /x";
	char bad6[] = "1000-2000 r-xp";
	char bad7[] = "";
	char bad8[] = "1000-2000 r-xp 00000000 fd:01 x /x";

	CHECK(sp_procfs_parse_map(l1, &m) == 0);
	CHECK(m.start == 0x55d0c8a00000ull && m.end == 0x55d0c8a21000ull);
	CHECK(m.pgoff == 0x2000);
	CHECK(m.maj == 0xfd && m.min == 1);
	CHECK(m.ino == 1835041);
	CHECK(m.prot == (PROT_READ | PROT_EXEC));
	CHECK(m.mflags == MAP_PRIVATE);
	CHECK_STR(m.path, "/usr/bin/cat");

	CHECK(sp_procfs_parse_map(l2, &m) == 0);
	CHECK_STR(m.path, "[vdso]");
	CHECK(m.ino == 0 && m.maj == 0 && m.min == 0);

	CHECK(sp_procfs_parse_map(l3, &m) == 0);
	CHECK_STR(m.path, "");
	CHECK(m.prot == (PROT_READ | PROT_WRITE | PROT_EXEC));
	CHECK(m.mflags == MAP_SHARED);

	CHECK(sp_procfs_parse_map(l4, &m) == 0);
	CHECK_STR(m.path, "/tmp/a dir/lib x.so (deleted)");
	CHECK(m.maj == 0x103 && m.min == 0xa && m.pgoff == 0xa000);

	CHECK(sp_procfs_parse_map(l5, &m) == 0);
	CHECK(m.prot == PROT_EXEC);
	CHECK(m.start == 0xffffffffff600000ull);
	CHECK_STR(m.path, "[vsyscall]");

	CHECK(sp_procfs_parse_map(l6, &m) == 0);
	CHECK(m.start == 0x7f0000000000ull && m.prot == PROT_READ);
	CHECK_STR(m.path, "");

	CHECK(sp_procfs_parse_map(bad1, &m) == -EINVAL);
	CHECK(sp_procfs_parse_map(bad2, &m) == -EINVAL);
	CHECK(sp_procfs_parse_map(bad3, &m) == -EINVAL);
	CHECK(sp_procfs_parse_map(bad4, &m) == -EINVAL);
	CHECK(sp_procfs_parse_map(bad5, &m) == -EINVAL);
	CHECK(sp_procfs_parse_map(bad6, &m) == -EINVAL);
	CHECK(sp_procfs_parse_map(bad7, &m) == -EINVAL);
	CHECK(sp_procfs_parse_map(bad8, &m) == -EINVAL);
}

static void test_parse_status(void)
{
	pid_t tgid = 0, ppid = 0;

	CHECK(sp_procfs_parse_status("Name:\tcat\nUmask:\t0022\nState:\tR (running)\n"
				     "Tgid:\t4242\nNgid:\t0\nPid:\t4243\nPPid:\t17\n",
				     &tgid, &ppid) == 0);
	CHECK(tgid == 4242 && ppid == 17);
	CHECK(sp_procfs_parse_status("Tgid:\t1\n", &tgid, &ppid) == -EINVAL);
	CHECK(sp_procfs_parse_status("Tgid:\tx\nPPid:\t1\n", &tgid, &ppid) ==
	      -EINVAL);
	/* "PPid" must not match "TracerPid"-like prefixes of other fields */
	CHECK(sp_procfs_parse_status("XPPid:\t5\nTgid:\t3\nPPid:\t0\n", &tgid,
				     &ppid) == 0);
	CHECK(tgid == 3 && ppid == 0);
	/* a number no pid_t holds is no pid, not its low bits */
	CHECK(sp_procfs_parse_status("Tgid:\t4294967297\nPPid:\t1\n", &tgid,
				     &ppid) == -EINVAL);
	CHECK(sp_procfs_parse_status("Tgid:\t1\nPPid:\t99999999999999999999\n",
				     &tgid, &ppid) == -EINVAL);
	CHECK(sp_procfs_parse_status("Tgid:\t2147483647\nPPid:\t1\n", &tgid,
				     &ppid) == 0 && tgid == 2147483647);
}

static void test_parse_cpus(void)
{
	int cpus[8];

	CHECK(sp_perf_parse_cpus("0-1\n", cpus, 8) == 2);
	CHECK(cpus[0] == 0 && cpus[1] == 1);
	CHECK(sp_perf_parse_cpus("0,2-4,7", cpus, 8) == 5);
	CHECK(cpus[1] == 2 && cpus[3] == 4 && cpus[4] == 7);
	CHECK(sp_perf_parse_cpus("0-8", cpus, 8) == -E2BIG);
	CHECK(sp_perf_parse_cpus("", cpus, 8) == -EINVAL);
	CHECK(sp_perf_parse_cpus("3-1", cpus, 8) == -EINVAL);
	CHECK(sp_perf_parse_cpus("1,x", cpus, 8) == -EINVAL);
	CHECK(sp_perf_online_cpus(cpus, 8) > 0);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pid_t thread_tid;
static int done;

static void *thread_main(void *arg)
{
	prctl(PR_SET_NAME, "unit-thread");
	pthread_mutex_lock(&lock);
	thread_tid = gettid();
	pthread_cond_broadcast(&cond);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return arg;
}

static void test_threads(void)
{
	pthread_t t;
	pid_t *tids = NULL;
	size_t n = 0, i;
	int have_self = 0, have_thread = 0, sorted = 1;
	char comm[16];
	pid_t tgid, ppid;

	pthread_create(&t, NULL, thread_main, NULL);
	pthread_mutex_lock(&lock);
	while (!thread_tid)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	CHECK(sp_procfs_tids(getpid(), &tids, &n) == 0);
	for (i = 0; i < n; i++) {
		have_self |= tids[i] == getpid();
		have_thread |= tids[i] == thread_tid;
		if (i && tids[i - 1] >= tids[i])
			sorted = 0;
	}
	CHECK(n >= 2 && have_self && have_thread && sorted);
	free(tids);

	CHECK(sp_procfs_comm(getpid(), thread_tid, comm) == 0);
	CHECK_STR(comm, "unit-thread");
	CHECK(sp_procfs_status(getpid(), &tgid, &ppid) == 0);
	CHECK(tgid == getpid() && ppid == getppid());
	/* a thread's status names its group */
	CHECK(sp_procfs_status(thread_tid, &tgid, &ppid) == 0);
	CHECK(tgid == getpid());

	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);
}

struct find {
	uint64_t addr;
	int found_exec, found_vdso;
	uint64_t vdso_start, vdso_len;
};

static int find_cb(const struct sp_procfs_map *m, void *arg)
{
	struct find *f = arg;

	if (f->addr >= m->start && f->addr < m->end && (m->prot & PROT_EXEC) &&
	    *m->path == '/')
		f->found_exec = 1;
	if (!strcmp(m->path, "[vdso]")) {
		f->found_vdso = 1;
		f->vdso_start = m->start;
		f->vdso_len = m->end - m->start;
	}
	return 0;
}

static int stop_cb(const struct sp_procfs_map *m, void *arg)
{
	(*(int *)arg)++;
	return m ? 7 : 0;
}

static void test_maps_and_mem(void)
{
	struct find f = { (uint64_t)(uintptr_t)test_parse_map, 0, 0, 0, 0 };
	uint8_t *buf;
	int calls = 0;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);

	CHECK(sp_procfs_maps(getpid(), find_cb, &f) == 0);
	CHECK(f.found_exec);
	CHECK(sp_procfs_maps(getpid(), stop_cb, &calls) == 7 && calls == 1);
	if (vdso) {
		CHECK(f.found_vdso && f.vdso_start == vdso);
		buf = malloc(f.vdso_len);
		CHECK(sp_procfs_read_mem(getpid(), f.vdso_start, buf,
					 f.vdso_len) == 0);
		CHECK(!memcmp(buf, (const void *)(uintptr_t)vdso, f.vdso_len));
		CHECK(!memcmp(buf, "\177ELF", 4));
		free(buf);
	}
	{
		char b[16];

		/* the page at 0 is never mapped */
		CHECK(sp_procfs_read_mem(getpid(), 0, b, sizeof(b)) < 0);
	}
	CHECK(sp_procfs_maps(0x7ffffff0, find_cb, &f) == -ESRCH);
	CHECK(sp_procfs_tids(0x7ffffff0, &(pid_t *){ NULL }, &(size_t){ 0 }) ==
	      -ESRCH);
}

static void test_alive(void)
{
	pid_t child;
	int st;

	CHECK(sp_procfs_alive(getpid()) == 1);
	child = fork();
	if (child == 0)
		_exit(0);
	/* a zombie is not alive: wait until it is one, then reap it */
	for (int i = 0; i < 1000 && sp_procfs_alive(child); i++)
		usleep(1000);
	CHECK(sp_procfs_alive(child) == 0);
	CHECK(waitpid(child, &st, 0) == child);
	CHECK(sp_procfs_alive(child) == 0);
}

static void test_read_ll(void)
{
	char path[] = "/tmp/test-proc-XXXXXX";
	long long v = 0;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, "-42\n", 4) == 4);
	close(fd);
	CHECK(sp_procfs_read_ll(path, &v) == 0 && v == -42);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "4x\n", 3) == 3);
	close(fd);
	CHECK(sp_procfs_read_ll(path, &v) == -EINVAL);
	unlink(path);
	CHECK(sp_procfs_read_ll(path, &v) == -ENOENT);
	CHECK(sp_procfs_read_ll("/proc/sys/kernel/pid_max", &v) == 0 && v > 0);
}

static int find_exe(const struct sp_procfs_map *m, void *arg)
{
	struct sp_procfs_map *out = arg;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return 0;
	exe[n] = 0;
	if (!(m->prot & PROT_EXEC) || strcmp(m->path, exe))
		return 0;
	*out = *m;
	return 1;
}

static void test_build_id_uid_state(void)
{
	uint8_t a[20], b[20];
	struct sp_procfs_map m;
	uid_t uid;
	char st;
	int fd, n;

	fd = open("/proc/self/exe", O_RDONLY);
	CHECK(fd >= 0);
	n = sp_build_id_fd(fd, a);
	close(fd);
	CHECK(n == 20);	/* gcc links with --build-id on Debian */
	/* the mapped file, through map_files or its path checked by inode */
	CHECK(sp_procfs_maps(getpid(), find_exe, &m) == 1);
	fd = sp_procfs_open_mapped(getpid(), &m);
	CHECK(fd >= 0);
	CHECK(sp_build_id_fd(fd, b) == n);
	close(fd);
	CHECK(!memcmp(a, b, 20));
	/* another inode than the mapping's: refused */
	m.ino++;
	m.path = "/proc/self/exe";
	fd = sp_procfs_open_mapped(0x7ffffff0, &m);
	CHECK(fd == -ESTALE);
	/* not ELF: no build id, no error */
	fd = open("/proc/self/status", O_RDONLY);
	CHECK(sp_build_id_fd(fd, a) == 0);
	close(fd);

	CHECK(sp_procfs_uid(getpid(), &uid) == 0 && uid == geteuid());
	CHECK(sp_procfs_state(getpid(), getpid(), &st) == 0 && st == 'R');
	CHECK(sp_procfs_state(getpid(), 0x7ffffff0, &st) == -ESRCH);
}

int main(void)
{
	test_build_id_uid_state();
	test_parse_map();
	test_parse_status();
	test_parse_cpus();
	test_threads();
	test_maps_and_mem();
	test_alive();
	test_read_ll();
	return unit_done("test-procfs");
}
