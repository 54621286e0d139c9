/* SPDX-License-Identifier: MIT */
/*
 * bw-churn: the soak's processes and threads that come and go
 * (bench/soak.sh).
 *
 *	child MS:	main -> child_work -> child_leaf	burns MS ms of CPU, exits
 *	threads SECONDS: every 50 ms a thread starts and burns 20 ms of CPU
 *			(thread_main -> thread_work -> thread_leaf), named
 *			"churn-N"; the main thread joins them, for SECONDS
 *
 * CPU time is counted with CLOCK_THREAD_CPUTIME_ID, so the work is the same
 * however busy the machine is.
 *
 * Build: cc -O2 -g -fomit-frame-pointer -pthread (bench/soak.sh does).
 *
 * usage: bw-churn child MS | bw-churn threads SECONDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile uint64_t sink;

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burn about 100 us of CPU. */
static inline __attribute__((always_inline)) void burn(uint64_t salt)
{
	uint64_t x = sink + salt, n = 100000;

	while (n--) {
		x = x * 6364136223846793005ull + salt;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

NOINLINE void child_leaf(void) { burn(0xc1); }

NOINLINE void child_work(double ms)
{
	double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + ms / 1000;

	do {
		child_leaf();
		BARRIER();
	} while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end);
}

NOINLINE void thread_leaf(void) { burn(0x7e); }

NOINLINE void thread_work(double ms)
{
	double end = clock_s(CLOCK_THREAD_CPUTIME_ID) + ms / 1000;

	do {
		thread_leaf();
		BARRIER();
	} while (clock_s(CLOCK_THREAD_CPUTIME_ID) < end);
}

static void *thread_main(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "churn-%lu", (unsigned long)(uintptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	thread_work(20);
	return NULL;
}

/* Threads that come and go: one started every 50 ms, joined 4 later. */
static int threads(double seconds)
{
	pthread_t t[4];
	double end = clock_s(CLOCK_MONOTONIC) + seconds;
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	unsigned long n = 0;
	int i;

	memset(t, 0, sizeof(t));
	while (clock_s(CLOCK_MONOTONIC) < end) {
		i = (int)(n % 4);
		if (n >= 4)
			pthread_join(t[i], NULL);
		if (pthread_create(&t[i], NULL, thread_main,
				   (void *)(uintptr_t)(n % 100))) {
			perror("bw-churn: pthread_create");
			return 1;
		}
		n++;
		nanosleep(&pause, NULL);
	}
	for (i = 0; i < 4 && (unsigned long)i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "child")) {
		child_work(atof(argv[2]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return threads(atof(argv[2]));
	fprintf(stderr, "usage: bw-churn child MS | bw-churn threads SECONDS\n");
	return 2;
}
