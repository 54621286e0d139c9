/* SPDX-License-Identifier: MIT */
/*
 * clock.h: the monotonic clock in nanoseconds, the one clock stackpulse
 * stamps its records and measures its waits with (CLOCK_MONOTONIC, as the
 * recorder asks perf_event_open for).
 */
#ifndef SP_CLOCK_H
#define SP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t sp_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC now. */
static inline uint64_t sp_mono_ns(void)
{
	return sp_clock_ns(CLOCK_MONOTONIC);
}

#endif
