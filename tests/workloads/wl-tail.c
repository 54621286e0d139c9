/* SPDX-License-Identifier: MIT */
/*
 * wl-tail: stacks deeper than a sample's stack copy, for stack tails.
 *
 * MODE 0, steady (the default):
 *
 *	main -> run -> rec x DEPTH -> leaf
 *
 * leaf spins until the time is up, so every sample has the same stack.
 * Each rec frame holds a 1000-byte local array (1024 bytes a frame at
 * -O2), so DEPTH 122 (the default) makes a stack of about 125 KB: twice
 * the largest copy perf makes of a sample's stack.
 *
 * MODE 1, changing: run builds a new deep stack every 2 ms or so, one of
 *
 *	main -> run -> rec x D -> leaf
 *	main -> run -> alt x D -> alt_leaf		DEPTH * 2/3 <= D <= DEPTH
 *	main -> run -> more				(the clock, between them)
 *
 * with the chain and D drawn from a fixed pseudo-random sequence, so the
 * deep stack a sample saw is gone long before a recorder drains it.  rec
 * and alt frames are laid out alike (the same size, the level counted from
 * run at the same place): at one address the two chains differ only in
 * their return addresses, and a sample's stack copy joined to what the
 * other chain left above it would unwind, wrongly, into a mixed chain.
 * The shallowest stack (about 83 KB) is deeper than the end of any
 * sample's copy, so what lies above that end is always the live chain.
 *
 * usage: wl-tail [SECONDS [DEPTH [MODE]]]	(defaults 5, 122, 0); prints
 * nothing.  Ready (wl_ready) and released (wl_wait_go) right before run.
 */
#include "wl.h"

static double end_time;
static int steady;
/* globals, not arguments: a frame holds nothing but its level */
static volatile int depth_now;
static volatile uint64_t burn_now;

NOINLINE void leaf(void)
{
	do
		wl_burn(burn_now, 0x7a11);
	while (steady && wl_now() < end_time);
}

NOINLINE void rec(int level)
{
	volatile char pad[1000];

	pad[0] = (char)level;
	if (level < depth_now)
		rec(level + 1);
	else
		leaf();
	BARRIER();
	pad[999] = pad[0];
}

NOINLINE void alt_leaf(void)
{
	wl_burn(burn_now, 0xa17);
}

NOINLINE void alt(int level)
{
	volatile char pad[1000];

	pad[0] = (char)level;
	if (level < depth_now)
		alt(level + 1);
	else
		alt_leaf();
	BARRIER();
	pad[999] = pad[0];
}

/* The clock is read here: run's calls are its chains and this alone. */
NOINLINE int more(void)
{
	return wl_now() < end_time;
}

NOINLINE void run(int depth)
{
	uint64_t x = 0x2545f4914f6cdd1dull;
	int lo = depth * 2 / 3;

	if (steady) {
		depth_now = depth;
		burn_now = 100000;
		rec(1);
		BARRIER();
		return;
	}
	burn_now = 2000000;
	do {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		depth_now = lo + (int)(x % (uint64_t)(depth - lo + 1));
		if (x >> 63) {
			rec(1);
			BARRIER();
		} else {
			alt(1);
			BARRIER();
		}
	} while (more());
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);
	int depth = (int)wl_arg(argc, argv, 2, 122, 2000);
	int mode = (int)wl_arg(argc, argv, 3, 0, 1);

	if (depth < 3) {
		fprintf(stderr, "%s: DEPTH must be 3 or more\n", argv[0]);
		return 64;
	}
	steady = mode == 0;
	wl_ready();
	wl_wait_go();
	end_time = wl_now() + seconds;
	run(depth);
	BARRIER();
	return 0;
}
