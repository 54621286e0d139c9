/* SPDX-License-Identifier: MIT */
/* sp-record: sample running processes and write the raw stream. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "io.h"
#include "perf.h"
#include "record.h"

#define MAX_PID 4194304		/* PID_MAX_LIMIT */
#define CHECK_NS (100 * 1000 * 1000ull)

static struct options {
	pid_t *pids;
	size_t npids;
	struct sp_record_opts rec;
	uint64_t duration_ns;	/* 0: until interrupted or the targets exit */
	const char *output;
} opt = {
	.output = "-",
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static void usage(void)
{
	printf("usage: %s -p PID[,PID...] [-F HZ] [--stack-size BYTES] [-d SECONDS]\n"
	       "                 [-e EVENT] [-m PAGES] [-o FILE] [--no-kernel]\n"
	       "       %s -h | -V\n"
	       "\n"
	       "Sample every thread of running processes, and the threads and children they\n"
	       "create, with perf_event_open(2); write the raw stream for sp-unwind.\n"
	       "\n"
	       "  -p, --pid PID[,PID...]   processes to sample\n"
	       "  -F, --freq HZ            samples per second of each thread's cpu time,\n"
	       "                           1..%u (default %u)\n"
	       "      --stack-size BYTES   user stack copied per sample, a multiple of 8 in\n"
	       "                           8..%u (default %u)\n"
	       "  -d, --duration SECONDS   stop after this long (default: at SIGINT or SIGTERM,\n"
	       "                           or when every process has exited)\n"
	       "  -e, --event EVENT        %s (default cpu-clock)\n"
	       "  -m, --mmap-pages PAGES   ring buffer data pages per cpu, a power of 2 in\n"
	       "                           1..%u (default %u)\n"
	       "  -o, --output FILE        write to FILE instead of standard output\n"
	       "      --no-kernel          do not record kernel callchains\n"
	       "  -h, --help               show this help and exit\n"
	       "  -V, --version            show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 some events were lost, 2 fatal error, 64 usage error.\n",
	       sp_prog, sp_prog, SP_RECORD_MAX_FREQ, SP_RECORD_DEFAULT_FREQ,
	       SP_RECORD_MAX_STACK, SP_RECORD_DEFAULT_STACK,
	       sp_perf_event_names(), SP_RECORD_MAX_PAGES,
	       SP_RECORD_DEFAULT_PAGES);
}

static void add_pids(char *list)
{
	char *save = NULL, *s;
	const char *why;
	uint64_t v;

	for (s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		pid_t *p;

		why = sp_parse_u64(s, 1, MAX_PID, &v);
		if (why)
			sp_usage_error("invalid pid '%s': %s", s, why);
		p = realloc(opt.pids, (opt.npids + 1) * sizeof(*p));
		if (!p)
			sp_die("out of memory");
		opt.pids = p;
		opt.pids[opt.npids++] = (pid_t)v;
	}
	if (!opt.npids)
		sp_usage_error("invalid pid '%s': must be 1..%u", list, MAX_PID);
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_STACK = 256, OPT_NO_KERNEL };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "stack-size", required_argument, NULL, OPT_STACK },
		{ "duration", required_argument, NULL, 'd' },
		{ "event", required_argument, NULL, 'e' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *why;
	uint32_t type;
	uint64_t v, cfg;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:F:d:e:m:o:hV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'p':
			add_pids(optarg);
			break;
		case 'F':
			why = sp_parse_u64(optarg, 1, SP_RECORD_MAX_FREQ, &v);
			if (why)
				sp_usage_error("invalid frequency '%s': %s",
					       optarg, why);
			opt.rec.frequency = v;
			break;
		case OPT_STACK:
			if (sp_parse_u64(optarg, 8, SP_RECORD_MAX_STACK, &v) ||
			    v % 8)
				sp_usage_error("invalid stack size '%s': must be a multiple of 8 in 8..%u",
					       optarg, SP_RECORD_MAX_STACK);
			opt.rec.stack_size = (uint32_t)v;
			break;
		case 'd':
			why = sp_parse_seconds(optarg, &opt.duration_ns);
			if (why)
				sp_usage_error("invalid duration '%s': %s",
					       optarg, why);
			break;
		case 'e':
			if (sp_perf_event_lookup(optarg, &type, &cfg))
				sp_usage_error("invalid event '%s': must be %s",
					       optarg, sp_perf_event_names());
			opt.rec.event = optarg;
			break;
		case 'm':
			if (sp_parse_u64(optarg, 1, SP_RECORD_MAX_PAGES, &v) ||
			    (v & (v - 1)))
				sp_usage_error("invalid ring buffer size '%s': must be a power of 2 in 1..%u pages",
					       optarg, SP_RECORD_MAX_PAGES);
			opt.rec.pages = (unsigned)v;
			break;
		case 'o':
			opt.output = optarg;
			break;
		case OPT_NO_KERNEL:
			opt.rec.kernel = SP_RECORD_KERNEL_OFF;
			break;
		case 'h':
			usage();
			exit(SP_EXIT_OK);
		case 'V':
			printf("%s %s\n", sp_prog, SP_VERSION);
			exit(SP_EXIT_OK);
		case ':':
			sp_usage_error("option '%s' needs a value",
				       argv[optind - 1]);
		default:
			if (optopt)
				sp_usage_error("unknown option '-%c'", optopt);
			sp_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		sp_usage_error("unexpected argument '%s'", argv[optind]);
	if (!opt.npids)
		sp_usage_error("no process to sample: give -p PID");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void handle_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll() returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	struct sp_record_stats st;
	struct sp_recorder *rec;
	struct sp_out *out;
	uint64_t now, deadline = 0, last_check;
	long long maxf;
	int e;

	sp_prog = "sp-record";
	sp_record_opts_init(&opt.rec);
	parse_options(argc, argv);

	maxf = sp_record_max_frequency();
	if (maxf > 0 && opt.rec.frequency > (uint64_t)maxf) {
		sp_warn("frequency %llu is above perf_event_max_sample_rate %lld: using %lld",
			(unsigned long long)opt.rec.frequency, maxf, maxf);
		opt.rec.frequency = (uint64_t)maxf;
	}

	out = sp_out_open(opt.output, 1);
	if (!out && errno == ENOTTY)
		sp_die("refusing to write the raw stream to a terminal: redirect it or pipe it into sp-unwind");
	if (!out)
		sp_die("cannot open '%s': %s", opt.output, strerror(errno));
	handle_signals();
	rec = sp_recorder_new(&opt.rec, out);
	if (!rec)
		sp_die("out of memory");
	e = sp_recorder_attach(rec, opt.pids, opt.npids);
	if (e == -EPIPE)
		goto reader_gone;
	if (e)
		sp_die("%s", sp_recorder_error(rec));

	now = last_check = mono_ns();
	if (opt.duration_ns)
		deadline = now + opt.duration_ns;
	while (!stop) {
		int timeout = 100;

		if (deadline) {
			if (now >= deadline)
				break;
			if (deadline - now < 100 * 1000000ull)
				timeout = (int)((deadline - now + 999999) / 1000000);
		}
		e = sp_recorder_wait(rec, timeout);
		if (e < 0 && e != -EINTR)
			sp_die("cannot wait for the ring buffers: %s",
			       strerror(-e));
		e = sp_recorder_consume(rec);
		if (e == -EPIPE)
			goto reader_gone;
		if (e)
			sp_die("%s", sp_recorder_error(rec));
		now = mono_ns();
		if (now - last_check >= CHECK_NS) {
			last_check = now;
			if (!sp_recorder_active(rec))
				break;
		}
	}

	e = sp_recorder_finish(rec, &st);
	if (e == -EPIPE)
		goto reader_gone;
	if (e)
		sp_die("%s", sp_recorder_error(rec));
	e = sp_out_close(out);
	out = NULL;
	if (e == -EPIPE)
		goto reader_gone;
	if (e)
		sp_die("cannot write '%s': %s", opt.output, strerror(-e));
	sp_recorder_free(rec);
	free(opt.pids);
	if (st.lost) {
		sp_warn("%llu samples, %llu lost events, %llu threads, %.2f s; raise -m or lower -F to lose none",
			(unsigned long long)st.samples,
			(unsigned long long)st.lost,
			(unsigned long long)st.threads,
			st.duration_ns / 1e9);
		return SP_EXIT_PARTIAL;
	}
	sp_warn("%llu samples, 0 lost events, %llu threads, %.2f s",
		(unsigned long long)st.samples,
		(unsigned long long)st.threads, st.duration_ns / 1e9);
	return SP_EXIT_OK;

reader_gone:
	/* like any filter whose reader has gone: stop quietly, targets untouched */
	sp_recorder_free(rec);
	sp_out_close(out);
	free(opt.pids);
	return SP_EXIT_OK;
}
