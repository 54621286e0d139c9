/* SPDX-License-Identifier: MIT */
/*
 * wl.h: what the test workloads share: a call that the compiler may neither
 * inline, clone, merge with a look-alike nor turn into a jump, a leaf loop
 * whose work cannot be optimised away, and numbers from argv.
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

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
