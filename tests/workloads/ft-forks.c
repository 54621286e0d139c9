/* SPDX-License-Identifier: MIT */
/*
 * ft-forks: a storm of short-lived processes, forked and exec'd in waves.
 *
 *	main -> forks_main		forks COUNT children, WAVE at a time
 *	child: exec of itself as "ft-forks -c ROUNDS":
 *		main -> forked_leaf	ROUNDS multiply-adds, then exit 0
 *
 * Prints the number of children that exited 0.
 *
 * With WL_GO set (wl.h) it storms in waves until released, ready
 * (wl_ready) after the first wave, and then forks COUNT children more: a
 * recorder that attached before the release attached in the middle of a
 * storm and sees COUNT processes born, exec'd and gone.
 *
 * usage: ft-forks [COUNT [WAVE [ROUNDS]]]	(defaults 1000, 4, 200000
 *	multiply-adds per child)
 */
#include "wl.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *self;
static char rounds[32];

NOINLINE void forked_leaf(uint64_t n)
{
	wl_burn(n, 0xf0f0);
}

/* One wave: n children; returns how many exited 0. */
NOINLINE long forks_main(long n)
{
	pid_t kids[64];
	long i, ok = 0;
	int st;

	for (i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			return -1;
		if (kids[i] == 0) {
			execl(self, "ft-forks", "-c", rounds, (char *)NULL);
			_exit(127);
		}
	}
	for (i = 0; i < n; i++)
		if (waitpid(kids[i], &st, 0) == kids[i] && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			ok++;
	return ok;
}

static long storm(long count, long wave)
{
	long done = 0, ok = 0, n, k;

	while (done < count) {
		n = count - done < wave ? count - done : wave;
		k = forks_main(n);
		if (k < 0)
			return -1;
		ok += k;
		done += n;
	}
	return ok;
}

int main(int argc, char **argv)
{
	long count, wave, ok;

	if (argc == 3 && !strcmp(argv[1], "-c")) {
		forked_leaf(strtoull(argv[2], NULL, 10));
		BARRIER();
		return 0;
	}
	count = (long)wl_arg(argc, argv, 1, 1000, 1e7);
	wave = (long)wl_arg(argc, argv, 2, 4, 64);
	snprintf(rounds, sizeof(rounds), "%llu",
		 (unsigned long long)wl_arg(argc, argv, 3, 200000, 1e12));
	self = realpath("/proc/self/exe", NULL);
	if (!self)
		return 1;
	if (wave < 1)
		wave = 1;
	if (!wl_go_given()) {
		if (storm(wave, wave) != wave)
			return 1;
		wl_ready();
		while (!wl_go_given())
			if (storm(wave, wave) != wave)
				return 1;
	} else {
		wl_ready();
	}
	ok = storm(count, wave);
	BARRIER();
	printf("%ld\n", ok);
	free(self);
	return ok == count ? 0 : 1;
}
