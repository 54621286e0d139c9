/* SPDX-License-Identifier: MIT */
/*
 * test-alive: a process ends with its last thread, not its main one, and
 * is forgotten a second of stream time later, or when its pid is reused.
 */
#include <stdlib.h>
#include <string.h>

#include "format/alive.h"
#include "format/python.h"
#include "records.h"
#include "unit.h"

#define S 1000000000ull		/* a second of stream time */

static uint32_t forgotten[16];
static int nforgotten;

static void on_forget(void *arg, uint32_t pid)
{
	CHECK(arg == (void *)forgotten);
	if (nforgotten < 16)
		forgotten[nforgotten] = pid;
	nforgotten++;
}

static void task(struct sp_alive *a, int type, uint64_t time, uint32_t pid,
		 uint32_t ppid, uint32_t tid, uint32_t flags)
{
	struct sp_task_rec t = unit_task_rec(type, time, pid, ppid, tid, flags);

	CHECK(sp_alive_apply(a, &t.hdr) == 0);
}

static void comm(struct sp_alive *a, uint64_t time, uint32_t pid,
		 uint32_t tid, uint32_t flags)
{
	struct sp_comm_rec c = unit_comm_rec(time, pid, tid, flags, "t");

	CHECK(sp_alive_apply(a, &c.hdr) == 0);
}

static void mmap_at(struct sp_alive *a, uint64_t time, uint32_t pid)
{
	union {
		struct sp_mmap_rec m;
		uint8_t b[sizeof(struct sp_mmap_rec) + 8];
	} u;

	memset(&u, 0, sizeof(u));
	u.m.hdr.type = SP_REC_MMAP;
	u.m.hdr.size = sizeof(u);
	u.m.time = time;
	u.m.pid = u.m.tid = pid;
	u.m.len = 0x1000;
	CHECK(sp_alive_apply(a, &u.m.hdr) == 0);
}

static size_t threads(const struct sp_alive *a, uint32_t pid)
{
	size_t n;

	sp_alive_threads(a, pid, &n);
	return n;
}

int main(void)
{
	struct sp_alive *a = sp_alive_new(on_forget, forgotten);
	int i;

	CHECK(a != NULL);
	if (!a)
		return unit_done("test-alive");

	/* a parent (100) forks 200, which starts a thread 201 */
	mmap_at(a, 0, 100);
	task(a, SP_REC_FORK, 1 * S, 200, 100, 200, 0);
	task(a, SP_REC_FORK, 1 * S, 200, 200, 201, 0);
	CHECK(sp_alive_known(a, 100) && sp_alive_known(a, 200));
	CHECK(threads(a, 200) == 2 && threads(a, 100) == 1);

	/* its main thread exits first: the process runs on in 201 */
	task(a, SP_REC_EXIT, 2 * S, 200, 100, 200, 0);
	CHECK(!sp_alive_ended(a, 200) && threads(a, 200) == 1);
	task(a, SP_REC_EXIT, 5 * S + S / 2, 100, 99, 100, 0);
	CHECK(sp_alive_ended(a, 100));

	/* the EXIT of its last thread ends it; it lingers for a second */
	task(a, SP_REC_EXIT, 6 * S, 200, 200, 201, 0);
	CHECK(sp_alive_ended(a, 200) && threads(a, 200) == 0);
	CHECK(nforgotten == 0 && sp_alive_count(a) == 2);
	/* times go by records: one 1 s after 100 ended forgets it */
	mmap_at(a, 6 * S + S / 2, 300);
	CHECK(!sp_alive_known(a, 100) && sp_alive_known(a, 200));
	CHECK(nforgotten == 1 && forgotten[0] == 100);
	mmap_at(a, 6 * S + S / 2 + 1, 300);
	task(a, SP_REC_FORK, 7 * S - 1, 301, 300, 301, 0);
	CHECK(sp_alive_known(a, 200));
	task(a, SP_REC_FORK, 7 * S, 302, 300, 302, 0);
	CHECK(!sp_alive_known(a, 200) && nforgotten == 2 && forgotten[1] == 200);

	/* a pid named again after that is a new process with one thread */
	CHECK(sp_alive_see(a, 200) == 0);
	CHECK(sp_alive_known(a, 200) && threads(a, 200) == 1);
	CHECK(sp_alive_see(a, 200) == 0 && threads(a, 200) == 1);

	/* an ended process that a thread's COMM names again lives on */
	task(a, SP_REC_EXIT, 8 * S, 301, 300, 301, 0);
	CHECK(sp_alive_ended(a, 301));
	comm(a, 8 * S, 301, 305, 0);
	CHECK(!sp_alive_ended(a, 301));
	task(a, SP_REC_FORK, 20 * S, 303, 300, 303, 0);
	CHECK(sp_alive_known(a, 301) && nforgotten == 2);
	/* and ends with that thread; the EXIT of an unknown one moves it */
	task(a, SP_REC_EXIT, 21 * S, 301, 300, 305, 0);
	CHECK(sp_alive_ended(a, 301));
	task(a, SP_REC_EXIT, 21 * S + S / 2, 301, 300, 306, 0);
	task(a, SP_REC_FORK, 22 * S + S / 4, 304, 300, 304, 0);
	CHECK(sp_alive_known(a, 301));
	task(a, SP_REC_FORK, 22 * S + S / 2, 307, 300, 307, 0);
	CHECK(!sp_alive_known(a, 301) && nforgotten == 3);

	/*
	 * exec from a thread that is not the main one: the others exit, the
	 * main thread too, and the one that ran exec takes the pid
	 */
	task(a, SP_REC_FORK, 23 * S, 400, 300, 400, 0);
	task(a, SP_REC_FORK, 23 * S, 400, 400, 401, 0);
	task(a, SP_REC_FORK, 23 * S, 400, 400, 402, 0);
	task(a, SP_REC_EXIT, 24 * S, 400, 400, 402, 0);
	task(a, SP_REC_EXIT, 24 * S, 400, 300, 400, 0);
	CHECK(!sp_alive_ended(a, 400) && threads(a, 400) == 1);
	comm(a, 24 * S, 400, 400, SP_COMM_EXEC);
	CHECK(threads(a, 400) == 1);
	task(a, SP_REC_EXIT, 25 * S, 400, 300, 400, 0);
	CHECK(sp_alive_ended(a, 400));
	/* a synthesized exec (what /proc said) ends no thread */
	task(a, SP_REC_FORK, 25 * S, 410, 300, 410, 0);
	task(a, SP_REC_FORK, 25 * S, 410, 410, 411, 0);
	comm(a, 25 * S, 410, 410, SP_COMM_EXEC | SP_REC_SYNTH);
	CHECK(threads(a, 410) == 2);

	/* a FORK that gives the pid of 304 to a new process forgets it */
	task(a, SP_REC_FORK, 25 * S, 304, 300, 304, 0);
	CHECK(nforgotten == 4 && forgotten[3] == 304);
	CHECK(sp_alive_known(a, 304) && !sp_alive_ended(a, 304));
	/* a new thread, or what /proc said when recording began, does not */
	task(a, SP_REC_FORK, 25 * S, 304, 304, 308, 0);
	task(a, SP_REC_FORK, 25 * S, 304, 1, 304, SP_REC_SYNTH);
	CHECK(nforgotten == 4 && threads(a, 304) == 2);
	/* the EXIT of a process never named forgets nothing, adds nothing */
	task(a, SP_REC_EXIT, 25 * S, 999, 1, 999, 0);
	CHECK(!sp_alive_known(a, 999));

	/*
	 * a PERFMAP or PYCODE names its process as its first record does:
	 * its main thread's EXIT then ends it, and every reader forgets it
	 * at the same record (else one keeps stacks another forgot)
	 */
	{
		struct sp_perfmap_rec pm = { { SP_REC_PERFMAP, sizeof(pm) } };
		struct sp_pycode_rec pc = { { SP_REC_PYCODE, sizeof(pc) } };

		pm.time = 25 * S;
		pm.pid = 500;
		pc.time = 25 * S;
		pc.pid = 501;
		pc.id = 1;
		CHECK(sp_alive_apply(a, &pm.hdr) == 0);
		CHECK(sp_alive_apply(a, &pc.hdr) == 0);
		CHECK(sp_alive_known(a, 500) && threads(a, 500) == 1);
		CHECK(sp_alive_known(a, 501) && threads(a, 501) == 1);
		task(a, SP_REC_EXIT, 25 * S, 500, 1, 500, 0);
		task(a, SP_REC_EXIT, 25 * S, 501, 1, 501, 0);
		CHECK(sp_alive_ended(a, 500) && sp_alive_ended(a, 501));
		/* they end nothing themselves: a late one forgets no one */
		pm.time = 40 * S;
		CHECK(sp_alive_apply(a, &pm.hdr) == 0);
		CHECK(sp_alive_known(a, 501) && nforgotten == 4);
	}

	/* thousands of short lives, pids reused: it holds those alive */
	for (i = 0; i < 20000; i++) {
		uint32_t pid = 10000 + (uint32_t)(i % 5000);
		uint64_t t = 30 * S + (uint64_t)i * S / 100;

		task(a, SP_REC_FORK, t, pid, 300, pid, 0);
		task(a, SP_REC_FORK, t, pid, pid, pid + 100000, 0);
		task(a, SP_REC_EXIT, t, pid, pid, pid + 100000, 0);
		task(a, SP_REC_EXIT, t, pid, 300, pid, 0);
	}
	CHECK(sp_alive_count(a) < 120);
	CHECK(nforgotten > 19800);
	i = nforgotten;
	sp_alive_free(a);
	CHECK(nforgotten == i);		/* freeing calls no callback */
	sp_alive_free(NULL);
	return unit_done("test-alive");
}
