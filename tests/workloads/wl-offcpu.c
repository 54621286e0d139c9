/* SPDX-License-Identifier: MIT */
/*
 * wl-offcpu: threads whose time off the CPU is designed.
 *
 * Thread "mixed" runs cycles of 100 ms on the monotonic clock:
 *
 *	mixed_main -> compute -> burn		30 ms on the CPU
 *	mixed_main -> doze -> nanosleep		40 ms asleep
 *	mixed_main -> wait_pipe -> read		30 ms blocked on a pipe
 *
 * The pipe is written by thread "ticker" at the end of each cycle (an
 * absolute-time sleep, then one byte), so the read blocks from the end of
 * the nanosleep to the cycle's end.  Threads "holder" and "waiter" contend
 * for a mutex: the holder keeps it for 20 ms of computing (hold -> burn)
 * then lets it go for 5 ms; the waiter sleeps 2 ms, then blocks in
 * lock_wait -> pthread_mutex_lock until the holder lets go.
 *
 * Ready (wl_ready) once every thread is named, released (wl_wait_go) before
 * the cycles begin; SECONDS count from the release.  At the end each thread
 * prints "NAME TID ELAPSED_NS" to standard output, the time from its
 * release to its end (by CLOCK_MONOTONIC).
 *
 * usage: wl-offcpu [SECONDS]	(default 5)
 */
#include "wl.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CYCLE_NS	100000000ll
#define COMPUTE_NS	30000000ll
#define DOZE_NS		40000000ll
#define HOLD_NS		20000000ll
#define RELEASE_NS	5000000ll
#define WAITER_NAP_NS	2000000ll

static long long start_ns, end_ns;
static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t named, started;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void sleep_until(long long t)
{
	struct timespec ts = { t / 1000000000ll, t % 1000000000ll };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

static void report(const char *name, long long since)
{
	pthread_mutex_lock(&out_lock);
	printf("%s %ld %lld\n", name, (long)syscall(SYS_gettid),
	       mono_ns() - since);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* Work on the CPU until the monotonic clock reaches t. */
NOINLINE void burn(long long t)
{
	do {
		wl_burn(20000, 7);
	} while (mono_ns() < t);
}

NOINLINE void compute(long long t)
{
	burn(t);
	BARRIER();
}

NOINLINE void doze(long long t)
{
	sleep_until(t);
	BARRIER();
}

NOINLINE void wait_pipe(void)
{
	char c;

	if (read(pipefd[0], &c, 1) != 1)
		exit(71);
	BARRIER();
}

NOINLINE void *mixed_main(void *arg)
{
	long long c, since;

	pthread_setname_np(pthread_self(), "mixed");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&started);
	since = mono_ns();
	for (c = start_ns; c < end_ns; c += CYCLE_NS) {
		compute(c + COMPUTE_NS);
		doze(c + COMPUTE_NS + DOZE_NS);
		wait_pipe();
	}
	report("mixed", since);
	return arg;
}

NOINLINE void *ticker_main(void *arg)
{
	long long c, since;

	pthread_setname_np(pthread_self(), "ticker");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&started);
	since = mono_ns();
	for (c = start_ns; c < end_ns; c += CYCLE_NS) {
		sleep_until(c + CYCLE_NS);
		if (write(pipefd[1], "x", 1) != 1)
			exit(71);
	}
	report("ticker", since);
	return arg;
}

NOINLINE void hold(long long t)
{
	pthread_mutex_lock(&lock);
	burn(t);
	pthread_mutex_unlock(&lock);
	BARRIER();
}

NOINLINE void *holder_main(void *arg)
{
	long long t, since;

	pthread_setname_np(pthread_self(), "holder");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&started);
	since = mono_ns();
	for (t = start_ns; t < end_ns; t += HOLD_NS + RELEASE_NS) {
		hold(t + HOLD_NS);
		sleep_until(t + HOLD_NS + RELEASE_NS);
	}
	report("holder", since);
	return arg;
}

NOINLINE void lock_wait(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	BARRIER();
}

NOINLINE void *waiter_main(void *arg)
{
	long long since;

	pthread_setname_np(pthread_self(), "waiter");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&started);
	since = mono_ns();
	while (mono_ns() < end_ns) {
		sleep_until(mono_ns() + WAITER_NAP_NS);
		lock_wait();
	}
	report("waiter", since);
	return arg;
}

int main(int argc, char **argv)
{
	void *(*const start[4])(void *) = {
		mixed_main, ticker_main, holder_main, waiter_main,
	};
	double seconds = wl_arg_seconds(argc, argv, 1, 5);
	pthread_t t[4];
	int i;

	if (pipe(pipefd))
		return 71;
	pthread_barrier_init(&named, NULL, 5);
	pthread_barrier_init(&started, NULL, 5);
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, start[i], NULL))
			return 71;
	pthread_barrier_wait(&named);
	wl_ready();
	wl_wait_go();
	start_ns = mono_ns();
	end_ns = start_ns + (long long)(seconds * 1e9);
	pthread_barrier_wait(&started);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
