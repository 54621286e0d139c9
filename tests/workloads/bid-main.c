/* SPDX-License-Identifier: MIT */
/*
 * bid-main: a program whose work is in a shared library (bid-lib.c,
 * libwlv.so), which it can delete or replace on disk while it maps it,
 * for the tests of files that are not at their paths later
 * (tests/bats/buildid.bats).
 *
 *	main -> drive -> wlv_run -> wlv_outer -> wlv_leaf
 *
 * the last three in libwlv.so.  Built twice: with -DWLV_LINKED, linked
 * against libwlv.so (found through its rpath); without, it dlopen()s LIB
 * after the release, so the kernel reports the mapping while recording.
 *
 * usage: bid-linked SECONDS [delete PATH | replace PATH NEW]
 *        bid-dlopen LIB SECONDS [delete PATH | replace PATH NEW]
 *
 * Ready (wl_ready) and released (wl_wait_go) before the work, SECONDS of
 * it (CPU time with WL_CLOCK=cpu); halfway through, delete unlinks PATH
 * and replace renames NEW over PATH.  Then, when $WL_STOP names a file, it
 * waits (idle) until that file exists, so that a recorder can copy what it
 * maps before it exits.  Prints nothing; exits 1 when an action fails.
 */
#include "wl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef WLV_LINKED
void wlv_run(double until);
#else
static void (*wlv_run)(double until);
#endif

NOINLINE void drive(double until)
{
	wlv_run(until);
	BARRIER();
}

/* Wait, idle, for the file $WL_STOP names; nothing when it is not set. */
static void wait_stop(void)
{
	const char *path = getenv("WL_STOP");
	struct timespec ms = { 0, 1000000 };
	long n;

	for (n = 0; path && *path && access(path, F_OK); n++) {
		if (n == 600000) {
			fprintf(stderr, "%s: not created in 10 minutes\n", path);
			exit(75);
		}
		nanosleep(&ms, NULL);
	}
}

static int act(int argc, char **argv, int i)
{
	if (argc <= i)
		return 0;
	if (!strcmp(argv[i], "delete") && argc == i + 2) {
		if (!unlink(argv[i + 1]))
			return 0;
	} else if (!strcmp(argv[i], "replace") && argc == i + 3) {
		if (!rename(argv[i + 2], argv[i + 1]))
			return 0;
	} else {
		fprintf(stderr, "%s: unknown action\n", argv[0]);
		exit(64);
	}
	perror(argv[i + 1]);
	return 1;
}

int main(int argc, char **argv)
{
	int a = 1, bad;
	double seconds, half;

#ifndef WLV_LINKED
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIB SECONDS [ACTION ...]\n", argv[0]);
		return 64;
	}
	a = 2;
#endif
	seconds = wl_arg_seconds(argc, argv, a, 2);
	wl_ready();
	wl_wait_go();
#ifndef WLV_LINKED
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib || !(*(void **)&wlv_run = dlsym(lib, "wlv_run"))) {
		fprintf(stderr, "%s: %s\n", argv[1], dlerror());
		return 1;
	}
#endif
	half = wl_now() + seconds / 2;
	drive(half);
	BARRIER();
	bad = act(argc, argv, a + 1);
	drive(half + seconds / 2);
	BARRIER();
	wait_stop();
	return bad;
}
