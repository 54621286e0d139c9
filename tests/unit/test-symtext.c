/* SPDX-License-Identifier: MIT */
/* test-symtext.c: the symbolized stream's writer, parser and reader. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/symtext.h"
#include "unit.h"

static char tmp[] = "/tmp/test-symtext.XXXXXX";

/* Write recs to a file and return its contents, malloc'd. */
static char *write_all(const struct sp_st_rec *recs, size_t n, int magic)
{
	struct sp_out *out = sp_out_open(tmp, 0);
	char *buf;
	FILE *fp;
	long len;
	size_t i;

	CHECK(out != NULL);
	if (!out)
		return NULL;
	if (magic)
		CHECK(sp_st_write_magic(out) == 0);
	for (i = 0; i < n; i++)
		CHECK(sp_st_write(out, &recs[i]) == 0);
	CHECK(sp_out_close(out) == 0);
	fp = fopen(tmp, "r");
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)len + 1);
	CHECK(fread(buf, 1, (size_t)len, fp) == (size_t)len);
	fclose(fp);
	return buf;
}

static const char *parse(const char *text, struct sp_st_rec *rec)
{
	static char line[4096];

	snprintf(line, sizeof(line), "%s", text);
	return sp_st_parse(line, strlen(line), rec);
}

static void test_escape_round_trip(void)
{
	struct sp_st_rec rec = { .type = SP_ST_FRAME };
	struct sp_st_rec back;
	char *text, *nl;

	rec.u.frame = (struct sp_st_frame){ .pid = 7, .id = 3, .index = 2,
		.f = { .addr = 0xdeadbeef, .function = "a\tb\\c\nd",
		       .module = "-", .file = NULL, .line = 0,
		       .kind = SP_FK_JIT, .origin = SP_FO_PERFMAP,
		       .flags = SP_SYMF_HIDDEN } };
	text = write_all(&rec, 1, 0);
	CHECK_STR(text, "frame\t7\t3\t2\tjit\tperf-map\thidden\t0xdeadbeef\t"
		  "a\\tb\\\\c\\nd\t\\-\t-\t-\n");
	nl = strchr(text, '\n');
	*nl = 0;
	CHECK(sp_st_parse(text, strlen(text), &back) == NULL);
	CHECK(back.type == SP_ST_FRAME);
	CHECK(back.u.frame.pid == 7 && back.u.frame.id == 3 &&
	      back.u.frame.index == 2);
	CHECK(back.u.frame.f.addr == 0xdeadbeef);
	CHECK_STR(back.u.frame.f.function, "a\tb\\c\nd");
	CHECK_STR(back.u.frame.f.module, "-");
	CHECK(back.u.frame.f.file == NULL);
	CHECK(back.u.frame.f.line == 0);
	CHECK(back.u.frame.f.kind == SP_FK_JIT);
	CHECK(back.u.frame.f.origin == SP_FO_PERFMAP);
	CHECK(back.u.frame.f.flags == SP_SYMF_HIDDEN);
	free(text);
}

static void test_every_record(void)
{
	struct sp_st_rec recs[7], back;
	char *text, *line, *save = NULL;
	int i = 0;

	memset(recs, 0, sizeof(recs));
	recs[0].type = SP_ST_EVENT;
	recs[0].u.event = (struct sp_st_event){ "cpu-clock", 1, 99 };
	recs[1].type = SP_ST_COMM;
	recs[1].u.comm = (struct sp_st_comm){ 5, 10, 11, "my worker", 1 };
	recs[2].type = SP_ST_STACK;
	recs[2].u.stack = (struct sp_st_stack){ 10, 1, 1, "truncated",
		"spliced,go-switch" };
	recs[3].type = SP_ST_FRAME;
	recs[3].u.frame = (struct sp_st_frame){ 10, 1, 0, { .addr = 0x401000,
		.function = "main", .module = "/bin/x", .file = "x.c",
		.line = 42, .kind = SP_FK_NATIVE, .origin = SP_FO_SYMTAB } };
	recs[4].type = SP_ST_SAMPLE;
	recs[4].u.sample = (struct sp_st_sample){ 100, 10, 11, 3, 1, 1000000 };
	recs[5].type = SP_ST_LOST;
	recs[5].u.lost = (struct sp_st_lost){ 200, 17 };
	recs[6].type = SP_ST_SUMMARY;
	recs[6].u.summary = (struct sp_st_summary){ .samples = 1, .lost = 17,
		.stacks = 1, .frames = 1, .truncated = 1, .spliced = 1 };
	text = write_all(recs, 7, 1);
	CHECK_STR(text,
		  "# stackpulse symbolized 1\n"
		  "event\tcpu-clock\tfreq\t99\n"
		  "comm\t5\t10\t11\tmy worker\texec\n"
		  "stack\t10\t1\t1\ttruncated\tspliced,go-switch\n"
		  "frame\t10\t1\t0\tnative\tsymtab\t-\t0x401000\tmain\t/bin/x\tx.c\t42\n"
		  "sample\t100\t10\t11\t3\t1000000\t1\n"
		  "lost\t200\t17\n"
		  "summary\tsamples=1\tlost=17\tstacks=1\tthreads=0\tprocesses=0\tduration_ns=0\tframes=1\tunresolved=0\tcomplete=0\ttruncated=1\tnoinfo=0\terror=0\tdepth=0\tnoregs=0\tspliced=1\tno_build_id=0\n");
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		CHECK(sp_st_parse(line, strlen(line), &back) == NULL);
		CHECK(back.type == recs[i].type);
		i++;
	}
	CHECK(i == 7);
	free(text);

	CHECK(parse("comm\t5\t10\t11\tmy worker\texec", &back) == NULL);
	CHECK_STR(back.u.comm.name, "my worker");
	CHECK(back.u.comm.exec == 1 && back.u.comm.tid == 11);
	CHECK(parse("sample\t100\t10\t11\t3\t1000000\t1", &back) == NULL);
	CHECK(back.u.sample.weight == 1000000 && back.u.sample.cpu == 3);
	CHECK(parse("summary\tsamples=9\tfuture_key=3\tunresolved=2", &back) == NULL);
	CHECK(back.u.summary.samples == 9 && back.u.summary.unresolved == 2);
	CHECK(parse("summary\tcomplete=5\tnoinfo=2\tspliced=4", &back) == NULL);
	CHECK(back.u.summary.complete == 5 && back.u.summary.noinfo == 2 &&
	      back.u.summary.spliced == 4 && back.u.summary.truncated == 0);
	CHECK(parse("stack\t1\t2\t3\tcomplete", &back) == NULL);
	CHECK_STR(back.u.stack.end, "complete");
	CHECK(back.u.stack.flags == NULL);
	CHECK(parse("stack\t1\t2\t3\ttruncated\tgo-switch", &back) == NULL);
	CHECK_STR(back.u.stack.flags, "go-switch");
	CHECK(parse("frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tf\t-\t-\t7", &back) == NULL);
	CHECK(back.u.frame.f.line == 7 && back.u.frame.f.module == NULL);
	CHECK(back.u.frame.f.symbol == NULL && back.u.frame.f.decl_line == 0);
	/* the symbol as the file has it and the function's first line */
	CHECK(parse("frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tns::f\t-\tf.cc\t7\t_ZN2ns1fEv\t3", &back) == NULL);
	CHECK_STR(back.u.frame.f.symbol, "_ZN2ns1fEv");
	CHECK(back.u.frame.f.decl_line == 3);
	CHECK_STR(parse("frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tf\t-\t-\t7\t-\tx", &back),
		  "DECL is not a number");
}

/* start and map lines: written, parsed back, strict about their fields */
static void test_start_map(void)
{
	struct sp_st_rec recs[3], back;
	char *text, *line, *save = NULL;
	int i = 0;

	recs[0].type = SP_ST_START;
	recs[0].u.start = (struct sp_st_start){ 1000, 1796000000123456789ull };
	recs[1].type = SP_ST_MAP;
	recs[1].u.map = (struct sp_st_map){ .time = 5, .pid = 10,
		.start = 0x7f0000001000, .end = 0x7f0000003000,
		.pgoff = 0x1000, .build_id = "0a1b2c",
		.path = "/opt/a b\tc.so" };
	recs[2].type = SP_ST_MAP;
	recs[2].u.map = (struct sp_st_map){ .time = 6, .pid = 10,
		.start = 0x1000, .end = 0x2000, .path = "[vdso]" };
	text = write_all(recs, 3, 0);
	CHECK_STR(text,
		  "start\t1000\t1796000000123456789\n"
		  "map\t5\t10\t0x7f0000001000\t0x7f0000003000\t0x1000\t0a1b2c\t/opt/a b\\tc.so\n"
		  "map\t6\t10\t0x1000\t0x2000\t0x0\t-\t[vdso]\n");
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), i++)
		CHECK(sp_st_parse(line, strlen(line), &back) == NULL &&
		      back.type == recs[i].type);
	CHECK(back.u.map.build_id == NULL && !strcmp(back.u.map.path, "[vdso]"));
	free(text);
	CHECK(parse("start\t1000\t1796000000123456789", &back) == NULL);
	CHECK(back.u.start.time == 1000 &&
	      back.u.start.realtime == 1796000000123456789ull);
	CHECK(parse("map\t5\t10\t0x1000\t0x3000\t0x1000\t0a1b\t/a", &back) == NULL);
	CHECK(back.u.map.start == 0x1000 && back.u.map.end == 0x3000 &&
	      back.u.map.pgoff == 0x1000 && back.u.map.pid == 10);
	CHECK_STR(back.u.map.build_id, "0a1b");
	CHECK_STR(back.u.map.path, "/a");
	CHECK_STR(parse("start\t1", &back), "need 3 fields");
	CHECK_STR(parse("start\t1\tnow", &back), "REALTIME is not a number");
	CHECK_STR(parse("map\t5\t10\t0x1000\t0x3000\t0x0\t-", &back),
		  "need 8 fields");
	CHECK_STR(parse("map\t5\t10\t1000\t0x3000\t0x0\t-\t/a", &back),
		  "START is not a 0x hex number");
	CHECK_STR(parse("map\t5\t10\t0x3000\t0x3000\t0x0\t-\t/a", &back),
		  "END is not a 0x hex number above START");
	CHECK_STR(parse("map\t5\t10\t0x1000\t0x3000\t0x0\tABCD\t/a", &back),
		  "BUILDID is not lowercase hex");
	CHECK_STR(parse("map\t5\t10\t0x1000\t0x3000\t0x0\tabc\t/a", &back),
		  "BUILDID is not lowercase hex");

	/* a process gone */
	recs[0].type = SP_ST_GONE;
	recs[0].u.gone = (struct sp_st_gone){ .time = 77, .pid = 4242 };
	text = write_all(recs, 1, 0);
	CHECK_STR(text, "gone\t77\t4242\n");
	free(text);
	CHECK(parse("gone\t77\t4242", &back) == NULL);
	CHECK(back.type == SP_ST_GONE && back.u.gone.time == 77 &&
	      back.u.gone.pid == 4242);
	CHECK(!back.u.gone.has_tid);
	recs[0].u.gone = (struct sp_st_gone){ .time = 78, .pid = 4242,
		.tid = 4250, .has_tid = 1 };
	text = write_all(recs, 1, 0);
	CHECK_STR(text, "gone\t78\t4242\t4250\n");
	free(text);
	CHECK(parse("gone\t78\t4242\t4250", &back) == NULL);
	CHECK(back.u.gone.has_tid && back.u.gone.pid == 4242 &&
	      back.u.gone.tid == 4250);
	CHECK_STR(parse("gone\t78\t4242\tx", &back), "TID is not a number");
	CHECK_STR(parse("gone\t77", &back), "need 3 fields");
	CHECK_STR(parse("gone\t77\t-1", &back), "PID is not a number");
	CHECK_STR(parse("gone\tnow\t1", &back), "TIME is not a number");
}

static void test_parse_errors(void)
{
	static const struct {
		const char *line;
		const char *err;	/* NULL: must parse */
	} cases[] = {
		{ "", "empty line" },
		{ "sample\t1\t2\t3\t4\t5", "need 7 fields" },
		{ "sample\tx\t2\t3\t4\t5\t6", "TIME is not a number" },
		{ "sample\t1\t-2\t3\t4\t5\t6", "PID is not a number" },
		{ "sample\t1\t2\t3\t4\t5\t0", "ID is not a number from 1" },
		{ "sample\t1\t99999999999\t3\t4\t5\t6", "PID is not a number" },
		{ "sample\t1\t2\t3\t4\t18446744073709551616\t6", "WEIGHT is not a number" },
		{ "stack\t1\t0\t2\troot", "ID is not a number from 1" },
		{ "frame\t1\t1\t0\tnative\tsymtab\t-\t401000\tf\t-\t-\t-", "ADDR is not a 0x hex number" },
		{ "frame\t1\t1\t0\tnative\tsymtab\t-\t0xzz\tf\t-\t-\t-", "ADDR is not a 0x hex number" },
		{ "frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tf\\x\t-\t-\t-", "bad escape: only \\t \\n \\\\ \\- are defined" },
		{ "frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tf\t-\t-", "need 12 fields" },
		{ "frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tf\t-\t-\tL", "LINE is not a number" },
		{ "event\tcpu\tsometimes\t1", "mode must be freq or period" },
		{ "summary\tsamples", "fields must be KEY=VALUE" },
		{ "summary\tsamples=x", "VALUE is not a number" },
		{ "Sample\t1", "not a record: unknown keyword" },
		{ "\x01\x02garbage", "not a record: unknown keyword" },
		/* later versions: new kinds of lines, new values, new columns */
		{ "inline\t1\t2\tfoo", NULL },
		{ "frame\t1\t1\t0\tinterp\tpyframes\tnew,hidden\t0x1\tf\t-\t-\t-\textra", NULL },
		{ "lost\t1\t2\tmore", NULL },
	};
	struct sp_st_rec rec;
	char nul[] = "sample\t1\0\t2";
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *err = parse(cases[i].line, &rec);

		if (cases[i].err)
			CHECK_STR(err, cases[i].err);
		else
			CHECK(err == NULL);
	}
	CHECK(parse("inline\t1\t2\tfoo", &rec) == NULL && rec.type == SP_ST_UNKNOWN);
	CHECK(parse("frame\t1\t1\t0\tinterp\tpyframes\tnew,hidden\t0x1\tf\t-\t-\t-\textra",
		    &rec) == NULL);
	CHECK(rec.u.frame.f.kind == SP_FK_INTERP);
	CHECK(rec.u.frame.f.origin == SP_FO_NONE);
	CHECK(rec.u.frame.f.flags == SP_SYMF_HIDDEN);
	CHECK_STR(sp_st_parse(nul, sizeof(nul) - 1, &rec), "NUL byte in line");
}

static void test_magic(void)
{
	unsigned v = 0;

	CHECK(sp_st_parse_magic("# stackpulse symbolized 1", &v) == 0 && v == 1);
	CHECK(sp_st_parse_magic("# stackpulse symbolized 2", &v) == -EPROTONOSUPPORT && v == 2);
	CHECK(sp_st_parse_magic("# stackpulse symbolized", &v) == -EINVAL);
	CHECK(sp_st_parse_magic("# stackpulse symbolized x", &v) == -EINVAL);
	CHECK(sp_st_parse_magic("# stackpulse symbolized 0", &v) == -EINVAL);
	CHECK(sp_st_parse_magic("# stackpulse folded 1", &v) == -EINVAL);
	CHECK(sp_st_parse_magic("", &v) == -EINVAL);
}

/* Run the reader over text; returns the error or "" after a clean end. */
static const char *read_text(const char *text, size_t len, int *records)
{
	static char err[512];
	FILE *fp = fmemopen((void *)text, len, "r");
	struct sp_st_reader *r = sp_st_reader_new(fp, "stdin");
	struct sp_st_rec rec;
	int ret;

	*records = 0;
	ret = sp_st_reader_header(r);
	if (ret == SP_IN_OTHER)
		snprintf(err, sizeof(err), "other %s", sp_st_reader_kind(r));
	else if (ret)
		snprintf(err, sizeof(err), "%s", sp_st_reader_error(r));
	else {
		while ((ret = sp_st_read(r, &rec)) > 0)
			(*records)++;
		snprintf(err, sizeof(err), "%s", ret ? sp_st_reader_error(r) : "");
	}
	sp_st_reader_free(r);
	fclose(fp);
	return err;
}

#define READ(s, n) read_text(s, sizeof(s) - 1, n)

static void test_reader(void)
{
	int n;

	CHECK_STR(READ("# stackpulse symbolized 1\n# a comment\nlost\t1\t2\n"
		       "future\tline\nsummary\tsamples=0\n", &n), "");
	CHECK(n == 3);	/* lost, the unknown line, summary */
	CHECK_STR(READ("", &n), "empty input, expected a symbolized stream at byte 0 of 'stdin'");
	CHECK_STR(READ("SPUNWND\0\1\0\0\0X\0\0\0", &n), "other unwound");
	CHECK_STR(READ("SPRAW\0\0\0\1\0\0\0", &n), "other raw");
	CHECK_STR(READ("hello world\n", &n),
		  "not a symbolized stream (bad magic line, want '# stackpulse symbolized 1') at line 1 of 'stdin'");
	CHECK_STR(READ("# stackpulse symbolized 99\n", &n),
		  "symbolized stream version 99 is not supported (this build reads 1..1) at line 1 of 'stdin': upgrade stackpulse");
	CHECK_STR(READ("# stackpulse symbolized 1\nlost\t1\t2\n", &n),
		  "truncated stream: no summary line at line 3 of 'stdin'");
	CHECK_STR(READ("# stackpulse symbolized 1\nlost\t1\t2", &n),
		  "truncated line (no newline) at line 2 of 'stdin'");
	CHECK_STR(READ("# stackpulse symbolized 1\nsummary\tsamples=0\nlost\t1\t2\n", &n),
		  "line after the summary line at line 3 of 'stdin'");
	CHECK_STR(READ("# stackpulse symbolized 1\nsample\t1\t2\n", &n),
		  "bad sample line at line 2 of 'stdin': need 7 fields");
	CHECK_STR(READ("# stackpulse symbolized 1\n\n", &n),
		  "bad line at line 2 of 'stdin': empty line");
	/* a NUL byte: in a line, in a comment, in a last line cut short */
	CHECK_STR(READ("# stackpulse symbolized 1\nlost\t1\0\t2\nsummary\tsamples=0\n", &n),
		  "bad line at line 2 of 'stdin': NUL byte in line");
	CHECK_STR(READ("# stackpulse symbolized 1\n# a\0b\nsummary\tsamples=0\n", &n),
		  "bad line at line 2 of 'stdin': NUL byte in line");
	CHECK_STR(READ("# stackpulse symbolized 1\nlost\t1\0", &n),
		  "truncated line (no newline) at line 2 of 'stdin'");
}

/* A stream of lines of every length up to past the reader's first buffer. */
static void test_line_lengths(void)
{
	size_t cap = 64 * 1024, len, k;
	char *text = malloc(cap), *p;
	int n, lines = 0;

	p = text + sprintf(text, "# stackpulse symbolized 1\n");
	for (len = 1; len < 9000; len += 7) {
		p += sprintf(p, "x");
		for (k = 1; k < len; k++)
			*p++ = (char)('a' + k % 26);
		*p++ = '\n';
		lines++;
		if (p - text > (long)cap - 10000)
			break;
	}
	p += sprintf(p, "summary\tsamples=0\n");
	CHECK_STR(read_text(text, (size_t)(p - text), &n), "");
	CHECK(n == lines + 1 && lines > 20);	/* unknown lines and the summary */
	free(text);
}

static void test_long_line(void)
{
	size_t len = SP_SYMTEXT_LINE_MAX + 100;
	char *big = malloc(len + 40);
	int n;

	strcpy(big, "# stackpulse symbolized 1\nlost\t");
	memset(big + strlen(big), '1', len);
	big[len] = 0;
	CHECK_STR(read_text(big, len, &n),
		  "line too long (over 1048576 bytes) at line 2 of 'stdin'");

	/* the longest line read is one byte short of the limit */
	len = strlen("# stackpulse symbolized 1\n");
	memset(big + len, 'x', SP_SYMTEXT_LINE_MAX - 1);
	len += SP_SYMTEXT_LINE_MAX - 1;
	strcpy(big + len, "\nsummary\tsamples=0\n");
	CHECK_STR(read_text(big, len + 20, &n), "");
	CHECK(n == 2);
	big[len] = 'x';
	strcpy(big + len + 1, "\nsummary\tsamples=0\n");
	CHECK_STR(read_text(big, len + 21, &n),
		  "line too long (over 1048576 bytes) at line 2 of 'stdin'");
	free(big);
}

int main(void)
{
	int fd = mkstemp(tmp);

	CHECK(fd >= 0);
	close(fd);
	test_escape_round_trip();
	test_every_record();
	test_parse_errors();
	test_start_map();
	test_magic();
	test_reader();
	test_line_lengths();
	test_long_line();
	unlink(tmp);
	return unit_done("test-symtext");
}
