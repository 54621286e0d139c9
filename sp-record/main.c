/* SPDX-License-Identifier: MIT */
/* sp-record: sample running processes, or a command from its exec, and write the raw stream. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "cli/cli.h"
#include "elf/bidstore.h"
#include "os/launch.h"
#include "os/perf.h"
#include "record/record.h"

#define MAX_PID 4194304		/* PID_MAX_LIMIT */
#define CHECK_NS (100 * 1000 * 1000ull)
#define GRACE_NS (3 * 1000 * 1000 * 1000ull)	/* SIGTERM to SIGKILL */

static struct options {
	pid_t *pids;
	size_t npids;
	char **command;		/* argv of COMMAND, or NULL */
	struct sp_record_opts rec;
	int attach_given;
	uint64_t duration_ns;	/* 0: until interrupted or the targets exit */
	uint64_t timeout_ns;	/* 0: let COMMAND run as long as it likes */
	const char *output;
	const char *command_stdout;
	int no_cache;
	char cache_dir[4096];	/* "": the default */
	int all;		/* -a: every process of the host */
	int off_cpu_min_given;
} opt = {
	.output = "-",
};

static volatile sig_atomic_t stop;
static volatile pid_t child_pid;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!child_pid) {
		stop = sig;
		return;
	}
	/*
	 * A terminal's ^C already reached COMMAND, which shares our process
	 * group; a kill(1) aimed at us is passed on.
	 */
	if (si->si_code != SI_KERNEL)
		kill(child_pid, sig);
}

static void on_child(int sig)
{
	(void)sig;	/* only to interrupt poll() */
}

static void usage(void)
{
	printf("usage: %s -p PID[,PID...] [--attach stop|live] [options]\n"
	       "       %s -a [-p PID,...] [--tid TID,...] [--comm NAME,...] [--cgroup DIR]\n"
	       "             [--include-self] [options]\n"
	       "       %s [options] [--timeout SECONDS] [--command-stdout FILE] -- COMMAND [ARGS...]\n"
	       "       %s -h | -V\n"
	       "\n"
	       "Sample every thread of running processes, of the whole host, or of COMMAND from\n"
	       "its exec, and the threads and children they create, with perf_event_open(2);\n"
	       "write the raw stream for sp-unwind.\n"
	       "\n"
	       "  -p, --pid PID[,PID...]   processes to sample (with -a: to keep, and the\n"
	       "                           processes they start)\n"
	       "      --attach MODE        stop: pause every thread for the milliseconds of\n"
	       "                           attaching (default); live: do not pause\n"
	       "  -a, --all-cpus           every process of the host, those started later too\n"
	       "                           (root, CAP_PERFMON or perf_event_paranoid <= 0);\n"
	       "                           not sp-record and the pipeline it writes into\n"
	       "      --tid TID[,TID...]   with -a: only these threads (and those they\n"
	       "                           start), besides the processes of -p\n"
	       "      --comm NAME[,NAME...]  with -a: only threads of these names\n"
	       "      --cgroup DIR         with -a: only the tasks of this cgroup, by its\n"
	       "                           directory (/sys/fs/cgroup/...)\n"
	       "      --include-self       with -a: sample sp-record and its pipeline too\n"
	       "  -F, --freq HZ            samples per second of each thread's cpu time,\n"
	       "                           1..%u (default %u)\n"
	       "      --stack-size BYTES   user stack copied per sample, a multiple of 8 in\n"
	       "                           8..%u (default %u)\n"
	       "      --stack-tail BYTES   of a stack deeper than its copy, read up to BYTES\n"
	       "                           more from the live process when the sample is\n"
	       "                           drained, 0..%u (default %u; 0: off)\n"
	       "  -d, --duration SECONDS   stop recording after this long (default: at SIGINT,\n"
	       "                           SIGTERM or SIGHUP, or when every process has\n"
	       "                           exited; with -a at a signal only); COMMAND runs on\n"
	       "      --timeout SECONDS    end COMMAND after this long: SIGTERM, then SIGKILL\n"
	       "                           3 s later\n"
	       "      --command-stdout FILE  COMMAND's standard output when the stream is on\n"
	       "                           ours (default: our standard error)\n"
	       "  -e, --event EVENT        %s (default cpu-clock)\n"
	       "      --off-cpu            also record the time threads spend off the CPU\n"
	       "                           (blocked or waiting to run), with their stacks at\n"
	       "                           each switch-out where permitted (root, CAP_PERFMON\n"
	       "                           or perf_event_paranoid <= 1), else without\n"
	       "      --off-cpu-only       only the time off the CPU, no CPU samples\n"
	       "      --off-cpu-min TIME   no stack for a wait shorter than TIME (ns, us, ms, s;\n"
	       "                           at most 1s; default 0): its time is kept unsampled\n"
	       "      --python WHEN        CPython's own frames, read in each sample of a\n"
	       "                           CPython 3.11 to 3.13 (root, or CAP_BPF and\n"
	       "                           CAP_PERFMON): auto (default) or off\n"
	       "  -m, --mmap-pages PAGES   ring buffer data pages per cpu, a power of 2 in\n"
	       "                           1..%u (default %u)\n"
	       "  -o, --output FILE        write to FILE instead of standard output\n"
	       "      --no-kernel          do not record kernel callchains\n"
	       "      --cache-dir DIR      keep copies of mapped binaries deleted or replaced\n"
	       "                           while recording in the build-id cache DIR (default\n"
	       "                           $XDG_CACHE_HOME/stackpulse, else ~/.cache/stackpulse)\n"
	       "      --cache-size SIZE    evict the oldest copies to keep the cache under\n"
	       "                           SIZE bytes (K, M, G suffixes; 0: no limit; default 1G)\n"
	       "      --no-cache           keep no copies\n"
	       "  -h, --help               show this help and exit\n"
	       "  -V, --version            show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 some events were lost, 2 fatal error, 64 usage error.\n"
	       "With COMMAND: COMMAND's exit status (128 + signal when killed), 127 when it is\n"
	       "not found, 126 when it cannot be executed, 2 when recording failed.\n",
	       sp_prog, sp_prog, sp_prog, sp_prog, SP_RECORD_MAX_FREQ, SP_RECORD_DEFAULT_FREQ,
	       SP_RECORD_MAX_STACK, SP_RECORD_DEFAULT_STACK,
	       SP_RECORD_MAX_TAIL, SP_RECORD_DEFAULT_TAIL,
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

/* TID[,TID...]: thread ids. */
static void check_tids(const char *list)
{
	char buf[32];
	const char *p = list, *why;
	uint64_t v;
	size_t len;

	for (;; p += len + 1) {
		len = strcspn(p, ",");
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < 31 ? len : 31), p);
		why = len < 31 ? sp_parse_u64(buf, 1, MAX_PID, &v) : "too long";
		if (why)
			sp_usage_error("invalid thread id '%.*s' in --tid: %s",
				       (int)len, p, why);
		if (!p[len])
			break;
	}
}

/* NAME[,NAME...]: names as the kernel keeps them, 1..15 bytes. */
static void check_comms(const char *list)
{
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, ",");

		if (!n || n > 15)
			sp_usage_error("invalid thread names '%s': each must be 1..15 bytes, as the kernel keeps them",
				       list);
		if (!p[n])
			break;
		p += n + 1;
	}
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_STACK = 256, OPT_NO_KERNEL, OPT_ATTACH, OPT_TIMEOUT,
	       OPT_CMD_STDOUT, OPT_CACHE_DIR, OPT_CACHE_SIZE, OPT_NO_CACHE };
	enum { OPT_STACK_TAIL = 512, OPT_COMM, OPT_CGROUP, OPT_INCLUDE_SELF,
	       OPT_TID, OPT_OFF_CPU, OPT_OFF_CPU_ONLY, OPT_OFF_CPU_MIN,
	       OPT_PYTHON };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "include-self", no_argument, NULL, OPT_INCLUDE_SELF },
		{ "attach", required_argument, NULL, OPT_ATTACH },
		{ "freq", required_argument, NULL, 'F' },
		{ "stack-size", required_argument, NULL, OPT_STACK },
		{ "stack-tail", required_argument, NULL, OPT_STACK_TAIL },
		{ "duration", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "command-stdout", required_argument, NULL, OPT_CMD_STDOUT },
		{ "event", required_argument, NULL, 'e' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "off-cpu-only", no_argument, NULL, OPT_OFF_CPU_ONLY },
		{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
		{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE },
		{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *why;
	uint32_t type;
	uint64_t v, cfg;
	int c;

	opterr = 0;
	/* "+": the first operand is COMMAND, its options are its own */
	while ((c = getopt_long(argc, argv, "+:ap:F:d:e:m:o:hV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'p':
			add_pids(optarg);
			break;
		case 'a':
			opt.all = 1;
			break;
		case OPT_TID:
			check_tids(optarg);
			opt.rec.tids = optarg;
			break;
		case OPT_COMM:
			check_comms(optarg);
			opt.rec.comms = optarg;
			break;
		case OPT_CGROUP:
			opt.rec.cgroup = optarg;
			break;
		case OPT_INCLUDE_SELF:
			opt.rec.include_self = 1;
			break;
		case OPT_ATTACH:
			if (!strcmp(optarg, "stop"))
				opt.rec.attach = SP_RECORD_ATTACH_STOP;
			else if (!strcmp(optarg, "live"))
				opt.rec.attach = SP_RECORD_ATTACH_LIVE;
			else
				sp_usage_error("invalid attach mode '%s': must be stop or live",
					       optarg);
			opt.attach_given = 1;
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
		case OPT_STACK_TAIL:
			why = sp_parse_u64(optarg, 0, SP_RECORD_MAX_TAIL, &v);
			if (why)
				sp_usage_error("invalid stack tail '%s': %s",
					       optarg, why);
			opt.rec.stack_tail = (uint32_t)v;
			break;
		case 'd':
			why = sp_parse_seconds(optarg, &opt.duration_ns);
			if (why)
				sp_usage_error("invalid duration '%s': %s",
					       optarg, why);
			break;
		case OPT_TIMEOUT:
			why = sp_parse_seconds(optarg, &opt.timeout_ns);
			if (why)
				sp_usage_error("invalid timeout '%s': %s",
					       optarg, why);
			break;
		case OPT_CMD_STDOUT:
			opt.command_stdout = optarg;
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
		case OPT_OFF_CPU:
			if (!opt.rec.off_cpu)
				opt.rec.off_cpu = SP_RECORD_OFFCPU_ON;
			break;
		case OPT_OFF_CPU_ONLY:
			opt.rec.off_cpu = SP_RECORD_OFFCPU_ONLY;
			break;
		case OPT_OFF_CPU_MIN:
			why = sp_parse_duration(optarg, &opt.rec.off_cpu_min);
			if (why || opt.rec.off_cpu_min > SP_RECORD_MAX_OFFCPU_MIN)
				sp_usage_error("invalid off-CPU minimum '%s': %s",
					       optarg, why ? why :
					       "must be at most 1s");
			opt.off_cpu_min_given = 1;
			break;
		case OPT_PYTHON:
			if (!strcmp(optarg, "auto"))
				opt.rec.python = SP_RECORD_PYTHON_AUTO;
			else if (!strcmp(optarg, "off"))
				opt.rec.python = SP_RECORD_PYTHON_OFF;
			else
				sp_usage_error("invalid --python '%s': must be auto or off",
					       optarg);
			break;
		case OPT_CACHE_DIR:
			if (!*optarg || strlen(optarg) >= sizeof(opt.cache_dir))
				sp_usage_error("invalid cache directory '%s': must be a path shorter than %zu bytes",
					       optarg, sizeof(opt.cache_dir));
			snprintf(opt.cache_dir, sizeof(opt.cache_dir), "%s", optarg);
			break;
		case OPT_CACHE_SIZE:
			why = sp_parse_size(optarg, &opt.rec.cache_max);
			if (why)
				sp_usage_error("invalid cache size '%s': %s",
					       optarg, why);
			break;
		case OPT_NO_CACHE:
			opt.no_cache = 1;
			break;
		case 'h':
			usage();
			exit(sp_stdout_done());
		case 'V':
			printf("%s %s\n", sp_prog, SP_VERSION);
			exit(sp_stdout_done());
		default:
			sp_bad_option(argv, c);
		}
	}
	if (optind < argc && (opt.npids || opt.all))
		sp_usage_error("unexpected argument '%s'", argv[optind]);
	if (optind < argc) {
		opt.command = argv + optind;
		opt.rec.command = argv[optind];
	}
	if (!opt.npids && !opt.command && !opt.all)
		sp_usage_error("no process to sample: give -p PID, -a or a COMMAND");
	if (!opt.all && (opt.rec.comms || opt.rec.cgroup ||
			 opt.rec.include_self || opt.rec.tids))
		sp_usage_error("--tid, --comm, --cgroup and --include-self choose among the processes of -a");
	if (opt.off_cpu_min_given && !opt.rec.off_cpu)
		sp_usage_error("--off-cpu-min needs --off-cpu or --off-cpu-only");
	if (opt.all && opt.attach_given)
		sp_usage_error("--attach is for -p: -a pauses nothing");
	if (opt.command && opt.attach_given)
		sp_usage_error("--attach is for -p: COMMAND is recorded from its exec");
	if (!opt.command && opt.timeout_ns)
		sp_usage_error("--timeout needs a COMMAND to end");
	if (!opt.command && opt.command_stdout)
		sp_usage_error("--command-stdout needs a COMMAND");
	if (opt.no_cache && opt.cache_dir[0])
		sp_usage_error("--no-cache and --cache-dir: keep copies or not");
}

/* The build-id cache: --cache-dir, else the default; none with --no-cache. */
static void choose_cache(void)
{
	if (opt.no_cache)
		return;
	if (!opt.cache_dir[0] &&
	    sp_bidstore_default_dir(opt.cache_dir, sizeof(opt.cache_dir))) {
		sp_warn("no build-id cache: neither XDG_CACHE_HOME nor HOME is set (give --cache-dir or --no-cache)");
		return;
	}
	opt.rec.cache_dir = opt.cache_dir;
}

static void handle_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;	/* no SA_RESTART: poll() returns */
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a closed terminal: the recording so far is as good as at ^C */
	sigaction(SIGHUP, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The recording, whichever way it started. */
static struct sp_recorder *rec;
static struct sp_out *out;
static int rec_failed;

static const char *keep_error(int err)
{
	switch (err) {
	case -ESRCH:
		return "no process maps it any more";
	case -EILSEQ:
		return "the mapped file was changed in place";
	case -EPERM:
	case -EACCES:
		return "/proc/PID/map_files needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE";
	default:
		return strerror(-err);
	}
}

/* The binaries that needed a copy in the build-id cache, and the cache. */
static void report_kept(const struct sp_record_stats *st)
{
	static const char deleted[] = " (deleted)";
	struct sp_record_kept k;
	size_t i, n;

	for (i = 0; sp_recorder_kept(rec, i, &k) == 0; i++) {
		/* the kernel's mark says what the message says already */
		n = strlen(k.path);
		if (n > sizeof(deleted) - 1 &&
		    !strcmp(k.path + n - (sizeof(deleted) - 1), deleted))
			n -= sizeof(deleted) - 1;
		if (k.kept && k.bytes)
			sp_warn("'%.*s' was %s while mapped: kept a copy (build-id %s, %.1f KiB) in '%s'",
				(int)n, k.path, k.why, k.build_id,
				k.bytes / 1024.0, opt.cache_dir);
		else if (k.kept)
			sp_warn("'%.*s' was %s while mapped: '%s' has a copy (build-id %s) already",
				(int)n, k.path, k.why, opt.cache_dir, k.build_id);
		else
			sp_warn("'%.*s' was %s while mapped and no copy could be kept: %s: its frames will be [unknown build-id %.12s]",
				(int)n, k.path, k.why, keep_error(k.err),
				k.build_id);
	}
	if (st->cache_error)
		sp_warn("cannot trim the build-id cache '%s': %s",
			opt.cache_dir, strerror(-st->cache_error));
	else if (st->cache_evicted)
		sp_warn("build-id cache '%s': %llu copies evicted, %llu kept (%.1f MiB)",
			opt.cache_dir, (unsigned long long)st->cache_evicted,
			(unsigned long long)st->cache_files,
			st->cache_bytes / 1048576.0);
}

/* Where the lost events were: "lost by cpu: 0: 12, 3: 40". */
static void report_cpu_lost(void)
{
	char line[1024];
	size_t i, len = 0;
	uint64_t n;
	int cpu;

	line[0] = 0;
	for (i = 0; sp_recorder_cpu_lost(rec, i, &cpu, &n) == 0; i++) {
		if (!n || len >= sizeof(line) - 32)
			continue;
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%d: %llu",
					len ? ", " : "", cpu, (unsigned long long)n);
	}
	if (len)
		sp_warn("lost events by cpu: %s", line);
}

/* What failed: a write names the output, as every tool's message does. */
static const char *failure(void)
{
	static char msg[4096 + 128];
	int e = out ? sp_out_error(out) : 0;

	if (!e || e == -EPIPE)
		return sp_recorder_error(rec);
	snprintf(msg, sizeof(msg), "cannot write '%s': %s",
		 sp_output_name(opt.output), strerror(-e));
	return msg;
}

/* Say, before it begins, what off-CPU recording will lack. */
static void report_off_cpu(const struct sp_record_stats *st)
{
	if (opt.rec.off_cpu && !st->offcpu_stacks)
		sp_warn("off-CPU: no stacks at switch-out, only each thread's time off the CPU: %s",
			st->offcpu_why);
}

/* What became of the Python processes' frames. */
static void report_python(const struct sp_record_stats *st)
{
	if (st->py_stacks || st->py_codes)
		sp_warn("python: %llu processes, %llu stacks, %llu code objects",
			(unsigned long long)st->py_procs,
			(unsigned long long)st->py_stacks,
			(unsigned long long)st->py_codes);
	if (st->py_bpf_runs)
		sp_warn("python: the BPF program ran %llu times, %.0f ns each (kernel.bpf_stats_enabled)",
			(unsigned long long)st->py_bpf_runs,
			(double)st->py_bpf_ns / (double)st->py_bpf_runs);
	if (st->py_unreadable)
		sp_warn("python: %llu frames unnamed: their code object was gone or replaced when read",
			(unsigned long long)st->py_unreadable);
	if (st->py_why[0])
		sp_warn("python: no Python frames%s: %s",
			st->py_refused > 1 ? " for some processes" : "",
			st->py_why);
}

/* Write everything out and report; after this the recording is over. */
static void end_recording(int *lost)
{
	struct sp_record_stats st;
	int e;

	if (!rec)
		return;
	e = sp_recorder_finish(rec, &st);
	if (e && e != -EPIPE) {
		sp_warn("%s", failure());
		rec_failed = 1;
	}
	if (!e) {
		e = sp_out_close(out);
		out = NULL;
		if (e && e != -EPIPE) {
			sp_warn("cannot write '%s': %s",
				sp_output_name(opt.output), strerror(-e));
			rec_failed = 1;
		}
	}
	if (!e && st.deep)
		sp_warn("stack tails: %llu of %llu samples deeper than their copy, %llu bytes; %llu changed at the seam",
			(unsigned long long)st.tails,
			(unsigned long long)st.deep,
			(unsigned long long)st.tail_bytes,
			(unsigned long long)st.tails_changed);
	if (!e && opt.rec.off_cpu)
		sp_warn("off-CPU: %llu switches, %llu stacks at switch-out",
			(unsigned long long)st.switches,
			(unsigned long long)st.offcpu);
	if (!e && st.offcpu_short)
		sp_warn("off-CPU: %llu stacks not written, of waits shorter than --off-cpu-min (their time is kept, unsampled)",
			(unsigned long long)st.offcpu_short);
	if (!e && (st.py_procs || st.py_refused))
		report_python(&st);
	if (!e && st.tails_denied)
		sp_warn("stack tails: %llu not read, their stacks cut: %s",
			(unsigned long long)st.tails_denied,
			st.tails_denied_why);
	if (!e) {
		if (st.lost)
			sp_warn("%llu samples, %llu lost events, %llu threads, %.2f s; raise -m or lower -F to lose none",
				(unsigned long long)st.samples,
				(unsigned long long)st.lost,
				(unsigned long long)st.threads,
				st.duration_ns / 1e9);
		else
			sp_warn("%llu samples, 0 lost events, %llu threads, %.2f s",
				(unsigned long long)st.samples,
				(unsigned long long)st.threads,
				st.duration_ns / 1e9);
		*lost = st.lost != 0;
		if (st.lost)
			report_cpu_lost();
		if (st.filtered)
			sp_warn("%llu samples not written: of sp-record and the pipeline it writes into%s%s",
				(unsigned long long)st.filtered,
				opt.rec.comms ? " or of threads not named by --comm" : "",
				opt.npids || opt.rec.tids ?
				" or of what -p and --tid do not name" : "");
	}
	report_kept(&st);
	sp_recorder_free(rec);
	rec = NULL;
	sp_out_close(out);
	out = NULL;
}

/*
 * One pass of the recording loop.  Returns 0, or 1 when the recording is
 * over because its reader went away or it failed (reported).
 */
static int record_pass(int timeout)
{
	int e = sp_recorder_wait(rec, timeout);

	if (e == -EPIPE)
		return 1;	/* the reader has gone, perhaps long before a write */
	if (e < 0 && e != -EINTR) {
		sp_warn("cannot wait for the ring buffers: %s", strerror(-e));
		rec_failed = 1;
		return 1;
	}
	e = sp_recorder_consume(rec);
	if (e == -EPIPE)
		return 1;
	if (e) {
		sp_warn("%s", failure());
		rec_failed = 1;
		return 1;
	}
	return 0;
}

/* Drop the recording without a summary: the reader is gone or it failed. */
static void drop_recording(void)
{
	sp_recorder_free(rec);
	rec = NULL;
	sp_out_close(out);
	out = NULL;
}

static int poll_timeout(uint64_t now, uint64_t deadline)
{
	if (deadline && deadline - now < 100 * 1000000ull)
		return (int)((deadline - now + 999999) / 1000000);
	return 100;
}

static int record_pids(void)
{
	struct sp_record_stats st;
	uint64_t now, deadline = 0, last_check;
	char why[SP_ERR_MAX] = "";
	int e, lost = 0;

	if (opt.all)
		opt.rec.attach = SP_RECORD_ATTACH_HOST;
	rec = sp_recorder_new(&opt.rec, out);
	if (!rec)
		sp_die("out of memory");
	e = sp_recorder_attach(rec, opt.pids, opt.npids);
	if (e == -EPERM && !opt.attach_given && !opt.all) {
		/* ptrace refused (a debugger, a policy): attach without pausing */
		snprintf(why, sizeof(why), "%s", sp_recorder_error(rec));
		sp_recorder_free(rec);
		opt.rec.attach = SP_RECORD_ATTACH_LIVE;
		rec = sp_recorder_new(&opt.rec, out);
		if (!rec)
			sp_die("out of memory");
		e = sp_recorder_attach(rec, opt.pids, opt.npids);
	}
	if (e == -EPIPE)
		goto reader_gone;
	if (e)
		sp_die("%s", failure());
	sp_recorder_stats(rec, &st);
	report_off_cpu(&st);
	if (opt.all)
		sp_warn("recording every process%s: %llu processes, %llu threads running",
			opt.rec.cgroup ? " of the cgroup" : "",
			(unsigned long long)st.processes,
			(unsigned long long)st.threads);
	else if (opt.rec.attach == SP_RECORD_ATTACH_STOP)
		sp_warn("attached %llu threads in %.1f ms",
			(unsigned long long)st.attach_threads,
			st.attach_pause_ns / 1e6);
	else if (why[0])
		sp_warn("attached %llu threads without pausing them: %s",
			(unsigned long long)st.attach_threads, why);

	now = last_check = sp_mono_ns();
	if (opt.duration_ns)
		deadline = now + opt.duration_ns;
	while (!stop) {
		if (deadline && now >= deadline)
			break;
		if (record_pass(poll_timeout(now, deadline))) {
			if (rec_failed)
				exit(SP_EXIT_FATAL);
			goto reader_gone;
		}
		now = sp_mono_ns();
		if (now - last_check >= CHECK_NS) {
			last_check = now;
			if (!sp_recorder_active(rec))
				break;
		}
	}
	end_recording(&lost);
	free(opt.pids);
	if (rec_failed)
		return SP_EXIT_FATAL;
	return lost ? SP_EXIT_PARTIAL : SP_EXIT_OK;

reader_gone:
	/* like any filter whose reader has gone: stop quietly, targets untouched */
	drop_recording();
	free(opt.pids);
	return SP_EXIT_OK;
}

/* The earlier of two deadlines, 0 meaning none. */
static uint64_t earliest(uint64_t a, uint64_t b)
{
	if (!a || (b && b < a))
		return b;
	return a;
}

static int record_command(void)
{
	struct sp_launch_opts lo;
	struct sp_launch *l;
	uint64_t now, deadline = 0, kill_at = 0, term_at = 0;
	int e, status, lost = 0, cmd_out = -1;
	const char *cmd = opt.command[0];

	sp_launch_opts_init(&lo);
	if (!strcmp(opt.output, "-")) {
		/* our standard output carries the stream */
		if (opt.command_stdout) {
			cmd_out = open(opt.command_stdout,
				       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
			if (cmd_out < 0)
				sp_die("cannot open '%s': %s", opt.command_stdout,
				       strerror(errno));
			lo.stdout_fd = cmd_out;
		} else {
			lo.stdout_fd = 2;
		}
	} else if (opt.command_stdout) {
		cmd_out = open(opt.command_stdout,
			       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (cmd_out < 0)
			sp_die("cannot open '%s': %s", opt.command_stdout,
			       strerror(errno));
		lo.stdout_fd = cmd_out;
	}
	l = sp_launch_suspended(opt.command, NULL, &lo);
	if (!l)
		sp_die("cannot start '%s': %s", cmd, strerror(errno));
	if (cmd_out >= 0)
		close(cmd_out);

	opt.rec.attach = SP_RECORD_ATTACH_ON_EXEC;
	rec = sp_recorder_new(&opt.rec, out);
	if (!rec) {
		sp_launch_free(l);
		sp_die("out of memory");
	}
	e = sp_recorder_attach(rec, (pid_t[]){ sp_launch_pid(l) }, 1);
	if (e && e != -EPIPE) {
		sp_launch_free(l);	/* never ran: killed and reaped */
		sp_die("%s", failure());
	}
	if (e == -EPIPE)
		drop_recording();	/* nobody reads: just run it */
	if (!e) {
		struct sp_record_stats st;

		sp_recorder_stats(rec, &st);
		report_off_cpu(&st);
	}
	if (stop) {
		/* interrupted before COMMAND ran: it never will */
		sp_launch_free(l);
		end_recording(&lost);
		return 128 + stop;
	}
	child_pid = sp_launch_pid(l);
	e = sp_launch_resume(l);
	if (e) {
		sp_launch_try_wait(l, &status, 1);
		child_pid = 0;
		if (e == -ENOENT && !strchr(cmd, '/'))
			sp_warn("cannot execute '%s': command not found", cmd);
		else
			sp_warn("cannot execute '%s': %s", cmd, strerror(-e));
		end_recording(&lost);
		sp_launch_free(l);
		return e == -ENOENT || e == -ENOTDIR ? 127 : 126;
	}

	now = sp_mono_ns();
	if (opt.duration_ns)
		deadline = now + opt.duration_ns;
	if (opt.timeout_ns)
		term_at = now + opt.timeout_ns;
	for (;;) {
		uint64_t next = 0;
		int timeout;

		if (sp_launch_try_wait(l, &status, 0) == 1)
			break;
		if (term_at && now >= term_at) {
			sp_launch_kill(l, SIGTERM);
			term_at = 0;
			kill_at = now + GRACE_NS;
		}
		if (kill_at && now >= kill_at) {
			sp_launch_kill(l, SIGKILL);
			kill_at = 0;
		}
		if (rec && deadline && now >= deadline) {
			end_recording(&lost);	/* COMMAND runs on */
			deadline = 0;
		}
		next = earliest(earliest(deadline, term_at), kill_at);
		timeout = next ? poll_timeout(now, next) : 100;
		if (rec) {
			if (record_pass(timeout))
				drop_recording();
		} else {
			/* SIGCHLD ends the sleep */
			struct timespec ts = { timeout / 1000,
					       (long)(timeout % 1000) * 1000000L };

			nanosleep(&ts, NULL);
		}
		now = sp_mono_ns();
	}
	child_pid = 0;
	end_recording(&lost);
	sp_launch_free(l);
	if (rec_failed)
		return SP_EXIT_FATAL;
	return sp_launch_exit_code(status);
}

int main(int argc, char **argv)
{
	long long maxf;

	sp_prog = "sp-record";
	sp_record_opts_init(&opt.rec);
	parse_options(argc, argv);
	choose_cache();
	if (getenv("SP_TEST_ATTACH_DELAY_MS"))
		opt.rec.attach_hold_ms = (unsigned)atoi(getenv("SP_TEST_ATTACH_DELAY_MS"));
	opt.rec.interrupted = &stop;

	maxf = sp_record_max_frequency();
	if (maxf > 0 && opt.rec.frequency > (uint64_t)maxf) {
		sp_warn("frequency %llu is above perf_event_max_sample_rate %lld: using %lld",
			(unsigned long long)opt.rec.frequency, maxf, maxf);
		opt.rec.frequency = (uint64_t)maxf;
	}

	out = sp_open_output(opt.output, "raw");
	handle_signals();
	return opt.command ? record_command() : record_pids();
}
