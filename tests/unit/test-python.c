/* SPDX-License-Identifier: MIT */
/*
 * test-python.c: CPython's frames read inside the samples of a live
 * interpreter (record/python.c and its BPF program).
 *
 * Each interpreter runs a script made here with random function names, so
 * that no name can come from anywhere but the process: <module> calls f,
 * f calls g, g calls h, and h spins.  The test samples it with cpu-clock
 * and the BPF program attached, reads every chain the program wrote and
 * names its frames from the code objects: nearly every sample must show
 * h, g, f, <module>, each at its line of the script.  Needs root; Debian's
 * /usr/bin/python3.11 always, pyenv's 3.11, 3.12 and 3.13 when installed
 * (in CI they are), and 3.10 for the refusal.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/python.h"
#include "os/perf.h"
#include "record/python.h"
#include "unit.h"

static char dir[] = "/tmp/sp-test-python.XXXXXX";
static char names[3][16];	/* f, g, h */

/* The script, with h's spin on line 3 and the calls on lines 6, 8, 11. */
static void write_script(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		exit(2);
	fprintf(f,
		"def %s():\n"			/* 1 */
		"    x = 0\n"			/* 2 */
		"    while True: x += 1\n"	/* 3 */
		"def %s():\n"			/* 4 */
		"    y = 1\n"			/* 5 */
		"    %s()\n"			/* 6 */
		"def %s():\n"			/* 7 */
		"    %s()\n"			/* 8 */
		"import sys\n"			/* 9 */
		"sys.stdout.write('go\\n'); sys.stdout.flush()\n"	/* 10 */
		"%s()\n",			/* 11 */
		names[2], names[1], names[2], names[0], names[1], names[0]);
	fclose(f);
}

static pid_t start(const char *python, const char *script)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		exit(2);
	pid = fork();
	if (pid == 0) {
		/* never left spinning by a test that died */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		close(p[0]);
		execl(python, python, script, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* "go": the interpreter runs the script */
	if (read(p[0], &c, 1) != 1)
		c = 0;
	close(p[0]);
	return c == 'g' ? pid : -1;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

struct named {
	uint64_t addr;
	struct sp_py_code c;
	int r;
};

/* The code object at addr, read once. */
static struct named *code_of(struct named *t, size_t *n, pid_t pid,
			     const struct sp_py_proc *p, uint64_t addr,
			     uint64_t stamp)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (t[i].addr == addr)
			return &t[i];
	if (*n == 64)
		return NULL;
	t[*n].addr = addr;
	t[*n].r = sp_py_read_code(pid, p, addr, stamp, &t[*n].c);
	return &t[(*n)++];
}

/* Sample python for half a second; check the chains the program wrote. */
static void sample(const char *python, unsigned want_minor)
{
	char script[64], why[256];
	struct sp_py_proc p;
	struct sp_py_bpf *b;
	struct sp_ring *rings[64];
	struct named named[64];
	size_t nnamed = 0, i;
	int cpus[64], fds[64], ncpu, c, r;
	uint64_t out_ids[64];
	long chains = 0, samples = 0, paired = 0, good = 0, lined = 0;
	pid_t pid;

	snprintf(script, sizeof(script), "%s/prog.py", dir);
	pid = start(python, script);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	r = sp_py_find(pid, &p, why, sizeof(why));
	CHECK(r == 1);
	if (r != 1) {
		fprintf(stderr, "%s: sp_py_find %d: %s\n", python, r, why);
		stop(pid);
		return;
	}
	CHECK(p.version >> 24 == 3 && (p.version >> 16 & 0xff) == want_minor);
	r = sp_py_bpf_open(&b, why, sizeof(why));
	CHECK(r == 0);
	if (r) {
		fprintf(stderr, "sp_py_bpf_open: %s\n", why);
		stop(pid);
		return;
	}
	CHECK(sp_py_bpf_watch(b, pid, &p) == 0);
	ncpu = sp_perf_online_cpus(cpus, 64);
	CHECK(ncpu > 0);
	for (c = 0; c < ncpu; c++) {
		struct perf_event_attr a = {
			.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK, .freq = 1,
			.sample_freq = 999, .disabled = 1,
			.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
				       PERF_SAMPLE_TIME,
			.use_clockid = 1, .clockid = CLOCK_MONOTONIC,
		};

		fds[c] = sp_perf_open(&a, pid, cpus[c]);
		CHECK(fds[c] >= 0);
		rings[c] = sp_ring_new(fds[c], 64);
		CHECK(rings[c] != NULL);
		CHECK(sp_py_bpf_output(b, cpus[c], fds[c], &out_ids[c]) == 0);
		CHECK(sp_py_bpf_attach(b, fds[c]) == 0);
		CHECK(sp_perf_enable(fds[c]) == 0);
	}
	usleep(500000);
	for (c = 0; c < ncpu; c++)
		sp_perf_disable(fds[c]);
	for (c = 0; c < ncpu; c++) {
		const struct perf_event_header *h;
		const struct sp_py_chain *last = NULL;
		static _Alignas(8) uint8_t keep[sizeof(struct sp_py_chain)];

		sp_ring_begin(rings[c]);
		while ((h = sp_ring_next(rings[c]))) {
			const uint64_t *u = (const void *)(h + 1);
			uint32_t size;

			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			if (u[0] == out_ids[c]) {
				/* id, pid/tid, time, cpu, then the raw size */
				memcpy(&size, &u[4], 4);
				CHECK(size >= 16 && size <= sizeof(keep) + 8);
				/* 4 bytes past an 8-byte boundary: copied out */
				memcpy(keep, (const char *)&u[4] + 4,
				       size < sizeof(keep) ? size : sizeof(keep));
				last = (const void *)keep;
				CHECK(last->magic == SP_PY_MAGIC);
				chains++;
				continue;
			}
			samples++;
			/* the chain of a sample comes just before it */
			if (!last || last->tid != (uint32_t)(u[1] >> 32)) {
				last = NULL;
				continue;
			}
			paired++;
			if (last->n >= 4 && !(last->flags & SP_PY_FAULT)) {
				const char *want[4] = { names[2], names[1],
							names[0], "<module>" };
				int lines[4] = { 3, 6, 8, 11 }, ok = 1, lok = 1;

				for (i = 0; i < 4; i++) {
					uint64_t addr = last->f[i].code & ~(uint64_t)SP_PY_ENTRY;
					struct named *nm = code_of(named, &nnamed, pid, &p, addr,
								   last->f[i].stamp);
					uint64_t start = addr + p.co_code;
					int line;

					if (!nm || nm->r || strcmp(nm->c.name, want[i])) {
						ok = 0;
						break;
					}
					line = sp_py_line(nm->c.linetable, nm->c.linetable_len,
							  nm->c.firstlineno,
							  last->f[i].instr > start ?
							  last->f[i].instr - start : 0);
					if (line != lines[i])
						lok = 0;
				}
				good += ok;
				lined += ok && lok;
			}
			last = NULL;
		}
		sp_ring_end(rings[c]);
	}
	printf("%s: %ld samples, %ld chains, %ld paired, %ld h-g-f-<module>, %ld at their lines\n",
	       python, samples, chains, paired, good, lined);
	CHECK(samples >= 100);
	CHECK(paired == samples);
	CHECK(good * 100 >= samples * 90);
	CHECK(lined * 100 >= samples * 90);
	/* the file is the script's */
	for (i = 0; i < nnamed; i++)
		if (!named[i].r && !strcmp(named[i].c.name, names[2]))
			CHECK_STR(named[i].c.filename, script);
	for (i = 0; i < nnamed; i++)
		free(named[i].c.linetable);
	for (c = 0; c < ncpu; c++) {
		sp_ring_free(rings[c]);
		close(fds[c]);
	}
	sp_py_bpf_free(b);
	stop(pid);
}

/* The pyenv interpreter of version v, or NULL. */
static const char *pyenv(const char *v, char *buf, size_t len)
{
	const char *root = getenv("PYENV_ROOT");
	char minor[8];

	snprintf(minor, sizeof(minor), "%.4s", v);
	snprintf(buf, len, "%s/versions/%s/bin/python%s",
		 root ? root : "/root/.pyenv", v, minor);
	if (access(buf, X_OK) == 0)
		return buf;
	if (getenv("CI") && !strcmp(getenv("CI"), "true")) {
		fprintf(stderr, "%s is missing: CI has pyenv's interpreters\n", buf);
		unit_fail++;
	}
	return NULL;
}

int main(void)
{
	static const struct { const char *v; unsigned minor; } py[] = {
		{ "3.11.7", 11 }, { "3.12.1", 12 }, { "3.13.0", 13 },
	};
	char script[64], why[256], buf[256];
	struct sp_py_proc p;
	const char *python;
	pid_t pid;
	size_t i;

	if (geteuid() != 0) {
		printf("test-python: skipped: needs root (BPF and perf events)\n");
		return 0;
	}
	if (!mkdtemp(dir))
		return 2;
	for (i = 0; i < 3; i++)
		snprintf(names[i], sizeof(names[i]), "%c_%08llx", "fgh"[i],
			 (unsigned long long)(unit_rand() ^ (uint64_t)time(NULL) ^
					      (uint64_t)getpid() << 20) & 0xffffffffull);
	snprintf(script, sizeof(script), "%s/prog.py", dir);
	write_script(script);

	sample("/usr/bin/python3.11", 11);
	for (i = 0; i < sizeof(py) / sizeof(py[0]); i++)
		if ((python = pyenv(py[i].v, buf, sizeof(buf))))
			sample(python, py[i].minor);

	/* no interpreter: nothing found */
	pid = fork();
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	CHECK(sp_py_find(pid, &p, why, sizeof(why)) == 0);
	stop(pid);
	/* another version: refused, and said */
	if ((python = pyenv("3.10.13", buf, sizeof(buf)))) {
		pid = start(python, script);
		CHECK(pid > 0);
		if (pid > 0) {
			CHECK(sp_py_find(pid, &p, why, sizeof(why)) == -ENOTSUP);
			CHECK(strstr(why, "CPython 3.10") != NULL);
			CHECK(strstr(why, "unsupported version") != NULL);
			stop(pid);
		}
	}
	unlink(script);
	rmdir(dir);
	return unit_done("test-python");
}
