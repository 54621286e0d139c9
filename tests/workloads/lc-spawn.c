/* SPDX-License-Identifier: MIT */
/*
 * lc-spawn: a parent that forks and execs a child program after DELAY.
 *
 *	main -> spawn_parent_loop -> spawn_parent_leaf	in the parent, all along
 *	the child: execv(PROGRAM, PROGRAM ARGS...)
 *
 * The parent waits for the child and exits with its status.
 *
 * usage: lc-spawn SECONDS DELAY PROGRAM [ARGS...]
 * Ready (wl_ready) and released (wl_wait_go) before it starts.
 */
#include "wl.h"

#include <sys/wait.h>
#include <unistd.h>

NOINLINE void spawn_parent_leaf(uint64_t n)
{
	wl_burn(n, 0x5a3e);
}

NOINLINE void spawn_parent_loop(double until)
{
	do {
		spawn_parent_leaf(100000);
		BARRIER();
	} while (wl_now() < until);
}

int main(int argc, char **argv)
{
	double start, end, delay;
	int st = 0;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: lc-spawn SECONDS DELAY PROGRAM [ARGS...]\n");
		return 64;
	}
	end = wl_arg_seconds(argc, argv, 1, 2);
	delay = wl_arg_seconds(argc, argv, 2, 0.5);
	wl_ready();
	wl_wait_go();
	start = wl_now();
	end += start;
	spawn_parent_loop(start + delay);
	BARRIER();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[3], argv + 3);
		_exit(127);
	}
	spawn_parent_loop(end);
	BARRIER();
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
