/* SPDX-License-Identifier: MIT */
/*
 * sym-inline: inline chains for the symbolizer, built with -O2 -g.
 *
 *	main -> run -> outer_inl -> mid_inl -> leaf_inl	(the last three inlined)
 *
 * outer_inl is always_inline, mid_inl and leaf_inl are static inline small
 * enough that GCC inlines them at -O2.  Lines the tests look for carry a
 * marker comment "LINE:name" so they can be found with grep -n.
 *
 * usage: sym-inline [SECONDS]	(default 5); prints nothing
 * Ready (wl_ready) and released (wl_wait_go) before run.
 */
#include "wl.h"

static inline uint64_t leaf_inl(uint64_t x, uint64_t n)
{
	while (n--) {	/* LINE:leafloop */
		x = x * 6364136223846793005ull + 1442695040888963407ull; /* LINE:leaf */
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static inline uint64_t mid_inl(uint64_t x, uint64_t n)
{
	x = leaf_inl(x, n); /* LINE:mid */
	return x ^ (x >> 7);
}

static inline __attribute__((always_inline)) uint64_t outer_inl(uint64_t x,
								uint64_t n)
{
	x = mid_inl(x, n); /* LINE:outer */
	return x + 3;
}

NOINLINE void run(double end)
{
	uint64_t x = wl_sink;

	do {
		x = outer_inl(x, 200000); /* LINE:run */
		BARRIER();
	} while (wl_now() < end);
	wl_sink = x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;

	wl_ready();
	wl_wait_go();
	run(wl_now() + secs);
	BARRIER();
	return 0;
}
