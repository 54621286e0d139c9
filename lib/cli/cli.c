/* SPDX-License-Identifier: MIT */
/* cli.c: messages, exits and number parsing for the tools' mains. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *sp_prog = "stackpulse";

static void vmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", sp_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void sp_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void sp_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(SP_EXIT_FATAL);
}

void sp_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "try '%s --help'\n", sp_prog);
	exit(SP_EXIT_USAGE);
}

const char *sp_parse_u64(const char *s, uint64_t min, uint64_t max,
			 uint64_t *out)
{
	static char msg[64];
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return NULL;
bad:
	snprintf(msg, sizeof(msg), "must be %llu..%llu",
		 (unsigned long long)min, (unsigned long long)max);
	return msg;
}

const char *sp_parse_seconds(const char *s, uint64_t *ns)
{
	double v;
	char *end;

	errno = 0;
	if ((*s < '0' || *s > '9') && *s != '.')
		return "must be a positive number of seconds";
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e7)
		return "must be a positive number of seconds";
	*ns = (uint64_t)(v * 1e9);
	return NULL;
}
