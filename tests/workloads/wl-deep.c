/* SPDX-License-Identifier: MIT */
/*
 * wl-deep: a deep stack with fat frames, for stack-copy limits.
 *
 *	main -> run -> descend x DEPTH -> deep_leaf
 *
 * Each descend frame holds a 128-byte local array (144 bytes a frame at
 * -O2), so the leaf runs about 6 KiB above main for DEPTH 40: a 1024-byte
 * stack copy cannot reach main, a 16 KiB one can.
 *
 * usage: wl-deep [SECONDS [DEPTH]]	(defaults 5 and 40); prints nothing
 * Ready (wl_ready) and released (wl_wait_go) right before run.
 */
#include "wl.h"

NOINLINE void deep_leaf(uint64_t n)
{
	wl_burn(n, 0xdee9);
}

NOINLINE void descend(int depth, uint64_t n)
{
	volatile char pad[128];

	pad[0] = (char)depth;
	if (depth > 0)
		descend(depth - 1, n);
	else
		deep_leaf(n);
	BARRIER();
	pad[127] = pad[0];
}

NOINLINE void run(double seconds, int depth)
{
	double end = wl_now() + seconds;

	do {
		descend(depth, 100000);
		BARRIER();
	} while (wl_now() < end);
}

int main(int argc, char **argv)
{
	int depth = (int)wl_arg(argc, argv, 2, 40, 10000);
	double seconds = wl_arg_seconds(argc, argv, 1, 5);

	wl_ready();
	wl_wait_go();
	run(seconds, depth);
	BARRIER();
	return 0;
}
