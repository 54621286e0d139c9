/* SPDX-License-Identifier: MIT */
/*
 * test-offcpu: switch records paired into waits: a sampled switch-out
 * gives its stack the wait's nanoseconds, an unsampled one adds to the
 * thread's stackless sum, written once it spans 100 ms or the thread ends;
 * waits open at an EXIT or at the end are closed there; a thread known
 * from the start and blocked throughout gets the whole recording.
 */
#include <string.h>

#include "unwind/offcpu.h"
#include "unit.h"

static struct sp_unw_sample got[64];
static size_t ngot;

static int keep(void *arg, const struct sp_unw_sample *s)
{
	(void)arg;
	if (ngot < sizeof(got) / sizeof(got[0]))
		got[ngot] = *s;
	ngot++;
	return 0;
}

static int sw(struct sp_offcpu *o, uint32_t tid, uint64_t t, uint32_t flags)
{
	struct sp_switch_rec r = { { SP_REC_SWITCH, sizeof(r) }, t, 7, tid, 1,
				   flags };

	return sp_offcpu_switch(o, &r);
}

#define MS 1000000ull

int main(void)
{
	struct sp_offcpu *o = sp_offcpu_new(1000 * MS, keep, NULL);
	struct sp_offcpu_stats st;

	CHECK(o != NULL);
	/* a sampled wait: the sample, then its switch-out record, then in */
	CHECK(sp_offcpu_fork(o, 7, 8, 1001 * MS) == 0);
	CHECK(sw(o, 8, 1002 * MS, 0) == 0);	/* first run: 1 ms unsampled */
	CHECK(sp_offcpu_sampled(o, 7, 8, 0, 1010 * MS, 42) == 0);
	CHECK(sw(o, 8, 1010 * MS + 500, SP_SWITCH_OUT) == 0);
	CHECK(sw(o, 8, 1040 * MS, 0) == 0);
	CHECK(ngot == 1 && got[0].stack_id == 42 &&
	      got[0].weight == 30 * MS && got[0].time == 1040 * MS &&
	      got[0].hdr.type == SP_REC_OFFCPU && got[0].tid == 8);
	/* unsampled waits add up, written once they span 100 ms */
	CHECK(sw(o, 8, 1050 * MS, SP_SWITCH_OUT) == 0);
	CHECK(sw(o, 8, 1060 * MS, 0) == 0);
	CHECK(ngot == 1);
	CHECK(sw(o, 8, 1100 * MS, SP_SWITCH_OUT) == 0);
	CHECK(sw(o, 8, 1110 * MS, 0) == 0);
	CHECK(ngot == 2 && got[1].stack_id == 0 &&
	      got[1].weight == 21 * MS && got[1].time == 1110 * MS);
	/* a CPU sample of a thread with an open wait: its switch-in was lost */
	CHECK(sw(o, 8, 1200 * MS, SP_SWITCH_OUT) == 0);
	sp_offcpu_running(o, 8);
	CHECK(sw(o, 8, 1300 * MS, 0) == 0);
	CHECK(ngot == 2);
	/* blocked since before the start: from the start */
	CHECK(sw(o, 9, 1500 * MS, 0) == 0);
	/* open at EXIT: closed there, sum written before the EXIT */
	CHECK(sp_offcpu_sampled(o, 7, 9, 1, 1600 * MS, 5) == 0);
	CHECK(sw(o, 9, 1600 * MS, SP_SWITCH_OUT) == 0);
	CHECK(sp_offcpu_exit(o, 9, 1650 * MS) == 0);
	CHECK(ngot == 4 && got[2].weight == 50 * MS && got[2].stack_id == 5 &&
	      got[3].stack_id == 0 && got[3].weight == 500 * MS &&
	      got[3].tid == 9);
	/* known from the start: blocked throughout, or shown running */
	CHECK(sp_offcpu_known(o, 7, 10) == 0 && sp_offcpu_known(o, 7, 11) == 0);
	CHECK(sw(o, 11, 1900 * MS, SP_SWITCH_OUT) == 0);
	CHECK(sw(o, 11, 1950 * MS, 0) == 0);
	CHECK(ngot == 4);
	/* open at the end: closed at the end */
	CHECK(sw(o, 8, 1700 * MS, SP_SWITCH_OUT) == 0);
	CHECK(sp_offcpu_finish(o, 2000 * MS) == 0);
	CHECK(ngot == 7 && got[4].tid == 8 && got[4].stack_id == 0 &&
	      got[4].weight == 300 * MS && got[4].time == 2000 * MS);
	CHECK(got[5].tid == 10 && got[5].weight == 1000 * MS);
	CHECK(got[6].tid == 11 && got[6].weight == 50 * MS);
	sp_offcpu_stats(o, &st);
	CHECK(st.waits == 9 && st.sampled == 2 && st.unpaired == 1);
	CHECK(st.sampled_ns == 80 * MS);
	sp_offcpu_free(o);
	return unit_done("test-offcpu");
}
