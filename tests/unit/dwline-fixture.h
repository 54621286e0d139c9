/* SPDX-License-Identifier: MIT */
/* dwline-fixture.h: code from a second file, inlined into the fixture. */
static inline unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	return x ^ (x >> 27);
}
