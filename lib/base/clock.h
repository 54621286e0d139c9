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

/*
 * The CLOCK_REALTIME nanoseconds of the CLOCK_MONOTONIC instant mono (a
 * recent one): the two clocks are read back to back a few times and the
 * pair read closest together gives their offset, to within that gap (well
 * under a microsecond; a realtime step between the instant and now is not
 * undone).
 */
static inline uint64_t sp_realtime_of(uint64_t mono)
{
	uint64_t best = UINT64_MAX, offset = 0, a, rt, b;
	int i;

	for (i = 0; i < 4; i++) {
		a = sp_mono_ns();
		rt = sp_clock_ns(CLOCK_REALTIME);
		b = sp_mono_ns();
		if (b - a < best) {
			best = b - a;
			offset = rt - (a + (b - a) / 2);
		}
	}
	return mono + offset;
}

#endif
