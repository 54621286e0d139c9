/* SPDX-License-Identifier: MIT */
/* cli.c: messages, exits, options, numbers and streams for the tools' mains. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
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

void sp_bad_option(char **argv, int c)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		sp_usage_error("option '%s' needs a value", arg);
	if (optopt)
		sp_usage_error("unknown option '-%c'", optopt);
	sp_usage_error("unknown option '%s'", arg);
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

/* Streams ----------------------------------------------------------------- */

/* The pipeline, in order; a spool holds an unwound stream. */
static const struct {
	const char *kind;
	const char *noun;	/* with its article */
	const char *writer;	/* the stage that writes it */
	const char *reader;	/* the stage that reads it */
} stages[] = {
	{ "raw", "a raw stream", "sp-record", "sp-unwind" },
	{ "unwound", "an unwound stream", "sp-unwind", "sp-symbolize" },
	{ "symbolized", "a symbolized stream", "sp-symbolize", "sp-fold" },
	{ "folded", "folded stacks", "sp-fold", "sp-flame" },
};

static int stage_of(const char *kind)
{
	int i;

	for (i = 0; i < (int)(sizeof(stages) / sizeof(stages[0])); i++)
		if (!strcmp(kind, stages[i].kind))
			return i;
	return -1;
}

/* "sp-unwind", "sp-unwind and sp-symbolize", "a, b and c": the readers of
 * stages from..to-1 */
static const char *readers(char *buf, size_t size, int from, int to)
{
	size_t n = 0;
	int i;

	buf[0] = 0;
	for (i = from; i < to; i++)
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s",
				      i == from ? "" : i + 1 == to ? " and " : ", ",
				      stages[i].reader);
	return buf;
}

void sp_wrong_stream(const char *name, const char *kind, const char *want)
{
	int have = stage_of(kind), need = stage_of(want);
	char list[128];

	if (!strcmp(kind, "spool")) {
		if (need >= 2)
			sp_die("'%s' is a spool file: read it back with 'sp-spool cat' and pipe it into %s",
			       name, readers(list, sizeof(list), 1, need));
		sp_die("'%s' is a spool file: read it back with 'sp-spool cat'",
		       name);
	}
	if (have < 0 || need < 0)
		sp_die("'%s' is %s stream, not %s", name, kind, want);
	if (have > need)
		sp_die("'%s' is %s: pipe it into %s", name, stages[have].noun,
		       stages[have].reader);
	sp_die("'%s' is %s: pipe it into %s first", name, stages[have].noun,
	       readers(list, sizeof(list), have, need));
}

struct sp_in *sp_open_stream(const char *path, const char *magic,
			     uint32_t version, void *hdr, size_t size,
			     size_t min_size)
{
	struct sp_in *in = sp_in_open(path);
	const char *kind;
	char msg[SP_ERR_MAX];
	int r;

	if (!in)
		sp_die("cannot open '%s': %s", path, strerror(errno));
	r = sp_in_header(in, magic, version, hdr, min_size, size);
	if (!r)
		return in;
	/* nothing is left allocated when a tool dies */
	kind = r == SP_IN_OTHER ? sp_in_kind(in) : NULL;
	snprintf(msg, sizeof(msg), "%s", kind ? sp_in_name(in) : sp_in_error(in));
	sp_in_close(in);
	if (kind)
		sp_wrong_stream(msg, kind, sp_stream_kind(magic));
	sp_die("%s", msg);
}

const char *sp_output_name(const char *path)
{
	return strcmp(path, "-") ? path : "stdout";
}

struct sp_out *sp_open_output(const char *path, const char *kind)
{
	struct sp_out *out = sp_out_open(path, kind != NULL);
	int i;

	if (out)
		return out;
	if (errno == ENOTTY && (i = stage_of(kind)) >= 0)
		sp_die("refusing to write the %s stream to a terminal: redirect it or pipe it into %s",
		       kind, stages[i].reader);
	if (errno == ENOTTY)
		sp_die("refusing to write %s to a terminal: give -o FILE or redirect it",
		       kind);
	sp_die("cannot open '%s': %s", sp_output_name(path), strerror(errno));
}

void sp_write_failed(const char *path, int err)
{
	if (err == -EPIPE)
		exit(SP_EXIT_OK);	/* the reader is gone: stop quietly */
	if (err == -ENOMEM)
		sp_die("out of memory");
	sp_die("cannot write '%s': %s", sp_output_name(path), strerror(-err));
}
