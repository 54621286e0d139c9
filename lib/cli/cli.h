/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what the tools' mains share and the library proper never does:
 * print messages under the program's name, die, parse numbers.
 */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <stdint.h>

/* Exit statuses of every tool. */
#define SP_EXIT_OK	0
#define SP_EXIT_PARTIAL	1	/* done, but something was lost or unresolved */
#define SP_EXIT_FATAL	2
#define SP_EXIT_USAGE	64

extern const char *sp_prog;

void sp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sp_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void sp_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/*
 * Parse a decimal number in [min, max].  Returns NULL and sets *out, or a
 * static description ("must be 1..100000") for the caller's message.
 */
const char *sp_parse_u64(const char *s, uint64_t min, uint64_t max,
			 uint64_t *out);

/* Parse seconds with an optional fraction ("2.5") into nanoseconds, > 0. */
const char *sp_parse_seconds(const char *s, uint64_t *ns);

#endif
