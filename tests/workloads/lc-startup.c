/* SPDX-License-Identifier: MIT */
/*
 * lc-startup: a program whose only work is 50 ms of start-up, then it exits.
 *
 *	main -> startup_hot -> startup_leaf	the first 50 ms (or MS)
 *
 * usage: lc-startup [MS]	(default 50); prints nothing
 * (MS of CPU time with WL_CLOCK=cpu, see wl.h)
 */
#include "wl.h"

NOINLINE void startup_leaf(uint64_t n)
{
	wl_burn(n, 0x57a7);
}

NOINLINE void startup_hot(double until)
{
	do {
		startup_leaf(20000);
		BARRIER();
	} while (wl_now() < until);
}

int main(int argc, char **argv)
{
	double ms = wl_arg(argc, argv, 1, 50, 60000);

	startup_hot(wl_now() + ms / 1000);
	BARRIER();
	return 0;
}
