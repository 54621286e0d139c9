/* SPDX-License-Identifier: MIT */
/*
 * bw-deep: the C benchmark workload.  A fixed amount of work through deep,
 * known call stacks, in 1 or more threads, started by SIGUSR1 so that a
 * profiler can attach first (-p) and the work is timed on its own.
 *
 *	ROOT -> run_work -> descend x DEPTH -> mix -> outer_a -> middle_a -> leaf_a   60%
 *	                                          mix -> outer_b -> leaf_b              30%
 *	                                          mix -> leaf_c                         10%
 *
 * ROOT is main with THREADS = 1; with THREADS > 1 it is thread_main in each
 * of THREADS threads (the main thread then sleeps in pthread_join and is
 * never sampled by cpu-clock).  Each descend frame holds a 128-byte local
 * array: DEPTH 32 puts the leaves about 5 KiB above ROOT.  The shares come
 * from iteration counts (6:3:1 units of the same loop), not from clocks.
 *
 * Build: cc -O2 -g -fomit-frame-pointer -pthread (bench/run.sh does).
 *
 * usage: bw-deep THREADS ROUNDS [DEPTH [WAIT_S]]
 *   prints "ready PID" once every thread exists, waits for SIGUSR1 (at most
 *   WAIT_S seconds, default 20), runs ROUNDS rounds (about 1 ms each) in
 *   every thread, then prints "work_s SECONDS" (CLOCK_MONOTONIC, signal to
 *   the last thread's end) and exits.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa, used))
#define BARRIER() __asm__ volatile("" ::: "memory")
#define UNIT 100000ull

static volatile uint64_t sink;
static long rounds;
static int depth = 32;
static pthread_barrier_t go;

static inline __attribute__((always_inline)) void burn(uint64_t n, uint64_t salt)
{
	uint64_t x = sink + salt;

	while (n--) {
		x = x * 6364136223846793005ull + salt;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

NOINLINE void leaf_a(uint64_t n) { burn(n, 0xa1); }
NOINLINE void middle_a(uint64_t n) { leaf_a(n); BARRIER(); }
NOINLINE void outer_a(uint64_t n) { middle_a(n); BARRIER(); }
NOINLINE void leaf_b(uint64_t n) { burn(n, 0xb2); }
NOINLINE void outer_b(uint64_t n) { leaf_b(n); BARRIER(); }
NOINLINE void leaf_c(uint64_t n) { burn(n, 0xc3); }

NOINLINE void mix(void)
{
	outer_a(6 * UNIT);
	BARRIER();
	outer_b(3 * UNIT);
	BARRIER();
	leaf_c(1 * UNIT);
	BARRIER();
}

NOINLINE void descend(int d)
{
	volatile char pad[128];

	pad[0] = (char)d;
	if (d > 0)
		descend(d - 1);
	else
		mix();
	BARRIER();
	pad[127] = pad[0];
}

NOINLINE void run_work(void)
{
	long r;

	for (r = 0; r < rounds; r++) {
		descend(depth);
		BARRIER();
	}
}

NOINLINE void *thread_main(void *arg)
{
	pthread_setname_np(pthread_self(), "bw-worker");
	pthread_barrier_wait(&go);
	run_work();
	BARRIER();
	return arg;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct timespec timeout = { 20, 0 };
	pthread_t *t = NULL;
	sigset_t set;
	double t0, t1;
	int threads, i;

	if (argc < 3) {
		fprintf(stderr, "usage: bw-deep THREADS ROUNDS [DEPTH [WAIT_S]]\n");
		return 64;
	}
	threads = atoi(argv[1]);
	rounds = atol(argv[2]);
	if (argc > 3)
		depth = atoi(argv[3]);
	if (argc > 4)
		timeout.tv_sec = atoi(argv[4]);
	if (threads < 1 || threads > 256 || rounds < 1 || depth < 0 || depth > 10000) {
		fprintf(stderr, "bw-deep: bad arguments\n");
		return 64;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* threads inherit the mask */
	if (threads > 1) {
		t = calloc((size_t)threads, sizeof(*t));
		pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
		for (i = 0; i < threads; i++)
			if (!t || pthread_create(&t[i], NULL, thread_main, NULL)) {
				fprintf(stderr, "bw-deep: cannot create thread\n");
				return 1;
			}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sigtimedwait(&set, NULL, &timeout);	/* start signal, or timeout */
	t0 = now();
	if (threads > 1) {
		pthread_barrier_wait(&go);
		for (i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
	} else {
		run_work();
		BARRIER();
	}
	t1 = now();
	printf("work_s %.6f\n", t1 - t0);
	fflush(stdout);
	free(t);
	return 0;
}
