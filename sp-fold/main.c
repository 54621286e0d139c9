/* SPDX-License-Identifier: MIT */
/* sp-fold: fold a symbolized stream into FlameGraph's folded stacks. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/offline.h"
#include "base/clock.h"
#include "cli/cli.h"
#include "fold/fold.h"
#include "fold/window.h"
#include "../sp-symbolize/options.h"
#include "../sp-unwind/report.h"

enum format { FMT_FOLDED, FMT_PPROF, FMT_SPEEDSCOPE };

static struct options {
	unsigned flags;		/* SP_FOLD_* */
	enum format format;
	uint64_t top;		/* 0: the format's output */
	int weight_time;	/* --weight time: refuse other units */
	int weight_given;
	int mode;		/* MODE_*: which samples count */
	const char *output;
	const char *input;
	uint64_t every;		/* ns; 0: one profile of the whole input */
	char **labels;		/* KEY=VALUE */
	size_t nlabels;
	const char *service;
	struct sym_options sym;	/* for a raw or unwound input */
	int sym_given;
} opt = {
	.flags = SP_FOLD_SHORT,
	.output = "-",
	.input = "-",
};

/*
 * What main() works with: reachable from here until it returns or dies.
 * The input is a symbolized stream read as text (rd), or a raw or unwound
 * stream (in) unwound and symbolized here (off).
 */
static FILE *fp;
static struct sp_st_reader *rd;
static struct sp_in *in;
static struct sp_offline *off;
static struct sp_fold *fold;
static struct sp_out *out;
static struct sp_window *win;

static void usage(void)
{
	printf("usage: sp-fold [--format folded|pprof|speedscope] [--names short|full]\n"
	       "               [--pid] [--tid] [--hidden] [--weight [samples|period|time]]\n"
	       "               [--mode cpu|off-cpu|wall] [--top N] [-o FILE] [FILE]\n"
	       "       sp-fold --every DURATION [--format folded|pprof] [--service NAME]\n"
	       "               [--label KEY=VALUE]... [options] -o DIR [FILE]\n"
	       "       sp-fold [options] [sp-symbolize's options] RAW-OR-UNWOUND-FILE\n"
	       "\n"
	       "Fold the symbolized stream of sp-symbolize (FILE or standard input) into\n"
	       "lines 'comm;outer;...;leaf COUNT' for flamegraph.pl and sp-flame, most\n"
	       "samples first, or into a pprof or speedscope profile; with --every, into\n"
	       "one profile per window of wall-clock time, each written whole into DIR as\n"
	       "START_END.pb.gz (or .folded) for sp-push.\n"
	       "\n"
	       "Given a raw stream (sp-record's) or an unwound one (sp-unwind's) in a\n"
	       "file, sp-fold unwinds and names the frames itself, in one process, with\n"
	       "what sp-unwind and sp-symbolize would write: the same output as through\n"
	       "them, for less.  It then takes sp-symbolize's options, below.\n"
	       "\n"
	       "  -f, --format F    folded (default); pprof: gzipped profile.proto for go tool\n"
	       "                    pprof, Pyroscope, Parca; speedscope: speedscope's JSON\n"
	       "      --names N     short (default): C++ names without return type and\n"
	       "                    parameters; full: the whole demangled signature\n"
	       "      --pid         first frame is comm-PID\n"
	       "      --tid         first frame is comm-PID/TID\n"
	       "      --hidden      keep hidden frames: start-up glue (_start, start_thread,\n"
	       "                    ...) and interpreter glue between Python frames\n"
	       "      --mode M      of a recording with --off-cpu, what counts: cpu\n"
	       "                    (samples), off-cpu (waits) or wall (both, each\n"
	       "                    thread adding up to its elapsed time; --weight time\n"
	       "                    unless given); default: both\n"
	       "      --weight W    samples: count samples and off-CPU waits (default);\n"
	       "                    period (--weight alone): sum their weights, the\n"
	       "                    periods of CPU samples and the nanoseconds of waits;\n"
	       "                    time: the same, refused unless the event counts time\n"
	       "                    (cpu-clock, task-clock), so all is nanoseconds\n"
	       "      --top N       print the N hottest functions by self and total instead\n"
	       "      --every D     a profile per window of D (10s, 1m, ...; windows start at\n"
	       "                    multiples of D since the epoch, in UTC)\n"
	       "      --service NAME  label every pprof sample service_name=NAME\n"
	       "      --label K=V   label every pprof sample K=V (host=HOSTNAME with --every)\n"
	       "  -o, --output FILE write to FILE instead of standard output\n"
	       "  -h, --help        show this help and exit\n"
	       "  -V, --version     show the version and exit\n"
	       "\n"
	       "For a raw or unwound input:\n"
	       "%s"
	       "\n"
	       "Exit status: 0 ok, 1 (raw or unwound input) events lost while recording,\n"
	       "or frames left unnamed or stacks cut for want of a file with a recorded\n"
	       "build-id, 2 bad input or failure, 64 usage error.\n", sym_options_help);
}

enum { OPT_PID = 256, OPT_TID, OPT_HIDDEN, OPT_WEIGHT, OPT_TOP, OPT_NAMES,
       OPT_EVERY, OPT_LABEL, OPT_SERVICE, OPT_MODE };

static const struct option longopts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "names", required_argument, NULL, OPT_NAMES },
	{ "pid", no_argument, NULL, OPT_PID },
	{ "tid", no_argument, NULL, OPT_TID },
	{ "hidden", no_argument, NULL, OPT_HIDDEN },
	{ "weight", optional_argument, NULL, OPT_WEIGHT },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "every", required_argument, NULL, OPT_EVERY },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "service", required_argument, NULL, OPT_SERVICE },
	SYM_LONGOPTS,
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* KEY=VALUE with a key pprof and Pyroscope take: [A-Za-z0-9_.]+ */
static void add_label(char *kv)
{
	char *eq = strchr(kv, '='), **l;

	if (!eq || eq == kv || !eq[1] || strspn(kv, "abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != (size_t)(eq - kv))
		sp_usage_error("invalid --label '%s': must be KEY=VALUE, KEY of letters, digits, '_' and '.'",
			       kv);
	l = realloc(opt.labels, (opt.nlabels + 1) * sizeof(*l));
	if (!l)
		sp_die("out of memory");
	opt.labels = l;
	opt.labels[opt.nlabels++] = kv;
}

/* The labels of every sample: --service, --label, the host's name. */
static void set_labels(void)
{
	char host[256];
	size_t i;
	int r = 0;

	for (i = 0; !r && i < opt.nlabels; i++) {
		char *eq = strchr(opt.labels[i], '=');

		*eq = 0;
		r = sp_fold_add_label(fold, opt.labels[i], eq + 1);
		*eq = '=';
	}
	if (!r && opt.service)
		r = sp_fold_add_label(fold, "service_name", opt.service);
	if (!r && opt.every && gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		for (i = 0; i < opt.nlabels; i++)
			if (!strncmp(opt.labels[i], "host=", 5))
				break;
		if (i == opt.nlabels)
			r = sp_fold_add_label(fold, "host", host);
	}
	if (r)
		sp_die("out of memory");
}

static void window_failed(int r)
{
	if (r == -ENODATA)
		sp_die("--every needs the time the recording started, which '%s' does not hold (a recording older than the start line)",
		       opt.input);
	if (r == -ENOMEM)
		sp_die("out of memory");
	sp_die("cannot write a window into '%s': %s", opt.output,
	       strerror(-r));
}

/* Milliseconds until the open window is due without input; -1 none. */
static int idle_ms(void *arg)
{
	uint64_t d = sp_window_deadline(win), now = sp_clock_ns(CLOCK_REALTIME);

	(void)arg;
	if (!d)
		return -1;
	return d <= now ? 0 : (int)((d - now + 999999) / 1000000 > 60000 ?
				    60000 : (d - now + 999999) / 1000000);
}

static void idle_close(void *arg)
{
	int r = sp_window_idle(win, fold, sp_clock_ns(CLOCK_REALTIME));

	(void)arg;
	if (r)
		window_failed(r);
}

/* Fold one record; SP_IN_ERROR when the stream contradicts itself. */
/* --mode: what counts of a stream with CPU samples and off-CPU waits. */
enum { MODE_ALL, MODE_CPU, MODE_OFFCPU, MODE_WALL };

/* Whether rec is a sample or wait --mode leaves out. */
static int left_out(const struct sp_st_rec *rec)
{
	return (rec->type == SP_ST_SAMPLE && opt.mode == MODE_OFFCPU) ||
	       (rec->type == SP_ST_OFFCPU && opt.mode == MODE_CPU);
}

static int apply(const struct sp_st_rec *rec)
{
	int r;

	if (left_out(rec))
		return 0;
	r = sp_fold_apply(fold, rec);

	if (!r && rec->type == SP_ST_EVENT && opt.weight_time &&
	    !sp_fold_time_event(fold))
		sp_die("--weight time: the event '%s' counts events, not time: use --weight period",
		       rec->u.event.name);
	if (r == -EINVAL) {
		if (rd)
			sp_st_reader_fail(rd, sp_fold_error(fold));
		else
			sp_in_fail(in, sp_fold_error(fold));
		return SP_IN_ERROR;
	}
	if (r)
		sp_die("out of memory");
	return 0;
}

/* One record of the input, into its window first with --every. */
static int take(const struct sp_st_rec *rec)
{
	int w;

	if (win && (rec->type == SP_ST_SAMPLE || rec->type == SP_ST_OFFCPU) &&
	    !left_out(rec) &&
	    (w = sp_window_sample(win, fold, rec->u.sample.time,
				  sp_clock_ns(CLOCK_REALTIME))))
		window_failed(w);
	return apply(rec);
}

/* A record of the stages run here; a refusal is told by in. */
static int take_named(void *arg, const struct sp_st_rec *rec)
{
	(void)arg;
	return take(rec) ? -EBADMSG : 0;
}

/* Fold the symbolized stream to its end: 0, or SP_IN_ERROR. */
static int read_text(void)
{
	struct sp_st_rec rec;
	int r;

	while ((r = sp_st_read(rd, &rec)) > 0)
		if ((r = take(&rec)))
			break;
	return r;
}

/* Unwind and name the raw or unwound stream here: 0, or SP_IN_ERROR. */
static int read_binary(void)
{
	const struct sp_rec_hdr *h;
	int r = sp_offline_start(off);

	while (!r && (r = sp_in_next(in, &h)) > 0)
		r = sp_offline_feed(off, h);
	if (r == 0)
		r = sp_offline_finish(off);
	if (r == -EINVAL)
		return sp_in_fail(in, sp_offline_error(off));
	if (r == -EBADMSG || r == SP_IN_ERROR)
		return SP_IN_ERROR;
	if (r)
		sp_die("%s", strerror(-r));
	return 0;
}

static const char *input_error(void)
{
	return rd ? sp_st_reader_error(rd) : sp_in_error(in);
}

/*
 * The kind of binary stream the input starts with, "raw" or "unwound",
 * when it is a regular file, read without moving it; NULL for anything
 * else: text, and pipes, of which the reader of text tells.
 */
static const char *binary_kind(const char *path)
{
	char magic[SP_MAGIC_LEN];
	const char *kind = NULL;
	struct stat st;
	off_t at = 0;
	int fd = strcmp(path, "-") ? sp_open_regular(path) : 0;

	if (fd < 0)
		return NULL;	/* opening it as text tells why */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    (fd || (at = lseek(fd, 0, SEEK_CUR)) >= 0) &&
	    pread(fd, magic, sizeof(magic), at) == (ssize_t)sizeof(magic))
		kind = sp_stream_kind(magic);
	if (fd)
		close(fd);
	if (kind && strcmp(kind, "raw") && strcmp(kind, "unwound"))
		kind = NULL;
	return kind;
}

/*
 * The input is another stackpulse stream, and not a file sp-fold could
 * read again from its start: a raw or unwound stream from a pipe.
 */
static void refuse_binary(const char *name, const char *kind)
{
	if (!strcmp(kind, "raw"))
		sp_die("'%s' is a raw stream: give it to sp-fold as a file, which it unwinds and symbolizes itself, or pipe it into sp-unwind and sp-symbolize first",
		       name);
	if (!strcmp(kind, "unwound"))
		sp_die("'%s' is an unwound stream: give it to sp-fold as a file, which it unwinds and symbolizes itself, or pipe it into sp-symbolize first",
		       name);
	sp_wrong_stream(name, kind, "symbolized");
}

/* Open a raw or unwound input and the stages that make it symbolized. */
static void open_binary(const char *kind)
{
	struct sp_raw_header rh;
	struct sp_unw_header uh;
	struct sp_unwstream *u;
	const char *bad;

	if (!strcmp(kind, "raw")) {
		in = sp_open_stream(opt.input, SP_RAW_MAGIC, SP_RAW_VERSION,
				    &rh, sizeof(rh), SP_RAW_HEADER_MIN);
		bad = sp_raw_header_check(&rh);
		if (bad)
			sp_die("%s at byte 16 of '%s'", bad, sp_in_name(in));
		off = sp_offline_new(1, &rh, take_named, NULL);
	} else {
		in = sp_open_stream(opt.input, SP_UNW_MAGIC, SP_UNW_VERSION,
				    &uh, sizeof(uh), SP_UNW_HEADER_MIN);
		off = sp_offline_new(0, &uh, take_named, NULL);
	}
	if (!off)
		sp_die("out of memory");
	/*
	 * folded stacks and --top show functions, never a file or a line:
	 * finding no lines spares each CU's line table (a quarter of naming a
	 * Python recording's frames the first time); their symbol cache is a
	 * variant of its own (symcache.h), beside sp-symbolize's
	 */
	if (opt.format == FMT_FOLDED)
		opt.sym.flags |= SP_SYM_NO_LINES;
	/* start-up glue is left out: its name alone, no DWARF read for it */
	if (!(opt.flags & SP_FOLD_HIDDEN))
		opt.sym.flags |= SP_SYM_GLUE_NAME_ONLY;
	u = sp_offline_unwinder(off);
	if (u && opt.sym.cache_dir &&
	    sp_locator_set_store(sp_unwstream_locator(u), opt.sym.cache_dir))
		sp_die("out of memory");
	sym_options_apply(&opt.sym, sp_offline_symbolizer(off),
			  sp_offline_procs(off));
}

/* What sp-unwind and sp-symbolize would have said: the exit status. */
static int binary_done(void)
{
	struct sp_unwstream *u = sp_offline_unwinder(off);
	int status = SP_EXIT_OK;

	if (u) {
		unwind_report_missing(u);
		if (sp_unwstream_summary(u)->lost ||
		    sp_unwstream_stats(u)->no_buildid)
			status = SP_EXIT_PARTIAL;
	}
	if (sym_options_finish(&opt.sym, sp_offline_symbolizer(off),
			       sp_offline_procs(off)))
		status = SP_EXIT_PARTIAL;
	return status;
}

/* With --every: write the last window and tell what was written. */
static void windows_done(void)
{
	const struct sp_window_stats *ws;
	int w;

	if ((w = sp_window_finish(win, fold)))
		window_failed(w);
	ws = sp_window_stats(win);
	sp_warn("%llu windows, %llu samples written to '%s'%s%.0llu%s",
		(unsigned long long)ws->windows,
		(unsigned long long)ws->samples, opt.output,
		ws->late ? "; " : "", (unsigned long long)ws->late,
		ws->late ? " came after their window was written" : "");
}

int main(int argc, char **argv)
{
	const char *errstr, *name, *w, *kind;
	struct stat st;
	int c, r, status = SP_EXIT_OK;

	sp_prog = "sp-fold";
	sym_options_init(&opt.sym);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "folded"))
				opt.format = FMT_FOLDED;
			else if (!strcmp(optarg, "pprof"))
				opt.format = FMT_PPROF;
			else if (!strcmp(optarg, "speedscope"))
				opt.format = FMT_SPEEDSCOPE;
			else
				sp_usage_error("invalid --format '%s': must be folded, pprof or speedscope",
					       optarg);
			break;
		case OPT_NAMES:
			if (!strcmp(optarg, "short"))
				opt.flags |= SP_FOLD_SHORT;
			else if (!strcmp(optarg, "full"))
				opt.flags &= ~SP_FOLD_SHORT;
			else
				sp_usage_error("invalid --names '%s': must be short or full",
					       optarg);
			break;
		case OPT_PID:
			opt.flags |= SP_FOLD_PID;
			break;
		case OPT_TID:
			opt.flags |= SP_FOLD_TID;
			break;
		case OPT_HIDDEN:
			opt.flags |= SP_FOLD_HIDDEN;
			break;
		case OPT_WEIGHT:
			/* "--weight time" as well as "--weight=time" */
			w = optarg;
			if (!w && optind < argc &&
			    (!strcmp(argv[optind], "samples") ||
			     !strcmp(argv[optind], "period") ||
			     !strcmp(argv[optind], "time")))
				w = argv[optind++];
			opt.weight_given = 1;
			if (!w || !strcmp(w, "period"))
				opt.flags |= SP_FOLD_WEIGHT;
			else if (!strcmp(w, "time"))
				opt.flags |= SP_FOLD_WEIGHT, opt.weight_time = 1;
			else if (!strcmp(w, "samples"))
				opt.flags &= ~SP_FOLD_WEIGHT, opt.weight_time = 0;
			else
				sp_usage_error("invalid --weight '%s': must be samples, period or time",
					       w);
			break;
		case OPT_MODE:
			if (!strcmp(optarg, "cpu"))
				opt.mode = MODE_CPU;
			else if (!strcmp(optarg, "off-cpu"))
				opt.mode = MODE_OFFCPU;
			else if (!strcmp(optarg, "wall"))
				opt.mode = MODE_WALL;
			else
				sp_usage_error("invalid --mode '%s': must be cpu, off-cpu or wall",
					       optarg);
			break;
		case OPT_TOP:
			errstr = sp_parse_u64(optarg, 1, 1000000, &opt.top);
			if (errstr)
				sp_usage_error("invalid --top '%s': %s", optarg,
					       errstr);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case OPT_EVERY:
			errstr = sp_parse_seconds(optarg, &opt.every);
			if (!errstr && opt.every < 1000000000ull)
				errstr = "must be 1 s or more";
			if (errstr)
				sp_usage_error("invalid --every '%s': %s", optarg,
					       errstr);
			break;
		case OPT_LABEL:
			add_label(optarg);
			break;
		case OPT_SERVICE:
			if (!*optarg)
				sp_usage_error("invalid --service '': must not be empty");
			opt.service = optarg;
			break;
		case 'h':
			usage();
			return sp_stdout_done();
		case 'V':
			printf("sp-fold %s\n", SP_VERSION);
			return sp_stdout_done();
		default:
			if (!sym_options_parse(&opt.sym, c, optarg))
				sp_bad_option(argv, c);
			opt.sym_given = 1;
		}
	}
	if (argc - optind > 1)
		sp_usage_error("too many arguments: one input FILE at most");
	if (optind < argc)
		opt.input = argv[optind];
	if (opt.top && opt.format != FMT_FOLDED)
		sp_usage_error("--top prints a table: it takes no --format");
	if (opt.every && (opt.top || opt.format == FMT_SPEEDSCOPE))
		sp_usage_error("--every writes folded or pprof windows: not --top or speedscope");
	if (opt.every && !strcmp(opt.output, "-"))
		sp_usage_error("--every writes files: give -o DIR, a directory");
	if ((opt.nlabels || opt.service) && opt.format != FMT_PPROF)
		sp_usage_error("--label and --service are pprof's: give --format pprof");
	/* wall time is the time on and off the CPU: nanoseconds */
	if (opt.mode == MODE_WALL && !opt.weight_given)
		opt.flags |= SP_FOLD_WEIGHT, opt.weight_time = 1;
	if (opt.format == FMT_PPROF)
		opt.flags |= SP_FOLD_SAMPLES;
	else if (opt.format == FMT_SPEEDSCOPE)
		opt.flags |= SP_FOLD_TIMELINE;

	/* a closed pipe shows up as EPIPE from the writes */
	signal(SIGPIPE, SIG_IGN);
	sp_finish_on_terminal_signals();
	if (opt.every) {
		win = sp_window_new(opt.every, opt.output,
				    opt.format == FMT_PPROF ? SP_WINDOW_PPROF :
							      SP_WINDOW_FOLDED);
		if (!win)
			sp_die("out of memory");
		if (stat(opt.output, &st) || (!S_ISDIR(st.st_mode) &&
					      (errno = ENOTDIR)) ||
		    access(opt.output, W_OK))
			sp_die("cannot write windows into '%s': %s", opt.output,
			       strerror(errno));
		sp_input_idle(idle_ms, idle_close, NULL);
	}
	fold = sp_fold_new(opt.flags);
	if (!fold)
		sp_die("out of memory");
	kind = binary_kind(opt.input);
	if (kind) {
		open_binary(kind);
	} else {
		fp = sp_open_text_input(opt.input, opt.output);
		if (!fp)
			sp_die("cannot open '%s': %s", opt.input, strerror(errno));
		name = strcmp(opt.input, "-") ? opt.input : "stdin";
		rd = sp_st_reader_new(fp, name);
		if (!rd)
			sp_die("out of memory");
		r = sp_st_reader_header(rd);
		if (r == SP_IN_OTHER)
			refuse_binary(name, sp_st_reader_kind(rd));
		if (r < 0)
			sp_die("%s", sp_st_reader_error(rd));
		if (opt.sym_given)
			sp_warn("the options of naming frames are for a raw or unwound input: '%s' is named already",
				name);
	}
	set_labels();
	r = rd ? read_text() : read_binary();
	if (off && r == 0)
		status = binary_done();
	if (win) {
		/* a cut input still gives what it held */
		windows_done();
		if (r < 0)
			sp_die("%s", input_error());
		return status;
	}
	if (r < 0)
		sp_die("%s", input_error());

	out = sp_open_output(opt.output,
			     opt.format == FMT_PPROF ? "a pprof profile" : NULL);
	if (opt.top)
		r = sp_fold_write_top(fold, out, (unsigned)opt.top);
	else if (opt.format == FMT_PPROF)
		r = sp_fold_write_pprof(fold, out);
	else if (opt.format == FMT_SPEEDSCOPE)
		r = sp_fold_write_speedscope(fold, out);
	else
		r = sp_fold_write(fold, out);
	if (!r)
		r = sp_out_close(out);
	if (r)
		sp_write_failed(opt.output, r);
	sp_st_reader_free(rd);
	sp_offline_free(off);
	sp_in_close(in);
	sp_fold_free(fold);
	if (fp && fp != stdin)
		fclose(fp);
	sym_options_free(&opt.sym);
	return status;
}
