/* SPDX-License-Identifier: MIT */
/* sp-fold: fold a symbolized stream into FlameGraph's folded stacks. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fold/fold.h"

enum format { FMT_FOLDED, FMT_PPROF, FMT_SPEEDSCOPE };

static struct options {
	unsigned flags;		/* SP_FOLD_* */
	enum format format;
	uint64_t top;		/* 0: the format's output */
	const char *output;
	const char *input;
} opt = {
	.flags = SP_FOLD_SHORT,
	.output = "-",
	.input = "-",
};

/* What main() works with: reachable from here until it returns or dies. */
static FILE *fp;
static struct sp_st_reader *rd;
static struct sp_fold *fold;
static struct sp_out *out;

static void usage(void)
{
	printf("usage: sp-fold [--format folded|pprof|speedscope] [--names short|full]\n"
	       "               [--pid] [--tid] [--hidden] [--weight] [--top N] [-o FILE] [FILE]\n"
	       "\n"
	       "Fold the symbolized stream of sp-symbolize (FILE or standard input) into\n"
	       "lines 'comm;outer;...;leaf COUNT' for flamegraph.pl and sp-flame, most\n"
	       "samples first, or into a pprof or speedscope profile.\n"
	       "\n"
	       "  -f, --format F    folded (default); pprof: gzipped profile.proto for go tool\n"
	       "                    pprof, Pyroscope, Parca; speedscope: speedscope's JSON\n"
	       "      --names N     short (default): C++ names without return type and\n"
	       "                    parameters; full: the whole demangled signature\n"
	       "      --pid         first frame is comm-PID\n"
	       "      --tid         first frame is comm-PID/TID\n"
	       "      --hidden      keep hidden frames: start-up glue (_start, start_thread,\n"
	       "                    ...) and interpreter glue between Python frames\n"
	       "      --weight      count sample weights (periods), not samples\n"
	       "      --top N       print the N hottest functions by self and total instead\n"
	       "  -o, --output FILE write to FILE instead of standard output\n"
	       "  -h, --help        show this help and exit\n"
	       "  -V, --version     show the version and exit\n"
	       "\n"
	       "Exit status: 0 ok, 2 bad input or failure, 64 usage error.\n");
}

enum { OPT_PID = 256, OPT_TID, OPT_HIDDEN, OPT_WEIGHT, OPT_TOP, OPT_NAMES };

static const struct option longopts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "names", required_argument, NULL, OPT_NAMES },
	{ "pid", no_argument, NULL, OPT_PID },
	{ "tid", no_argument, NULL, OPT_TID },
	{ "hidden", no_argument, NULL, OPT_HIDDEN },
	{ "weight", no_argument, NULL, OPT_WEIGHT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct sp_st_rec rec;
	const char *errstr, *name;
	int c, r;

	sp_prog = "sp-fold";
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
			opt.flags |= SP_FOLD_WEIGHT;
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
		case 'h':
			usage();
			return sp_stdout_done();
		case 'V':
			printf("sp-fold %s\n", SP_VERSION);
			return sp_stdout_done();
		default:
			sp_bad_option(argv, c);
		}
	}
	if (argc - optind > 1)
		sp_usage_error("too many arguments: one input FILE at most");
	if (optind < argc)
		opt.input = argv[optind];
	if (opt.top && opt.format != FMT_FOLDED)
		sp_usage_error("--top prints a table: it takes no --format");
	if (opt.format == FMT_PPROF)
		opt.flags |= SP_FOLD_SAMPLES;
	else if (opt.format == FMT_SPEEDSCOPE)
		opt.flags |= SP_FOLD_TIMELINE;

	/* a closed pipe shows up as EPIPE from the writes */
	signal(SIGPIPE, SIG_IGN);
	sp_finish_on_terminal_signals();
	fp = sp_open_text_input(opt.input, opt.output);
	if (!fp)
		sp_die("cannot open '%s': %s", opt.input, strerror(errno));
	name = strcmp(opt.input, "-") ? opt.input : "stdin";
	rd = sp_st_reader_new(fp, name);
	fold = sp_fold_new(opt.flags);
	if (!rd || !fold)
		sp_die("out of memory");
	r = sp_st_reader_header(rd);
	if (r == SP_IN_OTHER)
		sp_wrong_stream(name, sp_st_reader_kind(rd), "symbolized");
	if (r < 0)
		sp_die("%s", sp_st_reader_error(rd));
	while ((r = sp_st_read(rd, &rec)) > 0) {
		r = sp_fold_apply(fold, &rec);
		if (r == -EINVAL) {
			sp_st_reader_fail(rd, sp_fold_error(fold));
			r = SP_IN_ERROR;
			break;
		}
		if (r)
			sp_die("out of memory");
	}
	if (r < 0)
		sp_die("%s", sp_st_reader_error(rd));

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
	sp_fold_free(fold);
	if (fp != stdin)
		fclose(fp);
	return SP_EXIT_OK;
}
