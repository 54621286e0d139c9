/* SPDX-License-Identifier: MIT */
/*
 * cli.h: what the tools' mains share and the library proper never does:
 * print messages under the program's name, die, parse numbers and options,
 * open the streams they read and write with the same checks and words.
 */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* Parse bytes with an optional K, M or G (powers of 1024), as sp_parse_u64(). */
const char *sp_parse_size(const char *s, uint64_t *out);

/*
 * Parse seconds with an optional fraction ("2.5") and unit (s, m or h:
 * "10s", "1.5m") into nanoseconds, > 0.
 */
const char *sp_parse_seconds(const char *s, uint64_t *ns);

/*
 * Parse a duration of 0 or more with an optional fraction and unit (ns,
 * us, ms, s, m or h; seconds without one: "500us", "1.5ms") into
 * nanoseconds.
 */
const char *sp_parse_duration(const char *s, uint64_t *ns);

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

/*
 * After --help or --version: flush standard output, and die when a write
 * to it failed ("cannot write 'stdout': No space left on device").
 * Returns SP_EXIT_OK.
 */
int sp_stdout_done(void);

/*
 * A stage that waits for input while its reader may have gone: a filter
 * whose output is a pipe learns that its reader died only when it writes
 * there, which may be long after (a buffer to fill, or nothing to write
 * before the end); meanwhile the stages before it, up to sp-record, run on
 * for nothing.  These make every wait for input a wait for the reader too.
 *
 * Wait until in_fd has input (or its end, or an error), or until the reader
 * of pipe_fd (a pipe or socket, from sp_out_pipe(); -1: none, return at
 * once) has gone: then end the tool quietly with status 0, as
 * sp_write_failed() does for -EPIPE.  One poll(2), for before a read that
 * may block; a signal ends the wait.
 */
void sp_wait_input(int in_fd, int pipe_fd);

/*
 * Before each read of in that may block: flush out, so that what the tool
 * writes keeps pace with what it reads (an error stays and is seen at the
 * next write), then sp_wait_input() on out.  For one pair per program.
 */
void sp_pace_output(struct sp_in *in, struct sp_out *out);

/*
 * A ^C at a terminal, or the terminal closing, signals every process of
 * the foreground pipeline at once: sp-record then ends its stream, and the
 * stages after it should finish from what it wrote, not die with their
 * output half made.  For a stage that reads another's output, first thing
 * in main: when its standard input is a pipe, FIFO or socket, the first
 * SIGINT or SIGHUP that came from the terminal (si_code SI_KERNEL, sent to
 * the whole group) is let go, and the stage reads on to the end of its
 * input; a second one, or one sent with kill(2) (to this stage alone),
 * ends the stage as the default action does (128 + N).  The signals are
 * blocked in every thread and taken by one thread of their own, so the
 * stage catches none (sp-unwind/nosigmask.c depends on that).
 */
void sp_finish_on_terminal_signals(void);

/*
 * Whether signal sig, described by si, is the first from a terminal to a
 * stage whose standard input is a pipe, FIFO or socket, and so to let go,
 * as above; for a stage with a handler of its own.  Async-signal-safe.
 */
int sp_terminal_signal_deferred(int sig, const siginfo_t *si);

/*
 * While a read of the text input of sp_open_text_input() waits, call
 * fn(arg) each time timeout_ms(arg) milliseconds (-1: no limit, asked
 * again after each call) pass with no input.  Before sp_open_text_input().
 */
void sp_input_idle(int (*timeout_ms)(void *arg), void (*fn)(void *arg),
		   void *arg);

/*
 * Open the text input path ("-": standard input) for stdio.  When output
 * (the path the tool will write, "-": standard output) is a pipe or a
 * socket, every read of the input first waits as sp_wait_input() does;
 * with sp_input_idle(), it calls the idle function while it waits.
 * Returns stdin itself, or a stream to fclose(); NULL with errno set when
 * path cannot be opened.
 */
FILE *sp_open_text_input(const char *path, const char *output);

#endif
