/* SPDX-License-Identifier: MIT */
/*
 * lc-many: a process with many idle threads, and one busy one.
 *
 *	main -> many_busy_loop -> many_busy_leaf	for SECONDS
 *	COUNT other threads blocked in a condition wait
 *
 * Writes "ready" to stdout, and creates $WL_READY (wl_ready), once every
 * thread has started.
 *
 * usage: lc-many [COUNT [SECONDS]]	(defaults 1000 and 5)
 */
#include "wl.h"

#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int quit;

NOINLINE void many_busy_leaf(uint64_t n)
{
	wl_burn(n, 0x3a1f);
}

NOINLINE void many_busy_loop(double until)
{
	do {
		many_busy_leaf(100000);
		BARRIER();
	} while (wl_now() < until);
}

static void *idle(void *arg)
{
	pthread_mutex_lock(&lock);
	while (!quit)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return arg;
}

int main(int argc, char **argv)
{
	long count = (long)wl_arg(argc, argv, 1, 1000, 100000), i;
	double seconds = wl_arg_seconds(argc, argv, 2, 5);
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < count; i++)
		if (pthread_create(&t, &a, idle, NULL))
			return 1;
	printf("ready\n");
	fflush(stdout);
	wl_ready();
	many_busy_loop(wl_now() + seconds);
	BARRIER();
	return 0;
}
