/* SPDX-License-Identifier: MIT */
/* test-launch.c: unit tests of launch.c (suspended start, resume, exec errors, statuses). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/launch.h"
#include "os/procfs.h"
#include "unit.h"

static void test_suspended_then_run(void)
{
	char *argv[] = { "sh", "-c", "exit $SP_T", NULL };
	char *envp[] = { "SP_T=7", "PATH=/usr/bin:/bin", NULL };
	struct sp_launch *l = sp_launch_suspended(argv, envp, NULL);
	char comm[16];
	int st = -1;

	CHECK(l != NULL);
	if (!l)
		return;
	/* still our program, waiting for the go byte */
	CHECK(sp_launch_try_wait(l, &st, 0) == 0);
	CHECK(sp_procfs_comm(sp_launch_pid(l), sp_launch_pid(l), comm) == 0);
	CHECK(strcmp(comm, "sh") != 0);
	CHECK(sp_launch_resume(l) == 0);
	CHECK(sp_launch_resume(l) == -EALREADY);
	CHECK(sp_launch_try_wait(l, &st, 1) == 1);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	CHECK(sp_launch_exit_code(st) == 7);
	CHECK(sp_launch_try_wait(l, &st, 0) == 1);	/* stays reaped */
	CHECK(sp_launch_kill(l, SIGTERM) == -ESRCH);
	sp_launch_free(l);
}

static void test_exec_errors(void)
{
	char *nf[] = { "sp-test-no-such-command", NULL };
	char path[] = "/tmp/sp-test-launch-XXXXXX";
	char *nx[] = { path, NULL };
	struct sp_launch *l;
	int st, fd;

	fd = mkstemp(path);	/* mode 0600: not executable */
	CHECK(fd >= 0);
	close(fd);

	l = sp_launch_suspended(nf, NULL, NULL);
	CHECK(l && sp_launch_resume(l) == -ENOENT);
	CHECK(l && sp_launch_try_wait(l, &st, 1) == 1 && sp_launch_exit_code(st) == 127);
	sp_launch_free(l);
	l = sp_launch_suspended(nx, NULL, NULL);
	CHECK(l && sp_launch_resume(l) == -EACCES);
	CHECK(l && sp_launch_try_wait(l, &st, 1) == 1 && sp_launch_exit_code(st) == 126);
	sp_launch_free(l);
	unlink(path);
}

static void test_killed_and_never_resumed(void)
{
	char *argv[] = { "sleep", "10", NULL };
	struct sp_launch *l = sp_launch_suspended(argv, NULL, NULL);
	int st;

	CHECK(l && sp_launch_resume(l) == 0);
	CHECK(l && sp_launch_kill(l, SIGSEGV) == 0);
	CHECK(l && sp_launch_try_wait(l, &st, 1) == 1);
	CHECK(l && sp_launch_exit_code(st) == 128 + SIGSEGV);
	sp_launch_free(l);
	/* freed before resuming: killed and reaped, no zombie left */
	l = sp_launch_suspended(argv, NULL, NULL);
	CHECK(l != NULL);
	if (l) {
		pid_t pid = sp_launch_pid(l);

		sp_launch_free(l);
		CHECK(kill(pid, 0) < 0 && errno == ESRCH);
	}
	CHECK(sp_launch_suspended((char *[]){ NULL }, NULL, NULL) == NULL);
	sp_launch_free(NULL);
}

int main(void)
{
	test_suspended_then_run();
	test_exec_errors();
	test_killed_and_never_resumed();
	return unit_done("test-launch");
}
