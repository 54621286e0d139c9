/* SPDX-License-Identifier: MIT */
/*
 * plt-lib: libwlplt.so, the library plt-main calls through its PLT: one
 * function of a few instructions, so that the stub in front of it holds a
 * good share of the time of a loop of calls.
 */
#include <stdint.h>

uint64_t wlplt_step(uint64_t x);

uint64_t wlplt_step(uint64_t x)
{
	return x * 6364136223846793005ull + 1442695040888963407ull;
}
