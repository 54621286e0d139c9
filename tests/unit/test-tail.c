/* SPDX-License-Identifier: MIT */
/*
 * test-tail: TAIL records: their checks, and the per-thread tails the
 * writer shrinks them against and the reader rebuilds them from.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/tail.h"
#include "unit.h"

#define BIG 20000

/* A whole TAIL record of the len bytes at start. */
static struct sp_tail_rec *make(uint32_t pid, uint32_t tid, uint64_t time,
				uint64_t start, uint32_t len,
				const uint8_t *bytes)
{
	struct sp_tail_rec *r = calloc(1, sizeof(*r) + sp_align8(len) + 8);

	r->hdr.type = SP_REC_TAIL;
	r->hdr.size = sp_align8(sizeof(*r) + len);
	r->time = time;
	r->pid = pid;
	r->tid = tid;
	r->start = start;
	r->len = len;
	memcpy(r->data, bytes, len);
	return r;
}

/*
 * Encode rec with the writer's tails, decode the result with the reader's,
 * and check that the reader holds what the writer read.  Returns kept.
 */
static uint32_t round_trip(struct sp_tails *w, struct sp_tails *rd,
			   struct sp_tail_rec *rec)
{
	uint8_t *orig = malloc(rec->len + 1);
	uint32_t len = rec->len, tid = rec->tid;
	const struct sp_tail *t;
	const char *why = NULL;

	memcpy(orig, rec->data, len);
	CHECK(sp_tails_encode(w, rec) == 0);
	CHECK(rec->hdr.size == sp_align8(sizeof(*rec) + len - rec->kept));
	CHECK(sp_tail_check(&rec->hdr) == NULL);
	CHECK(sp_tails_decode(rd, &rec->hdr, &why) == 0 && !why);
	t = sp_tails_get(rd, tid);
	CHECK(t && t->len == len && t->start == rec->start &&
	      !memcmp(t->bytes, orig, len));
	t = sp_tails_get(w, tid);
	CHECK(t && t->len == len && !memcmp(t->bytes, orig, len));
	CHECK(sp_tails_bytes(w) == sp_tails_bytes(rd));
	free(orig);
	return rec->kept;
}

static void test_checks(void)
{
	uint8_t b[64] = { 1, 2, 3 };
	struct sp_tail_rec *r = make(1, 1, 5, 0x1000, 64, b);

	CHECK(sp_tail_check(&r->hdr) == NULL);
	r->hdr.size = 32;
	CHECK_STR(sp_tail_check(&r->hdr), "TAIL record too short");
	r->hdr.size = sizeof(*r) + 56;
	CHECK_STR(sp_tail_check(&r->hdr), "TAIL bytes exceed its record size");
	r->kept = 8;		/* 56 bytes carried: fits again */
	CHECK(sp_tail_check(&r->hdr) == NULL);
	r->kept = 65;
	CHECK_STR(sp_tail_check(&r->hdr), "TAIL keeps more bytes than it has");
	r->kept = 0;
	r->hdr.size = sizeof(*r) + 64;
	r->len = SP_TAIL_MAX + 8;
	CHECK_STR(sp_tail_check(&r->hdr), "TAIL longer than 16 MiB");
	r->len = 64;
	r->start = UINT64_MAX - 32;
	CHECK_STR(sp_tail_check(&r->hdr), "TAIL range wraps");
	free(r);
}

static void test_round_trips(void)
{
	struct sp_tails *w = sp_tails_new(), *rd = sp_tails_new();
	uint8_t *a = malloc(BIG), *b = malloc(BIG);
	struct sp_tail_rec *r;
	const char *why;
	uint32_t i, kept;

	CHECK(w && rd && a && b);
	for (i = 0; i < BIG; i++)
		a[i] = (uint8_t)(i * 7 + i / 251);

	/* the first tail of a thread is written whole */
	r = make(10, 11, 1, 0x7000, BIG, a);
	CHECK(round_trip(w, rd, r) == 0);
	free(r);

	/* the same bytes again: nothing but the header */
	r = make(10, 11, 2, 0x7000, BIG, a);
	CHECK(round_trip(w, rd, r) == BIG);
	CHECK(r->hdr.size == sizeof(*r));
	free(r);

	/* the same range with a changed byte: the bytes up to it */
	r = make(10, 11, 2, 0x7000, BIG, a);
	r->data[100] ^= 0x55;
	CHECK(round_trip(w, rd, r) == BIG - 101);
	free(r);
	r = make(10, 11, 2, 0x7000, BIG, a);
	CHECK(round_trip(w, rd, r) == BIG - 101);
	free(r);

	/* deeper now (starts lower), its old part the same: only the new bytes */
	memcpy(b, a, BIG);
	r = make(10, 11, 3, 0x7000 - 1000, BIG, b);
	memmove(r->data + 1000, a, BIG - 1000);
	memset(r->data, 0xee, 1000);
	r->len = BIG;
	kept = round_trip(w, rd, r);
	CHECK(kept == BIG - 1000);
	free(r);

	/* shallower, with a changed word in the middle: kept stops there */
	r = make(10, 11, 4, 0x7000, BIG - 1000, a);
	r->data[5000] ^= 0xff;
	kept = round_trip(w, rd, r);
	CHECK(kept == BIG - 1000 - 5001);
	free(r);

	/* ending above the previous tail: nothing can be kept */
	r = make(10, 11, 5, 0x7000 + 64, BIG, a);
	CHECK(round_trip(w, rd, r) == 0);
	free(r);

	/* another thread keeps nothing of this one's */
	r = make(10, 12, 6, 0x7000 + 64, BIG, a);
	CHECK(round_trip(w, rd, r) == 0);
	free(r);

	/* a thread's id reused by another process keeps nothing either */
	sp_tails_forget(w, 12);
	sp_tails_forget(rd, 12);
	CHECK(!sp_tails_get(w, 12) && !sp_tails_get(rd, 12));
	r = make(99, 11, 7, 0x7000 + 64, BIG, a);
	CHECK(round_trip(w, rd, r) == 0);
	free(r);

	/* a reader refuses kept bytes that no earlier tail holds */
	r = make(99, 11, 8, 0x7000, 64, a);
	r->kept = 64;
	r->hdr.size = sizeof(*r);
	CHECK(sp_tails_decode(rd, &r->hdr, &why) == -EINVAL);
	CHECK_STR(why, "TAIL keeps bytes its thread's previous tail does not hold");
	r->pid = 98;		/* and those of another process */
	r->start = 0x7000 + 64;
	CHECK(sp_tails_decode(rd, &r->hdr, &why) == -EINVAL);
	r->tid = 13;		/* and of a thread that had none */
	CHECK(sp_tails_decode(rd, &r->hdr, &why) == -EINVAL);
	/* ... and checks the record first */
	r->kept = 65;
	CHECK(sp_tails_decode(rd, &r->hdr, &why) == -EINVAL);
	CHECK_STR(why, "TAIL keeps more bytes than it has");
	free(r);

	/* an empty tail is a tail */
	r = make(5, 5, 9, 0x9000, 0, a);
	CHECK(round_trip(w, rd, r) == 0);
	free(r);

	sp_tails_free(w);
	sp_tails_free(rd);
	sp_tails_free(NULL);
	free(a);
	free(b);
}

int main(void)
{
	test_checks();
	test_round_trips();
	return unit_done("test-tail");
}
