// SPDX-License-Identifier: MIT
/*
 * rusage: run a command and write what wait4(2) says it cost.
 *
 * usage: rusage OUTFILE COMMAND [ARG...]
 *
 * Writes "USER_US SYS_US MAXRSS_KB STATUS" to OUTFILE once COMMAND has
 * ended, and exits with its status.  The bench starts every measured
 * command through this so that the figures are the command's own: its
 * CPU without the starter's (python's fork and exec, a shell, GNU time),
 * and its peak RSS from a process forked by this small one rather than
 * by the bench's python, whose memory a forked child would count until
 * its exec.  Like GNU time, but at microsecond resolution.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct rusage ru;
	FILE *out;
	pid_t pid;
	int st;

	if (argc < 3) {
		fprintf(stderr, "usage: rusage OUTFILE COMMAND [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage: %s: cannot run it\n", argv[2]);
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("rusage: wait4");
			return 2;
		}
	}
	out = fopen(argv[1], "w");
	if (out == NULL) {
		perror(argv[1]);
		return 2;
	}
	fprintf(out, "%lld %lld %ld %d\n",
	    (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
	    (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
	    ru.ru_maxrss, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	if (fclose(out) != 0) {
		perror(argv[1]);
		return 2;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
