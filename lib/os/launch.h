/* SPDX-License-Identifier: MIT */
/*
 * launch.h: start a command suspended, so that a recorder can open its
 * events before the command's first instruction, then let it run.
 *
 * sp_launch_suspended() forks a child that waits, before execvp(3), for a
 * byte on a pipe.  The recorder opens its events on sp_launch_pid() with
 * enable_on_exec (SP_RECORD_ATTACH_ON_EXEC in record/record.h), so the kernel
 * starts sampling at the exec itself: nothing of the waiting child is
 * recorded and nothing of the command is missed.  sp_launch_resume() sends
 * the byte and learns through a close-on-exec pipe whether the exec worked.
 *
 * This is the C form of stackpulse 0.5's SuspendedLaunchedProcess:
 * launch_in_suspended_state is sp_launch_suspended(), unsuspend_and_run is
 * sp_launch_resume(), try_wait is sp_launch_try_wait().  Functions returning
 * int give 0 (or a count) or -errno and never print.
 */
#ifndef SP_LAUNCH_H
#define SP_LAUNCH_H

#include <sys/types.h>

struct sp_launch_opts {
	int stdin_fd;		/* the command's fd 0, 1, 2; -1: inherited */
	int stdout_fd;
	int stderr_fd;
};

/* Fill o with the defaults: every descriptor inherited. */
void sp_launch_opts_init(struct sp_launch_opts *o);

struct sp_launch;

/*
 * Fork a child that will run argv[0] (searched in PATH like execvp(3))
 * with argv and envp (NULL: the caller's environment) in the caller's
 * working directory, and stop it before the exec.  In the child every
 * signal is reset to its default and unblocked, and the descriptors of o
 * are put in place; everything else the caller opened close-on-exec stays
 * out of the command.  o may be NULL.  Returns NULL with errno set.  The
 * caller owns the result: sp_launch_free() it.
 */
struct sp_launch *sp_launch_suspended(char *const argv[], char *const envp[],
				      const struct sp_launch_opts *o);

/* The child's process id. */
pid_t sp_launch_pid(const struct sp_launch *l);

/*
 * Let the child exec the command (once).  Returns 0 when the exec
 * succeeded, or the exec's -errno (-ENOENT: not found, -EACCES: not
 * executable, ...); the child has then exited with 127 or 126 like a
 * shell's, and sp_launch_try_wait() reports that.
 */
int sp_launch_resume(struct sp_launch *l);

/*
 * Reap the child if it has ended, without blocking (block set: wait for
 * it).  Returns 1 and the wait(2) status in *status, 0 while it runs, or
 * -errno.  After 1 it keeps returning 1 and the same status.
 */
int sp_launch_try_wait(struct sp_launch *l, int *status, int block);

/* Send sig to the child unless it was reaped.  Returns 0 or -errno. */
int sp_launch_kill(struct sp_launch *l, int sig);

/*
 * The shell's exit code for a wait(2) status: the exit status, or 128 plus
 * the number of the signal that killed it.
 */
int sp_launch_exit_code(int status);

/*
 * Free l.  A child that was never resumed is killed and reaped; a running
 * one is left alone (and not reaped).  NULL is a no-op.
 */
void sp_launch_free(struct sp_launch *l);

#endif
