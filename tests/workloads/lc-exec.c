/* SPDX-License-Identifier: MIT */
/*
 * lc-exec: runs, then replaces itself with another program.
 *
 *	main -> before_exec_loop -> before_exec_leaf	for SECONDS
 *	then execv(PROGRAM, PROGRAM ARGS...)
 *
 * usage: lc-exec SECONDS PROGRAM [ARGS...]
 * Ready (wl_ready) and released (wl_wait_go) before its loop: the exec
 * comes SECONDS after the release.
 */
#include "wl.h"

#include <unistd.h>

NOINLINE void before_exec_leaf(uint64_t n)
{
	wl_burn(n, 0xbef0);
}

NOINLINE void before_exec_loop(double until)
{
	do {
		before_exec_leaf(100000);
		BARRIER();
	} while (wl_now() < until);
}

int main(int argc, char **argv)
{
	double seconds;

	if (argc < 3) {
		fprintf(stderr, "usage: lc-exec SECONDS PROGRAM [ARGS...]\n");
		return 64;
	}
	seconds = wl_arg_seconds(argc, argv, 1, 1);
	wl_ready();
	wl_wait_go();
	before_exec_loop(wl_now() + seconds);
	BARRIER();
	execv(argv[2], argv + 2);
	perror("lc-exec: execv");
	return 127;
}
