/* SPDX-License-Identifier: MIT */
/* launch.c: fork a command that waits for a go byte before its exec. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

extern char **environ;

struct sp_launch {
	pid_t pid;
	int go;			/* write end: one byte lets the child exec */
	int report;		/* read end: the exec's errno, or EOF on success */
	int resumed, reaped, status;
};

void sp_launch_opts_init(struct sp_launch_opts *o)
{
	o->stdin_fd = o->stdout_fd = o->stderr_fd = -1;
}

static int write_full(int fd, const void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf = (const char *)buf + n;
		len -= (size_t)n;
	}
	return 0;
}

/* In the child: only async-signal-safe calls until the exec. */
static void __attribute__((noreturn))
child(char *const argv[], char *const envp[], const struct sp_launch_opts *o,
      int go, int report)
{
	struct sigaction sa;
	sigset_t all;
	char c;
	int sig, e;
	ssize_t n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);	/* also undoes SIG_IGN of SIGPIPE */
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if ((o->stdin_fd >= 0 && dup2(o->stdin_fd, 0) < 0) ||
	    (o->stdout_fd >= 0 && dup2(o->stdout_fd, 1) < 0) ||
	    (o->stderr_fd >= 0 && dup2(o->stderr_fd, 2) < 0)) {
		e = errno;
		write_full(report, &e, sizeof(e));
		_exit(126);
	}
	do
		n = read(go, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);	/* the launcher went away without a go */
	execvpe(argv[0], argv, envp);
	e = errno;
	write_full(report, &e, sizeof(e));
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

struct sp_launch *sp_launch_suspended(char *const argv[], char *const envp[],
				      const struct sp_launch_opts *o)
{
	struct sp_launch_opts def;
	struct sp_launch *l;
	int go[2] = { -1, -1 }, report[2] = { -1, -1 };
	int e;

	if (!argv || !argv[0]) {
		errno = EINVAL;
		return NULL;
	}
	if (!o) {
		sp_launch_opts_init(&def);
		o = &def;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC))
		goto err;
	l->pid = fork();
	if (l->pid < 0)
		goto err;
	if (l->pid == 0)
		child(argv, envp ? envp : environ, o, go[0], report[1]);
	close(go[0]);
	close(report[1]);
	l->go = go[1];
	l->report = report[0];
	return l;
err:
	e = errno;
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (report[0] >= 0) {
		close(report[0]);
		close(report[1]);
	}
	free(l);
	errno = e;
	return NULL;
}

pid_t sp_launch_pid(const struct sp_launch *l)
{
	return l->pid;
}

int sp_launch_resume(struct sp_launch *l)
{
	char c = 'g';
	int e = 0;
	ssize_t n;

	if (l->resumed)
		return -EALREADY;
	l->resumed = 1;
	if (write_full(l->go, &c, 1))
		e = -errno;
	close(l->go);
	l->go = -1;
	/* EOF: the exec closed the pipe; four bytes: it failed with errno */
	do
		n = read(l->report, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->report);
	l->report = -1;
	if (n == (ssize_t)sizeof(e))
		return -e;
	return e;	/* 0, or why the go byte was not taken */
}

int sp_launch_try_wait(struct sp_launch *l, int *status, int block)
{
	pid_t p;

	if (!l->reaped) {
		do
			p = waitpid(l->pid, &l->status, block ? 0 : WNOHANG);
		while (p < 0 && errno == EINTR && block);
		if (p < 0)
			return -errno;
		if (p == 0)
			return 0;
		l->reaped = 1;
	}
	if (status)
		*status = l->status;
	return 1;
}

int sp_launch_kill(struct sp_launch *l, int sig)
{
	if (l->reaped)
		return -ESRCH;
	return kill(l->pid, sig) < 0 ? -errno : 0;
}

int sp_launch_exit_code(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + SIGKILL;
}

void sp_launch_free(struct sp_launch *l)
{
	if (!l)
		return;
	if (!l->resumed) {
		kill(l->pid, SIGKILL);
		sp_launch_try_wait(l, NULL, 1);
	}
	if (l->go >= 0)
		close(l->go);
	if (l->report >= 0)
		close(l->report);
	free(l);
}
