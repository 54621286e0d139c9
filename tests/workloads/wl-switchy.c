/* SPDX-License-Identifier: MIT */
/*
 * wl-switchy: two threads that hand a byte back and forth over two pipes
 * as fast as they can, so that each is switched out and in again tens of
 * thousands of times a second: the recorder's worst case for --off-cpu.
 *
 *	ping_main -> ping -> read / write	thread "ping"
 *	pong_main -> pong -> read / write	thread "pong"
 *
 * Ready (wl_ready) once both are named, released (wl_wait_go) before they
 * start; SECONDS count from the release.  At the end it prints the number
 * of round trips to standard output.
 *
 * usage: wl-switchy [SECONDS]	(default 5)
 */
#include "wl.h"

#include <pthread.h>
#include <unistd.h>

static int to_pong[2], to_ping[2];
static double deadline;
static volatile int done;
static pthread_barrier_t named, started;

NOINLINE void ping(void)
{
	char c = 'x';

	if (write(to_pong[1], &c, 1) != 1 || read(to_ping[0], &c, 1) != 1)
		exit(71);
	BARRIER();
}

NOINLINE void pong(void)
{
	char c;

	if (read(to_pong[0], &c, 1) != 1 || write(to_ping[1], &c, 1) != 1)
		exit(71);
	BARRIER();
}

NOINLINE void *ping_main(void *arg)
{
	unsigned long n = 0;

	pthread_setname_np(pthread_self(), "ping");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&started);
	while (wl_now() < deadline) {
		ping();
		n++;
	}
	done = 1;
	/* wakes pong, which sees done; no answer is waited for */
	if (write(to_pong[1], "x", 1) != 1)
		exit(71);
	printf("%lu\n", n);
	return arg;
}

NOINLINE void *pong_main(void *arg)
{
	pthread_setname_np(pthread_self(), "pong");
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&started);
	while (!done)
		pong();
	return arg;
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);
	pthread_t a, b;

	if (pipe(to_pong) || pipe(to_ping))
		return 71;
	pthread_barrier_init(&named, NULL, 3);
	pthread_barrier_init(&started, NULL, 3);
	if (pthread_create(&a, NULL, ping_main, NULL) ||
	    pthread_create(&b, NULL, pong_main, NULL))
		return 71;
	pthread_barrier_wait(&named);
	wl_ready();
	wl_wait_go();
	deadline = wl_now() + seconds;
	pthread_barrier_wait(&started);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
