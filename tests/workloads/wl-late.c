/* SPDX-License-Identifier: MIT */
/*
 * wl-late: a thread born after the recorder attached.
 *
 *	main -> main_loop -> main_leaf		the whole run
 *	late_worker -> late_leaf		from DELAY seconds on
 *
 * The late thread is named "late".
 *
 * usage: wl-late [SECONDS [DELAY]]	(defaults 5 and 1); prints nothing
 * Ready (wl_ready) and released (wl_wait_go) before it starts: SECONDS and
 * DELAY count from the release, so the late thread is born after a
 * recorder that attached before the release.
 */
#include "wl.h"

#include <pthread.h>

static double deadline;

NOINLINE void late_leaf(uint64_t n)
{
	wl_burn(n, 0x1a7e);
}

NOINLINE void *late_worker(void *arg)
{
	pthread_setname_np(pthread_self(), "late");
	do {
		late_leaf(100000);
		BARRIER();
	} while (wl_now() < deadline);
	return arg;
}

NOINLINE void main_leaf(uint64_t n)
{
	wl_burn(n, 0x3a1);
}

/* Spin until the clock reaches until. */
NOINLINE void main_loop(double until)
{
	do {
		main_leaf(100000);
		BARRIER();
	} while (wl_now() < until);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);
	double delay = wl_arg_seconds(argc, argv, 2, 1);
	double start;
	pthread_t t;

	wl_ready();
	wl_wait_go();
	start = wl_now();
	deadline = start + seconds;
	main_loop(start + (delay < seconds ? delay : seconds));
	BARRIER();
	if (pthread_create(&t, NULL, late_worker, NULL)) {
		fprintf(stderr, "wl-late: cannot create thread\n");
		return 1;
	}
	main_loop(deadline);
	BARRIER();
	pthread_join(t, NULL);
	return 0;
}
