/* SPDX-License-Identifier: MIT */
/*
 * dwline-fixture.c: a little code with inlined functions from two files,
 * compiled into test-dwline once per DWARF version (-gdwarf-N, FIXTURE
 * naming the copy) so that every line table version gcc writes is read.
 */
#include "dwline-fixture.h"

static inline unsigned long twice(unsigned long x)
{
	return mix(x) + mix(x + 1);
}

unsigned long FIXTURE(unsigned long n);

unsigned long FIXTURE(unsigned long n)
{
	unsigned long s = 0, i;

	for (i = 0; i < n; i++)
		s += i & 1 ? twice(s + i) : mix(i);
	return s;
}
