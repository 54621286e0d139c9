/* SPDX-License-Identifier: MIT */
/*
 * attach: the first tutorial.  Attach to a running process for some
 * seconds, spool what it does, then print its first ten sample stacks.
 *
 *	attach PID SECONDS SPOOL
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <stackpulse.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int print_frame(void *arg, const struct sp_perf_frame *f)
{
	if (!(f->flags & SP_FRAME_HIDDEN_DEFAULT))
		printf("  %s\n", f->func_name);
	return 0;
}

int main(int argc, char **argv)
{
	struct sp_perf_recorder_options o;
	struct sp_perf_recorder *rec;
	struct sp_perf_symbolizer *sym;
	struct sp_perf_summary sum;
	struct sp_spool_sample s;
	struct sp_spool *spool;
	double deadline;
	pid_t pid;
	int i, e;

	if (argc != 4) {
		fprintf(stderr, "usage: attach PID SECONDS SPOOL\n");
		return 64;
	}
	pid = atoi(argv[1]);
	deadline = now() + atof(argv[2]);

	sp_perf_recorder_options_init(&o);
	o.frequency = 99;
	o.stack_size = 60 * 1024;
	e = sp_perf_recorder_attach(pid, argv[3], SP_ATTACH_STOP, &o, &rec);
	if (e) {
		fprintf(stderr, "attach: %s\n",
			rec ? sp_perf_recorder_error(rec) : "out of memory");
		return 2;
	}
	while (now() < deadline && sp_perf_recorder_process_is_active(rec, pid)) {
		if (sp_perf_recorder_wait(rec, 100) < 0 ||
		    sp_perf_recorder_consume_available(rec) < 0)
			break;
	}
	e = sp_perf_recorder_finish(rec, &sum);
	if (e)
		fprintf(stderr, "attach: %s\n", sp_perf_recorder_error(rec));
	sp_perf_recorder_free(rec);
	if (e)
		return 2;

	if (sp_spool_open(argv[3], &spool) ||
	    sp_perf_symbolizer_for_spool(argv[3], &sym)) {
		fprintf(stderr, "attach: cannot read '%s'\n", argv[3]);
		return 2;
	}
	for (i = 0; i < 10 && sp_spool_next_sample(spool, &s) == 1; i++) {
		printf("pid=%u tid=%u\n", s.pid, s.tid);
		sp_perf_symbolizer_for_each_frame(sym, s.pid, s.stack_id,
						  print_frame, NULL);
	}
	sp_perf_symbolizer_free(sym);
	sp_spool_close(spool);
	return 0;
}
