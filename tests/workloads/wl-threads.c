/* SPDX-License-Identifier: MIT */
/*
 * wl-threads: four busy threads, each in its own call chain, while the main
 * thread sleeps in pthread_join:
 *
 *	thread_main_N -> work_N -> spin_N	for N = 1..4
 *
 * Threads are named worker-N.  With 2 CPUs each worker gets about half a CPU.
 * Ready (wl_ready) once all four are named, released (wl_wait_go) before
 * they start their work; SECONDS count from the release.
 *
 * usage: wl-threads [SECONDS]	(default 5); prints nothing
 */
#include "wl.h"

#include <pthread.h>

static double deadline;
static pthread_barrier_t named, started;

#define CHAIN(N)							\
	NOINLINE void spin_##N(uint64_t n)				\
	{								\
		wl_burn(n, N);						\
	}								\
	NOINLINE void work_##N(void)					\
	{								\
		do {							\
			spin_##N(100000);				\
			BARRIER();					\
		} while (wl_now() < deadline);				\
	}								\
	NOINLINE void *thread_main_##N(void *arg)			\
	{								\
		pthread_setname_np(pthread_self(), "worker-" #N);	\
		pthread_barrier_wait(&named);				\
		pthread_barrier_wait(&started);				\
		work_##N();						\
		BARRIER();						\
		return arg;						\
	}

CHAIN(1)
CHAIN(2)
CHAIN(3)
CHAIN(4)

int main(int argc, char **argv)
{
	void *(*const start[4])(void *) = {
		thread_main_1, thread_main_2, thread_main_3, thread_main_4,
	};
	double seconds = wl_arg_seconds(argc, argv, 1, 5);
	pthread_t t[4];
	int i;

	pthread_barrier_init(&named, NULL, 5);
	pthread_barrier_init(&started, NULL, 5);
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, start[i], NULL)) {
			fprintf(stderr, "wl-threads: cannot create thread\n");
			return 1;
		}
	pthread_barrier_wait(&named);
	wl_ready();
	wl_wait_go();
	deadline = wl_now() + seconds;
	pthread_barrier_wait(&started);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
