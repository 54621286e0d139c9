/* SPDX-License-Identifier: MIT */
/*
 * folded.h: reading folded stacks, the text that sp-fold writes and that
 * flamegraph.pl and its stackcollapse scripts made the common currency of
 * flame graphs:
 *
 *	main;parse;memcpy 1234
 *	main;parse;memcpy 100 120	(differential: BEFORE AFTER)
 *
 * One line per stack, frames from the root to the leaf separated by ';',
 * then whitespace and a count; a second count makes the line differential,
 * as difffolded.pl writes it.  Any tool's output is welcome, so the grammar
 * is flamegraph.pl's (docs/formats.md):
 *
 *	line   = stack 1*WSP count [1*WSP count] [CR] LF
 *	stack  = frame *(";" frame)
 *	frame  = 1*(any byte but ";", NUL and LF)
 *	count  = 1*DIGIT ["." *DIGIT]
 *
 * The counts are the whitespace-separated numbers at the end of the line:
 * everything before them, trailing whitespace removed, is the stack, so a
 * frame may itself hold spaces.  Whether an input has one or two counts is
 * decided by its first line (a frame named "x 12" at the end of a one-count
 * input stays a name); a later line with fewer counts is an error.
 *
 * Skipped as flamegraph.pl skips them, without a word: blank lines (only
 * whitespace) and comment lines, whose first byte is '#'.  Refused, with
 * the line number: a line without a count, a count that is no number or is
 * above 2^53 - 1, an empty stack or frame (";;", a ';' at either end), a NUL
 * byte, a line over SP_FOLDED_LINE_MAX bytes, a last line cut before its
 * count.  A stackpulse stream given by mistake (binary, or the symbolized
 * text) is recognised by its first bytes, so the tool can say what to run.
 *
 * Lines are read one at a time into one buffer: memory does not grow with
 * the input.
 */
#ifndef SP_FOLDED_H
#define SP_FOLDED_H

#include <stddef.h>
#include <stdio.h>

#define SP_FOLDED_LINE_MAX (16u << 20)	/* longest line a reader accepts */
#define SP_FOLDED_COUNT_MAX 9007199254740991.0	/* 2^53 - 1: exact in a double */
#define SP_FOLDED_DECIMALS_MAX 6	/* fraction digits worth keeping */

struct sp_folded_line {
	char *stack;		/* NUL-terminated, frames separated by ';' */
	size_t len;		/* strlen(stack) */
	unsigned columns;	/* 1, or 2 for a differential line */
	double count[2];	/* count[0]; count[1] too when columns is 2 */
	unsigned decimals;	/* most fraction digits of the counts, capped
				   at SP_FOLDED_DECIMALS_MAX */
};

/*
 * Parse one line (without its newline, len bytes, NUL-terminated).  columns
 * is what the input has: 1 or 2, or 0 while not known (then 2 when the line
 * ends in two numbers after a stack).  A line that ends in more numbers than
 * columns keeps the extra ones in its stack, as names.  Returns NULL with *l
 * set and the line cut in place (the NUL after the stack), SP_FOLDED_SKIP
 * for a blank or comment line, or a static description of what is wrong
 * ("the count is not a number"); then line and *l are untouched.
 */
const char *sp_folded_parse(char *line, size_t len, unsigned columns,
			    struct sp_folded_line *l);

/* What sp_folded_parse() returns for a line that is skipped. */
extern const char sp_folded_skip[];
#define SP_FOLDED_SKIP sp_folded_skip

struct sp_folded_reader;

/*
 * Read folded stacks from fp (not owned: the caller closes it); name
 * ("stdin" or the path) is copied for messages.  Returns NULL when out of
 * memory.
 */
struct sp_folded_reader *sp_folded_reader_new(FILE *fp, const char *name);

/* Free the reader; NULL is a no-op. */
void sp_folded_reader_free(struct sp_folded_reader *r);

/*
 * Read the next line that is not skipped.  Returns 1 with *l valid until
 * the next call, 0 at the end of input, SP_IN_ERROR (base/io.h) for a bad
 * line or a read error (sp_folded_reader_error()), or SP_IN_OTHER when the
 * input is one of stackpulse's streams (sp_folded_reader_kind()).
 */
int sp_folded_read(struct sp_folded_reader *r, struct sp_folded_line *l);

/* After SP_IN_OTHER: "raw", "unwound", "symbolized", "spool". */
const char *sp_folded_reader_kind(const struct sp_folded_reader *r);

/* 1 or 2 once a line was read (the input's counts per line), else 0. */
unsigned sp_folded_reader_columns(const struct sp_folded_reader *r);

/* Line number of the last line read, from 1. */
unsigned long sp_folded_reader_line(const struct sp_folded_reader *r);

/*
 * The last error, one line without the program name: "the count is not a
 * number at line 3 of 'in.folded': 'a;b x'".
 */
const char *sp_folded_reader_error(const struct sp_folded_reader *r);

/*
 * Record a problem found by the consumer in the last line: the message
 * becomes "<what> at line <n> of '<name>'".  Returns SP_IN_ERROR.
 */
int sp_folded_reader_fail(struct sp_folded_reader *r, const char *what);

#endif
