/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what the tools' mains share and the library proper never does:
 * print messages under the program's name, die, parse numbers and options,
 * open the streams they read and write with the same checks and words.
 */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "base/io.h"

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
 * getopt_long() (opterr 0, an optstring starting with ':') returned c: '?'
 * for an option it does not take, ':' for one without its value.  Say
 * which, exit 64.
 */
void sp_bad_option(char **argv, int c) __attribute__((noreturn));

/*
 * Parse a decimal number in [min, max].  Returns NULL and sets *out, or a
 * static description ("must be 1..100000") for the caller's message.
 */
const char *sp_parse_u64(const char *s, uint64_t min, uint64_t max,
			 uint64_t *out);

/* Parse seconds with an optional fraction ("2.5") into nanoseconds, > 0. */
const char *sp_parse_seconds(const char *s, uint64_t *ns);

/*
 * The input named name ("-": standard input) was another of stackpulse's
 * streams ("raw", "unwound", "symbolized", "spool") than the kind this
 * tool reads (want, which may also be "folded"): say which, and the stages
 * that get one to the other, and exit 2.  "'stdin' is a raw stream: pipe it
 * into sp-unwind first".
 */
void sp_wrong_stream(const char *name, const char *kind, const char *want)
	__attribute__((noreturn));

/*
 * Open path ("-": standard input) as the binary stream with magic and
 * version, and read its header (at most size bytes) into hdr; die with the
 * one-line error (another stream, damage) when it cannot.
 */
struct sp_in *sp_open_stream(const char *path, const char *magic,
			     uint32_t version, void *hdr, size_t size,
			     size_t min_size);

/*
 * Open path for writing ("-": standard output).  A binary stream (kind:
 * "raw", "unwound") is refused on a terminal, with where it should go
 * instead.  Dies when it cannot be opened.
 */
struct sp_out *sp_open_output(const char *path, const char *kind);

/* The name of an output for messages: "stdout" or the path. */
const char *sp_output_name(const char *path);

/*
 * A write to the output path failed with err: a reader that went away
 * (-EPIPE) ends the tool quietly with status 0, like any filter; anything
 * else is fatal.
 */
void sp_write_failed(const char *path, int err) __attribute__((noreturn));

#endif
