/* SPDX-License-Identifier: MIT */
/* test-folded.c: the folded stack grammar: lines kept, skipped, refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/io.h"
#include "format/folded.h"
#include "unit.h"

/* Parse a copy of in with columns; check stack, counts and decimals. */
static void check_ok(const char *in, unsigned columns, const char *stack,
		     unsigned ncol, double c0, double c1, unsigned decimals,
		     int line)
{
	struct sp_folded_line l;
	char *buf = strdup(in);
	const char *err = sp_folded_parse(buf, strlen(buf), columns, &l);

	if (!err && !strcmp(l.stack, stack) && l.len == strlen(stack) &&
	    l.columns == ncol && l.count[0] == c0 &&
	    (ncol == 1 || l.count[1] == c1) && l.decimals == decimals) {
		unit_pass++;
	} else {
		unit_fail++;
		fprintf(stderr, "%s:%d: parse('%s') = %s '%s' %u [%g %g] .%u\n",
			__FILE__, line, in, err == SP_FOLDED_SKIP ? "skip" :
			err ? err : "ok", err ? "" : l.stack,
			err ? 0 : l.columns, err ? 0 : l.count[0],
			err ? 0 : l.count[1], err ? 0 : l.decimals);
	}
	free(buf);
}

/* Parsing in must fail with an error containing want (or skip). */
static void check_bad(const char *in, size_t len, unsigned columns,
		      const char *want, int line)
{
	struct sp_folded_line l;
	char *buf = malloc(len + 1);
	const char *err;

	memcpy(buf, in, len);
	buf[len] = 0;
	err = sp_folded_parse(buf, len, columns, &l);
	if (want == SP_FOLDED_SKIP ? err == SP_FOLDED_SKIP :
	    err && err != SP_FOLDED_SKIP && strstr(err, want) &&
	    !memcmp(buf, in, len)) {
		unit_pass++;
	} else {
		unit_fail++;
		fprintf(stderr, "%s:%d: parse('%s') = '%s', want '%s'\n",
			__FILE__, line, in, err == SP_FOLDED_SKIP ? "skip" :
			err ? err : "ok", want == SP_FOLDED_SKIP ? "skip" : want);
	}
	free(buf);
}

#define OK(in, cols, stack, ncol, c0, c1, dec) \
	check_ok(in, cols, stack, ncol, c0, c1, dec, __LINE__)
#define BAD(in, cols, want) check_bad(in, strlen(in), cols, want, __LINE__)

static void test_parse(void)
{
	/* flamegraph.pl's lines, ours and others' */
	OK("a;b;c 12", 0, "a;b;c", 1, 12, 0, 0);
	OK("a;b 1.5", 0, "a;b", 1, 1.5, 0, 1);
	OK("a;b 1.", 0, "a;b", 1, 1, 0, 0);
	OK("a;b 0.125", 1, "a;b", 1, 0.125, 0, 3);
	OK("a;b 0.1234567890", 1, "a;b", 1, 0.123456789, 0, 6);
	OK("a;b 0", 0, "a;b", 1, 0, 0, 0);
	OK("a;b 007", 0, "a;b", 1, 7, 0, 0);
	OK("main 9007199254740991", 0, "main", 1, 9007199254740991.0, 0, 0);
	OK("a;b\t12\r", 0, "a;b", 1, 12, 0, 0);
	OK("a;b   12   ", 0, "a;b", 1, 12, 0, 0);
	OK("my prog;foo bar 3", 0, "my prog;foo bar", 1, 3, 0, 0);
	OK("[unknown];do_syscall_64_[k] 4", 0, "[unknown];do_syscall_64_[k]", 1, 4, 0, 0);
	OK("operator<(a&b, \"c\") 1", 0, "operator<(a&b, \"c\")", 1, 1, 0, 0);
	OK(" lead 2", 0, " lead", 1, 2, 0, 0);
	OK("\xff\xfe;\x01 2", 0, "\xff\xfe;\x01", 1, 2, 0, 0);
	/* two columns: difffolded.pl's BEFORE AFTER */
	OK("a;b 10 20", 0, "a;b", 2, 10, 20, 0);
	OK("a;b 1.25 2", 2, "a;b", 2, 1.25, 2, 2);
	OK("a;b 0 5", 2, "a;b", 2, 0, 5, 0);
	/* a one-count input: a number before the count is the frame's */
	OK("a;foo 12 20", 1, "a;foo 12", 1, 20, 0, 0);
	/* nothing but two numbers: the first is the stack */
	OK("5 6", 0, "5", 1, 6, 0, 0);
	OK("x 5 6 7", 2, "x 5", 2, 6, 7, 0);

	/* skipped as flamegraph.pl skips them */
	BAD("", 0, SP_FOLDED_SKIP);
	BAD("   \t ", 0, SP_FOLDED_SKIP);
	BAD("\r", 0, SP_FOLDED_SKIP);
	BAD("# a comment 12", 0, SP_FOLDED_SKIP);

	/* refused */
	BAD("a;b;c", 0, "no count");
	BAD("12", 0, "no count");
	BAD("a;b x", 0, "not a number");
	BAD("a;b 12x", 0, "not a number");
	BAD("a;b -5", 0, "not a number");
	BAD("a;b +5", 0, "not a number");
	BAD("a;b .5", 0, "not a number");
	BAD("a;b 1.2.3", 0, "not a number");
	BAD("a;b 1e5", 0, "not a number");
	BAD("a;b 0x10", 0, "not a number");
	BAD("a;b 9007199254740993", 0, "too large");
	BAD("a;b 99999999999999999999999999999999999999999999999999999", 0, "too large");
	BAD("a;b 12 x", 0, "not a number");
	BAD(" 12", 0, "no stack");
	BAD(";a 1", 0, "empty frame");
	BAD("a; 1", 0, "empty frame");
	BAD("a;;b 1", 0, "';;'");
	BAD("a;b 12", 2, "one count, but the input has two");
	check_bad("a\0b 12", 6, 0, "NUL byte", __LINE__);

	/* long fractions keep their value, shown with 6 decimals at most */
	OK("a 1.00000000000000000000000000000000000000000000000000001", 0,
	   "a", 1, 1, 0, 6);
}

/* Read text through a reader; returns the reader (caller frees) and fp. */
static struct sp_folded_reader *reader_of(const char *text, size_t len,
					  FILE **fp)
{
	*fp = fmemopen((void *)text, len, "r");
	return *fp ? sp_folded_reader_new(*fp, "in.folded") : NULL;
}

static void test_reader(void)
{
	static const char text[] =
		"# folded stacks\n"
		"\n"
		"main;a 3\n"
		"main;b 1.5\r\n"
		"   \n"
		"main;c 2";		/* a last line without its newline */
	struct sp_folded_line l;
	struct sp_folded_reader *r;
	FILE *fp;

	r = reader_of(text, sizeof(text) - 1, &fp);
	CHECK(r != NULL);
	CHECK(sp_folded_reader_columns(r) == 0);
	CHECK(sp_folded_read(r, &l) == 1);
	CHECK_STR(l.stack, "main;a");
	CHECK(l.count[0] == 3);
	CHECK(sp_folded_reader_line(r) == 3);
	CHECK(sp_folded_reader_columns(r) == 1);
	CHECK(sp_folded_read(r, &l) == 1);
	CHECK_STR(l.stack, "main;b");
	CHECK(l.count[0] == 1.5 && l.decimals == 1);
	CHECK(sp_folded_read(r, &l) == 1);
	CHECK_STR(l.stack, "main;c");
	CHECK(l.count[0] == 2);
	CHECK(sp_folded_reader_line(r) == 6);
	CHECK(sp_folded_read(r, &l) == 0);
	CHECK(sp_folded_read(r, &l) == 0);
	sp_folded_reader_free(r);
	fclose(fp);
}

/* The error of the first bad line of text. */
static void check_error(const char *text, size_t len, const char *want,
			int line)
{
	struct sp_folded_line l;
	struct sp_folded_reader *r;
	FILE *fp;
	int ret;

	r = reader_of(text, len, &fp);
	while ((ret = sp_folded_read(r, &l)) > 0)
		;
	if (ret == SP_IN_ERROR && !strcmp(sp_folded_reader_error(r), want)) {
		unit_pass++;
	} else {
		unit_fail++;
		fprintf(stderr, "%s:%d: read = %d '%s', want '%s'\n", __FILE__,
			line, ret, sp_folded_reader_error(r), want);
	}
	sp_folded_reader_free(r);
	fclose(fp);
}

#define ERR(text, want) check_error(text, sizeof(text) - 1, want, __LINE__)

static void test_errors(void)
{
	char *big;
	size_t n;

	ERR("a 1\nb x\n",
	    "the count is not a number at line 2 of 'in.folded': 'b x'");
	ERR("a 1\n\n# c\nb;c\n",
	    "no count: want 'frame;...;frame COUNT' at line 4 of 'in.folded': 'b;c'");
	/* a cut file: the last line lost its count and newline */
	ERR("a;b 1\na;b;c",
	    "truncated last line (no newline): no count: want 'frame;...;frame COUNT' at line 2 of 'in.folded': 'a;b;c'");
	/* the first line decides the columns */
	ERR("a 1 2\nb 3\n",
	    "one count, but the input has two per line (BEFORE AFTER) at line 2 of 'in.folded': 'b 3'");
	/* what the message quotes is printable and short */
	ERR("a 1\n\x01\x02;b\xff x\n",
	    "the count is not a number at line 2 of 'in.folded': '??;b? x'");
	ERR("a;bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb;c 1x\n",
	    "the count is not a number at line 1 of 'in.folded': '...bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb;c 1x'");
	ERR("a 1\nb\0c 2\n",
	    "NUL byte in the line: not text at line 2 of 'in.folded': 'b?c 2'");

	/* a line longer than the limit, without reading all of it */
	n = SP_FOLDED_LINE_MAX + 100;
	big = malloc(n);
	memset(big, 'a', n);
	check_error(big, n, "line too long (over 16777216 bytes) at line 1 of 'in.folded'",
		    __LINE__);
	free(big);
}

static void check_other(const char *text, size_t len, const char *kind,
			int line)
{
	struct sp_folded_line l;
	struct sp_folded_reader *r;
	FILE *fp;
	int ret;

	r = reader_of(text, len, &fp);
	ret = sp_folded_read(r, &l);
	if (ret == SP_IN_OTHER && !strcmp(sp_folded_reader_kind(r), kind)) {
		unit_pass++;
	} else {
		unit_fail++;
		fprintf(stderr, "%s:%d: read = %d, want another stream (%s)\n",
			__FILE__, line, ret, kind);
	}
	sp_folded_reader_free(r);
	fclose(fp);
}

static void test_other_streams(void)
{
	static const char raw[] = "SPRAW\0\0\0\1\0\0\0\x70\0\0\0";
	static const char unw[] = "SPUNWND\0\1\0\0\0";
	static const char spool[] = "SPSPOOL\0";
	static const char sym[] = "# stackpulse symbolized 1\nevent\tcpu-clock\tfreq\t99\n";

	check_other(raw, sizeof(raw) - 1, "raw", __LINE__);
	check_other(unw, sizeof(unw) - 1, "unwound", __LINE__);
	check_other(spool, sizeof(spool) - 1, "spool", __LINE__);
	check_other(sym, sizeof(sym) - 1, "symbolized", __LINE__);
}

static void test_empty(void)
{
	struct sp_folded_line l;
	struct sp_folded_reader *r;
	FILE *fp;

	/* fmemopen of nothing: a file of nothing but a newline is as empty */
	r = reader_of("\n", 1, &fp);
	CHECK(sp_folded_read(r, &l) == 0);
	CHECK(sp_folded_reader_line(r) == 1);
	sp_folded_reader_free(r);
	fclose(fp);
	sp_folded_reader_free(NULL);
}

int main(void)
{
	test_parse();
	test_reader();
	test_errors();
	test_other_streams();
	test_empty();
	return unit_done("test-folded");
}
