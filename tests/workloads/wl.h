/* SPDX-License-Identifier: MIT */
/*
 * wl.h: what the test workloads share: a call that the compiler may neither
 * inline, clone, merge with a look-alike nor turn into a jump, a leaf loop
 * whose work cannot be optimised away, numbers from argv, the clock their
 * durations are measured by (WL_CLOCK), and the handshake with the tests
 * (WL_READY, WL_GO).
 *
 * Every call in a designed chain is written as
 *	callee(n); BARRIER();
 * so the call is not in tail position and the caller's frame stays on the
 * stack: the chains in the samples are exactly the chains in the source.
 * Include this header first: it asks for _GNU_SOURCE.
 */
#ifndef WL_H
#define WL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* pthread_setname_np */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* noipa: no inlining, cloning, identical-code folding or IPA-SRA */
#define NOINLINE __attribute__((noinline, noipa, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

/* Leaf work lands here so that no loop is dead code. */
static volatile uint64_t wl_sink;

/*
 * n rounds of a multiply-add that the compiler cannot fold: about one
 * nanosecond each.  salt makes every leaf's body differ, so no two leaves
 * are identical code even if a compiler ignored noipa.
 */
static inline __attribute__((always_inline)) void wl_burn(uint64_t n,
							  uint64_t salt)
{
	uint64_t x = wl_sink + salt;

	while (n--) {
		x = x * 6364136223846793005ull + salt;
		__asm__ volatile("" : "+r"(x));
	}
	wl_sink = x;
}

/*
 * The clock that every duration of a workload is measured by: the monotonic
 * clock, or with WL_CLOCK=cpu in the environment the CPU time of the whole
 * process.  A CPU-time budget makes a workload do the same work, and a
 * recording of its whole life hold the same number of cpu-clock samples,
 * however loaded the machine is: load only stretches it in wall time.
 */
static inline double wl_now(void)
{
	static int cpu = -1;
	struct timespec ts;

	if (cpu < 0) {
		const char *c = getenv("WL_CLOCK");

		cpu = c && c[0] == 'c';
	}
	clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The handshake with the tests (tests/bats/common.bash, start_cmd):
 *
 *	wl_ready()	creates the file $WL_READY names: the workload is set
 *			up (threads started, maps written) and about to run
 *			its designed work
 *	wl_wait_go()	waits until the file $WL_GO names exists, so that
 *			what follows happens after the recorder attached
 *
 * Both do nothing when their variable is not set.  A program that a
 * workload execs inherits both; the files exist by then, so the handshake
 * costs it nothing.
 */
static inline void wl_ready(void)
{
	const char *path = getenv("WL_READY");
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "w");
	if (!f || fclose(f)) {
		perror(path);
		exit(70);
	}
}

/* 1 when there is no $WL_GO or its file exists, else 0. */
static inline int wl_go_given(void)
{
	const char *path = getenv("WL_GO");
	FILE *f;

	if (!path || !*path)
		return 1;
	f = fopen(path, "r");
	if (!f)
		return 0;
	fclose(f);
	return 1;
}

/* Waits at most 10 minutes: a held workload whose test died goes too. */
static inline void wl_wait_go(void)
{
	struct timespec ms = { 0, 1000000 };
	long n;

	for (n = 0; !wl_go_given(); n++) {
		if (n == 600000) {
			fprintf(stderr, "%s: not released in 10 minutes\n",
				getenv("WL_GO"));
			exit(75);
		}
		nanosleep(&ms, NULL);
	}
}

/* The number in argv[i], or def when absent; exit 64 unless in 0..max. */
static inline double wl_arg(int argc, char **argv, int i, double def,
			    double max)
{
	char *end;
	double v;

	if (argc <= i)
		return def;
	v = strtod(argv[i], &end);
	if (*argv[i] == '\0' || *end != '\0' || !(v >= 0 && v <= max)) {
		fprintf(stderr, "%s: invalid argument '%s': must be 0..%g\n",
			argv[0], argv[i], max);
		exit(64);
	}
	return v;
}

/* Seconds from argv[i] ("2.5" allowed), or def when absent. */
static inline double wl_arg_seconds(int argc, char **argv, int i, double def)
{
	return wl_arg(argc, argv, i, def, 86400);
}

#endif
