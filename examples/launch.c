/* SPDX-License-Identifier: MIT */
/*
 * launch: the second tutorial.  Start a command suspended, record it from
 * its first instruction, and print how it ended and how many samples.
 *
 *	launch SPOOL COMMAND [ARGS...]
 */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include <stackpulse.h>

int main(int argc, char **argv)
{
	struct sp_perf_recorder_options o;
	struct sp_perf_recorder *rec;
	struct sp_perf_summary sum;
	struct sp_launch *child;
	time_t timeout;
	int status, e;

	if (argc < 3) {
		fprintf(stderr, "usage: launch SPOOL COMMAND [ARGS...]\n");
		return 64;
	}
	child = sp_launch_suspended(argv + 2, NULL, NULL);
	if (!child) {
		perror("launch");
		return 2;
	}
	sp_perf_recorder_options_init(&o);
	o.frequency = 199;
	o.stack_size = 60 * 1024;
	e = sp_perf_recorder_attach(sp_launch_pid(child), argv[1],
				    SP_ATTACH_ENABLE_ON_EXEC, &o, &rec);
	if (e) {
		fprintf(stderr, "launch: %s\n",
			rec ? sp_perf_recorder_error(rec) : "out of memory");
		sp_perf_recorder_free(rec);
		sp_launch_free(child);
		return 2;
	}
	e = sp_launch_resume(child);
	if (e) {
		fprintf(stderr, "launch: cannot run '%s'\n", argv[2]);
		sp_perf_recorder_free(rec);
		sp_launch_free(child);
		return 127;
	}
	timeout = time(NULL) + 30;
	for (;;) {
		if (sp_launch_try_wait(child, &status, 0) == 1)
			break;
		if (time(NULL) >= timeout) {
			sp_perf_recorder_disable(rec);
			fprintf(stderr, "launch: child did not exit before timeout\n");
			sp_launch_kill(child, SIGKILL);
			sp_launch_try_wait(child, &status, 1);
			break;
		}
		sp_perf_recorder_wait(rec, 100);
		sp_perf_recorder_consume_available(rec);
	}
	sp_perf_recorder_consume_available(rec);
	e = sp_perf_recorder_finish(rec, &sum);
	if (e)
		fprintf(stderr, "launch: %s\n", sp_perf_recorder_error(rec));
	printf("status=%d samples=%llu lost=%llu stacks=%llu\n",
	       sp_launch_exit_code(status), (unsigned long long)sum.samples,
	       (unsigned long long)sum.lost_events,
	       (unsigned long long)sum.stacks);
	sp_perf_recorder_free(rec);
	sp_launch_free(child);
	return e ? 2 : 0;
}
