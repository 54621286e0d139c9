/* SPDX-License-Identifier: MIT */
/*
 * wl-fork: a child process born after DELAY seconds.
 *
 *	main -> parent_loop -> parent_leaf	in the parent, the whole run
 *	main -> child_loop -> child_leaf	in the child, from DELAY on
 *
 * The parent waits for the child before it exits.
 *
 * usage: wl-fork [SECONDS [DELAY]]	(defaults 5 and 1); prints nothing
 * Ready (wl_ready) and released (wl_wait_go) before it starts: SECONDS and
 * DELAY count from the release, so the child is born after a recorder that
 * attached before the release.
 */
#include "wl.h"

#include <sys/wait.h>
#include <unistd.h>

NOINLINE void child_leaf(uint64_t n)
{
	wl_burn(n, 0xc41d);
}

NOINLINE void child_loop(double until)
{
	do {
		child_leaf(100000);
		BARRIER();
	} while (wl_now() < until);
}

NOINLINE void parent_leaf(uint64_t n)
{
	wl_burn(n, 0x9a7e);
}

NOINLINE void parent_loop(double until)
{
	do {
		parent_leaf(100000);
		BARRIER();
	} while (wl_now() < until);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);
	double delay = wl_arg_seconds(argc, argv, 2, 1);
	double start, end;
	pid_t pid;

	wl_ready();
	wl_wait_go();
	start = wl_now();
	end = start + seconds;
	parent_loop(start + (delay < seconds ? delay : seconds));
	BARRIER();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "wl-fork: cannot fork\n");
		return 1;
	}
	if (pid == 0) {
		child_loop(end);
		BARRIER();
		_exit(0);
	}
	parent_loop(end);
	BARRIER();
	waitpid(pid, NULL, 0);
	return 0;
}
