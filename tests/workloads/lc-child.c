/* SPDX-License-Identifier: MIT */
/*
 * lc-child: the program that lc-spawn and lc-exec run by exec.
 *
 *	main -> child_main_loop -> child_main_leaf	for SECONDS
 *
 * usage: lc-child [SECONDS]	(default 1); prints nothing
 * Ready (wl_ready) and released (wl_wait_go) before its loop.
 */
#include "wl.h"

NOINLINE void child_main_leaf(uint64_t n)
{
	wl_burn(n, 0xc4117);
}

NOINLINE void child_main_loop(double until)
{
	do {
		child_main_leaf(100000);
		BARRIER();
	} while (wl_now() < until);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 1);

	wl_ready();
	wl_wait_go();
	child_main_loop(wl_now() + seconds);
	BARRIER();
	return 0;
}
