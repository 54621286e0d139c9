/* SPDX-License-Identifier: MIT */
/*
 * lc-storm: a storm of short-lived threads, started and joined in waves.
 *
 *	storm_thread -> storm_leaf	COUNT threads, WAVE at a time
 *	main -> storm_main		starts and joins them
 *
 * Prints the number of threads it joined.
 *
 * With WL_GO set (wl.h) it storms in waves until released, ready
 * (wl_ready) after the first wave, and then storms COUNT threads more: a
 * recorder that attached before the release attached in the middle of a
 * storm and sees COUNT threads born and gone.
 *
 * usage: lc-storm [COUNT [WAVE [ROUNDS]]]	(defaults 10000, 4, 200000
 *	multiply-adds per thread)
 */
#include "wl.h"

#include <pthread.h>

static uint64_t rounds;

NOINLINE void storm_leaf(uint64_t n)
{
	wl_burn(n, 0x570a);
}

NOINLINE void *storm_thread(void *arg)
{
	storm_leaf(rounds);
	BARRIER();
	return arg;
}

NOINLINE long storm_main(long count, long wave)
{
	pthread_t t[64];
	long done = 0, i, n;

	while (done < count) {
		n = count - done < wave ? count - done : wave;
		for (i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, storm_thread, NULL))
				return -1;
		for (i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		done += n;
	}
	return done;
}

int main(int argc, char **argv)
{
	long count = (long)wl_arg(argc, argv, 1, 10000, 1e7);
	long wave = (long)wl_arg(argc, argv, 2, 4, 64);
	long done;

	rounds = (uint64_t)wl_arg(argc, argv, 3, 200000, 1e12);
	if (wave < 1)
		wave = 1;
	if (!wl_go_given()) {
		if (storm_main(wave, wave) != wave)
			return 1;
		wl_ready();
		while (!wl_go_given())
			if (storm_main(wave, wave) != wave)
				return 1;
	} else {
		wl_ready();
	}
	done = storm_main(count, wave);
	BARRIER();
	printf("%ld\n", done);
	return done == count ? 0 : 1;
}
