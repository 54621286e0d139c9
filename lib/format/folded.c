/* SPDX-License-Identifier: MIT */
/* folded.c: the reader of folded stacks, flamegraph.pl's line grammar. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/io.h"
#include "base/stream.h"
#include "folded.h"

const char sp_folded_skip[] = "skipped line";

/* flamegraph.pl's \s: what separates the counts */
static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * Parse the count in s[0..n): 1*DIGIT ["." *DIGIT].  Returns NULL and sets
 * *v and *decimals, or what is wrong.
 */
static const char *parse_count(const char *s, size_t n, double *v,
			       unsigned *decimals)
{
	char buf[48];
	size_t i = 0, frac = 0, int_digits;
	int dot = 0;

	if (n == 0 || s[0] < '0' || s[0] > '9')
		return "the count is not a number";
	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			frac += dot;
		} else if (s[i] == '.' && !dot) {
			dot = 1;
		} else {
			return "the count is not a number";
		}
	}
	/*
	 * Leading zeros, and fraction digits past what a double holds, do not
	 * change the value: what is left fits the buffer, or is past 2^53.
	 */
	while (n > 1 && s[0] == '0' && s[1] != '.') {
		s++;
		n--;
	}
	int_digits = dot ? (size_t)((const char *)memchr(s, '.', n) - s) : n;
	if (int_digits > 16)
		return "the count is too large (above 2^53 - 1)";
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	*v = strtod(buf, NULL);
	if (*v > SP_FOLDED_COUNT_MAX)
		return "the count is too large (above 2^53 - 1)";
	*decimals = frac > SP_FOLDED_DECIMALS_MAX ? SP_FOLDED_DECIMALS_MAX :
		    (unsigned)frac;
	return NULL;
}

/* Start of the whitespace-free token that ends at end (> 0). */
static size_t token_start(const char *line, size_t end)
{
	while (end > 0 && !is_space(line[end - 1]))
		end--;
	return end;
}

/* End of what comes before the whitespace that ends at end. */
static size_t skip_space_back(const char *line, size_t end)
{
	while (end > 0 && is_space(line[end - 1]))
		end--;
	return end;
}

const char *sp_folded_parse(char *line, size_t len, unsigned columns,
			    struct sp_folded_line *l)
{
	size_t end, tok, stack_end, tok2, i;
	double c1 = 0, c2 = 0;
	unsigned d1 = 0, d2 = 0, ncol = 1;
	const char *err;

	if (memchr(line, 0, len))
		return "NUL byte in the line: not text";
	end = skip_space_back(line, len);
	if (end == 0 || line[0] == '#')
		return SP_FOLDED_SKIP;
	tok = token_start(line, end);
	if (tok == 0)
		return "no count: want 'frame;...;frame COUNT'";
	err = parse_count(line + tok, end - tok, &c1, &d1);
	if (err)
		return err;
	stack_end = skip_space_back(line, tok);
	if (columns != 1 && stack_end > 0) {
		tok2 = token_start(line, stack_end);
		if (tok2 > 0 && skip_space_back(line, tok2) > 0 &&
		    !parse_count(line + tok2, stack_end - tok2, &c2, &d2)) {
			ncol = 2;
			stack_end = skip_space_back(line, tok2);
		}
	}
	if (columns == 2 && ncol != 2)
		return "one count, but the input has two per line (BEFORE AFTER)";
	if (stack_end == 0)
		return "no stack before the count";
	if (line[0] == ';' || line[stack_end - 1] == ';')
		return "empty frame: the stack starts or ends with ';'";
	for (i = 1; i < stack_end; i++)
		if (line[i] == ';' && line[i - 1] == ';')
			return "empty frame: ';;' in the stack";

	line[stack_end] = 0;
	l->stack = line;
	l->len = stack_end;
	l->columns = ncol;
	if (ncol == 2) {
		l->count[0] = c2;
		l->count[1] = c1;
		l->decimals = d1 > d2 ? d1 : d2;
	} else {
		l->count[0] = c1;
		l->count[1] = 0;
		l->decimals = d1;
	}
	return NULL;
}

/* Reader */

#define READ_CHUNK 65536

struct sp_folded_reader {
	FILE *fp;
	char *name;
	char *buf;		/* unread bytes are buf[start..end) */
	size_t cap, start, end;
	int eof;
	int checked;		/* the first bytes were looked at */
	unsigned columns;
	unsigned long line;
	const char *kind;
	char err[SP_ERR_MAX + 128];
};

struct sp_folded_reader *sp_folded_reader_new(FILE *fp, const char *name)
{
	struct sp_folded_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fp = fp;
	r->name = strdup(name);
	r->cap = READ_CHUNK;
	r->buf = malloc(r->cap);
	if (!r->name || !r->buf)
		goto err;
	return r;
err:
	sp_folded_reader_free(r);
	return NULL;
}

void sp_folded_reader_free(struct sp_folded_reader *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->buf);
	free(r);
}

const char *sp_folded_reader_kind(const struct sp_folded_reader *r)
{
	return r->kind;
}

unsigned sp_folded_reader_columns(const struct sp_folded_reader *r)
{
	return r->columns;
}

unsigned long sp_folded_reader_line(const struct sp_folded_reader *r)
{
	return r->line;
}

const char *sp_folded_reader_error(const struct sp_folded_reader *r)
{
	return r->err;
}

static int failf(struct sp_folded_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int failf(struct sp_folded_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return SP_IN_ERROR;
}

int sp_folded_reader_fail(struct sp_folded_reader *r, const char *what)
{
	return failf(r, "%s at line %lu of '%s'", what, r->line, r->name);
}

/*
 * Read more input behind what is buffered, moving it to the front and
 * growing the buffer as a line needs.  Returns 0 (r->eof set at the end)
 * or SP_IN_ERROR.
 */
static int fill(struct sp_folded_reader *r)
{
	size_t n;

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end < READ_CHUNK / 2) {
		char *b = realloc(r->buf, r->cap * 2);

		if (!b)
			return failf(r, "out of memory reading '%s'", r->name);
		r->buf = b;
		r->cap *= 2;
	}
	/* one byte stays free for the NUL after a last line */
	n = fread(r->buf + r->end, 1, r->cap - r->end - 1, r->fp);
	r->end += n;
	if (n == 0) {
		if (ferror(r->fp))
			return failf(r, "cannot read '%s': %s", r->name,
				     strerror(errno ? errno : EIO));
		r->eof = 1;
	}
	return 0;
}

/*
 * The next line, NUL-terminated in place of its newline.  Returns 1 (*nl:
 * it had a newline), 0 at the end of input, SP_IN_ERROR.
 */
static int next_line(struct sp_folded_reader *r, char **line, size_t *len,
		     int *nl)
{
	char *p;

	for (;;) {
		p = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (p)
			break;
		if (r->end - r->start > SP_FOLDED_LINE_MAX)
			return failf(r, "line too long (over %u bytes) at line %lu of '%s'",
				     SP_FOLDED_LINE_MAX, r->line + 1, r->name);
		if (r->eof) {
			if (r->start == r->end)
				return 0;
			r->line++;
			*line = r->buf + r->start;
			*len = r->end - r->start;
			(*line)[*len] = 0;
			r->start = r->end;
			*nl = 0;
			return 1;
		}
		if (fill(r))
			return SP_IN_ERROR;
	}
	r->line++;
	*line = r->buf + r->start;
	*len = (size_t)(p - *line);
	*p = 0;
	r->start += *len + 1;
	*nl = 1;
	return 1;
}

/* The first bytes of the input: another of stackpulse's streams? */
static int check_start(struct sp_folded_reader *r)
{
	while (!r->eof && r->end - r->start < SP_MAGIC_LEN)
		if (fill(r))
			return SP_IN_ERROR;
	r->checked = 1;
	if (r->end - r->start >= SP_MAGIC_LEN) {
		r->kind = sp_stream_kind(r->buf + r->start);
		if (r->kind)
			return SP_IN_OTHER;
	}
	return 0;
}

/* The last bytes of line (cut to fit a message), printable. */
static void excerpt(char *dst, size_t size, const char *line, size_t len)
{
	size_t i, n = len, skip = 0;

	if (n > size - 4) {
		skip = n - (size - 4);
		n = size - 4;
	}
	i = 0;
	if (skip) {
		memcpy(dst, "...", 3);
		i = 3;
	}
	for (; n; n--, i++) {
		unsigned char c = (unsigned char)line[len - n];

		dst[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	dst[i] = 0;
}

int sp_folded_read(struct sp_folded_reader *r, struct sp_folded_line *l)
{
	const char *err;
	char *line = NULL, ex[48];
	size_t len = 0;
	int ret, nl = 0;

	if (!r->checked && (ret = check_start(r)))
		return ret;
	for (;;) {
		ret = next_line(r, &line, &len, &nl);
		if (ret <= 0)
			return ret;
		err = sp_folded_parse(line, len, r->columns, l);
		if (err == SP_FOLDED_SKIP)
			continue;
		if (!err) {
			r->columns = l->columns;
			return 1;
		}
		excerpt(ex, sizeof(ex), line, len);
		if (!nl)
			return failf(r, "truncated last line (no newline): %s at line %lu of '%s': '%s'",
				     err, r->line, r->name, ex);
		return failf(r, "%s at line %lu of '%s': '%s'", err, r->line,
			     r->name, ex);
	}
}
