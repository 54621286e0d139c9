/* SPDX-License-Identifier: MIT */
/*
 * wl-single: one thread with a designed call structure, for share tests.
 *
 *	main -> run -> outer_a -> middle_a -> leaf_a	60% of the work
 *	main -> run -> outer_b -> leaf_b		30%
 *	main -> run -> leaf_c				10%
 *
 * The shares come from iteration counts, not from time checks: each round
 * runs leaf_a for 6 units, leaf_b for 3 and leaf_c for 1 unit of the same
 * loop, so they hold whatever the CPU speed.  A round lasts about a
 * millisecond; run checks the clock once per round (well under 1% of the
 * time).  tests/bats/common.bash holds the same numbers as WL_SINGLE_SHARE_*.
 *
 * usage: wl-single [SECONDS]	(default 5); prints nothing
 * Ready (wl_ready) and released (wl_wait_go) right before run.
 */
#include "wl.h"

#define UNIT 100000ull

NOINLINE void leaf_a(uint64_t n)
{
	wl_burn(n, 0xa1);
}

NOINLINE void middle_a(uint64_t n)
{
	leaf_a(n);
	BARRIER();
}

NOINLINE void outer_a(uint64_t n)
{
	middle_a(n);
	BARRIER();
}

NOINLINE void leaf_b(uint64_t n)
{
	wl_burn(n, 0xb2);
}

NOINLINE void outer_b(uint64_t n)
{
	leaf_b(n);
	BARRIER();
}

NOINLINE void leaf_c(uint64_t n)
{
	wl_burn(n, 0xc3);
}

NOINLINE void run(double seconds)
{
	double end = wl_now() + seconds;

	do {
		outer_a(6 * UNIT);
		BARRIER();
		outer_b(3 * UNIT);
		BARRIER();
		leaf_c(1 * UNIT);
		BARRIER();
	} while (wl_now() < end);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);

	wl_ready();
	wl_wait_go();
	run(seconds);
	BARRIER();
	return 0;
}
