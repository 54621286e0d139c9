/* SPDX-License-Identifier: MIT */
/*
 * plt-main: calls wlplt_step of libwlplt.so (plt-lib.c) in a tight loop,
 * through its PLT stub, so that about a quarter of the samples land in the
 * stub itself:
 *
 *	main -> run -> wlplt_step@plt -> wlplt_step	(libwlplt.so)
 *
 * tests/bats/plt.bats builds it -O2 -g -fomit-frame-pointer in the layouts
 * GNU ld makes: lazy binding (the stub in .plt), -z now (.plt, its slot in
 * .got), IBT (-fcf-protection -z ibtplt: the stub in .plt.sec) and with
 * WL_PLT_GOT, wlplt_step's address also taken (the stub in .plt.got).
 *
 * usage: plt-main [SECONDS]	(default 5); prints nothing
 * Ready (wl_ready) and released (wl_wait_go) before run.
 */
#include "wl.h"

uint64_t wlplt_step(uint64_t x);

#ifdef WL_PLT_GOT
/* a GOT entry for wlplt_step: the linker then calls it through .plt.got */
uint64_t (*volatile wlplt_addr)(uint64_t);
#endif

NOINLINE void run(double seconds)
{
	double end = wl_now() + seconds;
	uint64_t x = 1;
	int i;

	do {
		for (i = 0; i < 100000; i++)
			x = wlplt_step(x);
	} while (wl_now() < end);
	wl_sink = x;
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);

#ifdef WL_PLT_GOT
	wlplt_addr = wlplt_step;
#endif
	wl_ready();
	wl_wait_go();
	run(seconds);
	BARRIER();
	return 0;
}
