/* SPDX-License-Identifier: MIT */
/* test-io: stream headers and record framing reject damage with offsets. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/io.h"
#include "format/raw.h"
#include "format/unwound.h"
#include "unit.h"

/* Feed bytes through a pipe into a reader. */
static struct sp_in *feed(const void *data, size_t len)
{
	int fds[2];

	if (pipe(fds))
		abort();
	if (write(fds[1], data, len) != (ssize_t)len)
		abort();
	close(fds[1]);
	return sp_in_fdopen(fds[0], "stdin");
}

static int header(const void *data, size_t len, struct sp_in **inp)
{
	struct sp_raw_header h;
	struct sp_in *in = feed(data, len);

	*inp = in;
	return sp_in_header(in, SP_RAW_MAGIC, SP_RAW_VERSION, &h,
			    SP_RAW_HEADER_MIN, sizeof(h));
}

/*
 * A header written before start_realtime existed is read, the field 0;
 * the record after it is not taken for the field.
 */
static void test_older_header(void)
{
	struct sp_raw_header h = { { SP_RAW_MAGIC, 1, SP_RAW_HEADER_MIN } };
	struct sp_raw_header got;
	struct sp_lost_rec lost = { { SP_REC_LOST, sizeof(lost) }, 7, 9 };
	const struct sp_rec_hdr *rec;
	uint8_t buf[sizeof(h) + sizeof(lost)];
	struct sp_in *in;

	h.ev.start_time = 5;
	memcpy(buf, &h, SP_RAW_HEADER_MIN);
	memcpy(buf + SP_RAW_HEADER_MIN, &lost, sizeof(lost));
	in = feed(buf, SP_RAW_HEADER_MIN + sizeof(lost));
	memset(&got, 0xff, sizeof(got));
	CHECK(sp_in_header(in, SP_RAW_MAGIC, SP_RAW_VERSION, &got,
			   SP_RAW_HEADER_MIN, sizeof(got)) == SP_IN_OK);
	CHECK(got.ev.start_time == 5 && got.start_realtime == 0);
	CHECK(sp_in_next(in, &rec) == 1 && rec->type == SP_REC_LOST);
	sp_in_close(in);
}

static size_t got_len[8];
static int got;

static int collect(void *arg, const void *rec, size_t len)
{
	if (got < 8)
		got_len[got] = len;
	got++;
	return got == 4 ? -ENOSPC : 0;
}

/* A record output hands out the header, then whole records, however cut. */
static void test_records(void)
{
	struct sp_raw_header h = { { SP_RAW_MAGIC, 1, sizeof(h) } };
	struct sp_lost_rec lost = { { SP_REC_LOST, sizeof(lost) } };
	struct sp_out *out = sp_out_records(collect, NULL);
	const uint8_t *p = (const uint8_t *)&h;
	size_t i;

	CHECK(out != NULL);
	for (i = 0; i < sizeof(h); i++)		/* a byte at a time */
		CHECK(sp_out_write(out, p + i, 1) == 0);
	CHECK(got == 1 && got_len[0] == sizeof(h));
	CHECK(sp_out_write(out, &lost, 20) == 0);
	CHECK(got == 1);
	CHECK(sp_out_write(out, (uint8_t *)&lost + 20, 12) == 0);
	CHECK(got == 2 && got_len[1] == sizeof(lost));
	CHECK(sp_out_rec(out, &lost, sizeof(lost)) == 0);
	CHECK(got == 3);
	/* what the consumer returns stops the output */
	CHECK(sp_out_rec(out, &lost, sizeof(lost)) == -ENOSPC);
	CHECK(sp_out_rec(out, &lost, sizeof(lost)) == -ENOSPC);
	CHECK(got == 4);
	CHECK(sp_out_close(out) == -ENOSPC);
}

int main(void)
{
	struct sp_raw_header h = { { SP_RAW_MAGIC, 1, sizeof(h) } };
	struct sp_unw_header uh = { { SP_UNW_MAGIC, 1, sizeof(uh) } };
	uint8_t buf[4096];
	const struct sp_rec_hdr *rec;
	struct sp_rec_hdr *r;
	struct sp_in *in;

	test_older_header();
	CHECK(header("", 0, &in) == SP_IN_ERROR);
	CHECK_STR(sp_in_error(in), "empty input, expected a raw stream at byte 0 of 'stdin'");
	sp_in_close(in);

	CHECK(header("hello world, this is text", 25, &in) == SP_IN_ERROR);
	CHECK_STR(sp_in_error(in), "not a raw stream (bad magic) at byte 0 of 'stdin'");
	sp_in_close(in);

	CHECK(header(&uh, sizeof(uh), &in) == SP_IN_OTHER);
	CHECK_STR(sp_in_kind(in), "unwound");
	sp_in_close(in);

	CHECK(header("# stackpulse symbolized 1\n", 26, &in) == SP_IN_OTHER);
	CHECK_STR(sp_in_kind(in), "symbolized");
	sp_in_close(in);

	h.h.version = 99;
	CHECK(header(&h, sizeof(h), &in) == SP_IN_ERROR);
	CHECK_STR(sp_in_error(in), "raw stream version 99 is not supported (this build reads 1..1): upgrade stackpulse at byte 8 of 'stdin'");
	sp_in_close(in);
	h.h.version = 1;

	CHECK(header(&h, 40, &in) == SP_IN_ERROR);
	CHECK_STR(sp_in_error(in), "truncated stream header: need 120 bytes, have 40 at byte 40 of 'stdin'");
	sp_in_close(in);

	h.h.header_size = 12;
	CHECK(header(&h, sizeof(h), &in) == SP_IN_ERROR);
	sp_in_close(in);
	h.h.header_size = sizeof(h);

	/* a header, one good record, then one whose size lies */
	memcpy(buf, &h, sizeof(h));
	r = (struct sp_rec_hdr *)(buf + sizeof(h));
	r->type = SP_REC_LOST;
	r->size = sizeof(struct sp_lost_rec);
	memset(r + 1, 0, r->size - 8);
	r = (struct sp_rec_hdr *)((uint8_t *)r + r->size);
	r->type = SP_REC_COMM;
	r->size = 1000;
	CHECK(header(buf, sizeof(h) + 32 + 48, &in) == SP_IN_OK);
	CHECK(sp_in_next(in, &rec) == 1 && rec->type == SP_REC_LOST);
	CHECK(sp_in_rec_offset(in) == sizeof(h));
	CHECK(sp_in_next(in, &rec) == SP_IN_ERROR);
	CHECK_STR(sp_in_error(in), "truncated record (type 3): need 1000 bytes, have 48 at byte 152 of 'stdin'");
	sp_in_close(in);

	r->size = 13;		/* not a multiple of 8 */
	CHECK(header(buf, sizeof(h) + 32 + 48, &in) == SP_IN_OK);
	CHECK(sp_in_next(in, &rec) == 1);
	CHECK(sp_in_next(in, &rec) == SP_IN_ERROR);
	CHECK_STR(sp_in_error(in), "bad record size 13 (type 3): must be a multiple of 8 in 8..16777216 at byte 152 of 'stdin'");
	sp_in_close(in);

	/* a record header cut in half */
	CHECK(header(buf, sizeof(h) + 32 + 4, &in) == SP_IN_OK);
	CHECK(sp_in_next(in, &rec) == 1);
	CHECK(sp_in_next(in, &rec) == SP_IN_ERROR);
	CHECK_STR(sp_in_error(in), "truncated record header: need 8 bytes, have 4 at byte 152 of 'stdin'");
	sp_in_close(in);

	/* clean end after a whole record */
	CHECK(header(buf, sizeof(h) + 32, &in) == SP_IN_OK);
	CHECK(sp_in_next(in, &rec) == 1);
	CHECK(sp_in_next(in, &rec) == 0);
	CHECK(sp_in_fail(in, "LOST record too short") == SP_IN_ERROR);
	sp_in_close(in);
	sp_in_close(NULL);
	test_records();
	return unit_done("test-io");
}
