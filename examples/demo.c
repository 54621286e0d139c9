/* SPDX-License-Identifier: MIT */
/*
 * demo: a small CPU-bound program with a known shape to profile, built
 * -O2 -fomit-frame-pointer so that only DWARF unwinding finds its callers.
 *
 *	main -> serve -> parse_request -> tokenize	about 20%
 *	main -> serve -> handle -> compress		about 50%
 *	main -> serve -> handle -> checksum		about 20%
 *	main -> serve -> log_line			about 10%
 *
 * usage: demo [SECONDS]	(default 10); prints nothing
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile uint64_t sink;

static inline void burn(uint64_t n, uint64_t salt)
{
	uint64_t x = sink + salt;

	while (n--) {
		x = x * 6364136223846793005ull + salt;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

NOINLINE void tokenize(void) { burn(200000, 1); }
NOINLINE void compress(void) { burn(500000, 2); }
NOINLINE void checksum(void) { burn(200000, 3); }
NOINLINE void log_line(void) { burn(100000, 4); }

NOINLINE void parse_request(void)
{
	tokenize();
	BARRIER();
}

NOINLINE void handle(void)
{
	compress();
	BARRIER();
	checksum();
	BARRIER();
}

NOINLINE void serve(double seconds)
{
	struct timespec ts;
	double now, end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + seconds;
	do {
		parse_request();
		BARRIER();
		handle();
		BARRIER();
		log_line();
		BARRIER();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	} while (now < end);
}

int main(int argc, char **argv)
{
	serve(argc > 1 ? atof(argv[1]) : 10);
	BARRIER();
	return 0;
}
