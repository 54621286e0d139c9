/* SPDX-License-Identifier: MIT */
/* unit.h: the smallest test harness: CHECK() counts, unit_done() reports. */
#ifndef SP_UNIT_H
#define SP_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_pass, unit_fail;

#define CHECK(cond) do { \
	if (cond) { \
		unit_pass++; \
	} else { \
		unit_fail++; \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
			__LINE__, #cond); \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (a_ && b_ && !strcmp(a_, b_)) { \
		unit_pass++; \
	} else { \
		unit_fail++; \
		fprintf(stderr, "%s:%d: '%s' != '%s'\n", __FILE__, __LINE__, \
			a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} \
} while (0)

/* xorshift64: numbers that look random and are the same on every run. */
static inline unsigned long long unit_rand(void)
{
	static unsigned long long x = 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* Print "NAME: N passed, N failed" and return the exit status. */
static inline int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_pass, unit_fail);
	return unit_fail ? 1 : 0;
}

#endif
