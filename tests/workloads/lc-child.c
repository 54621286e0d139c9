/* SPDX-License-Identifier: MIT */
/*
 * lc-child: the program that lc-spawn and lc-exec run by exec.
 *
 *	main -> child_main_loop -> child_main_leaf	for SECONDS
 *
 * usage: lc-child [SECONDS]	(default 1); prints nothing
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
	child_main_loop(wl_now() + wl_arg_seconds(argc, argv, 1, 1));
	BARRIER();
	return 0;
}
