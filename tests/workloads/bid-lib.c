/* SPDX-License-Identifier: MIT */
/*
 * bid-lib: libwlv.so, the shared library bid-main works in
 * (tests/bats/buildid.bats), with a known call chain:
 *
 *	wlv_run -> wlv_outer -> wlv_leaf
 *
 * Built twice: as is, and with -DWLV_VARIANT=2, which puts other code
 * before the chain (other addresses, other CFI, another build-id) under
 * the same names, so that a frame named or unwound with the wrong build
 * would look plausible.
 */
#include "wl.h"

#ifndef WLV_VARIANT
#define WLV_VARIANT 1
#endif

#if WLV_VARIANT == 2
/* never called: it only moves the chain to other addresses */
NOINLINE void wlv_spacer(uint64_t n)
{
	uint64_t a = n, b = n ^ 0x5a5a, c = n + 77;

	while (n--) {
		a = a * 31 + b;
		b = b * 17 + c;
		c = c * 13 + a;
		__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c));
	}
	wl_sink = a + b + c;
}
#endif

NOINLINE void wlv_leaf(uint64_t n)
{
	wl_burn(n, 0x1e5 + WLV_VARIANT);
}

NOINLINE void wlv_outer(uint64_t n)
{
	wlv_leaf(n);
	BARRIER();
}

/* Run the chain until the clock (wl.h) reaches until. */
NOINLINE void wlv_run(double until)
{
	do {
		wlv_outer(100000);
		BARRIER();
	} while (wl_now() < until);
}
