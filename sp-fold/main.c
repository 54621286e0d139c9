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
#include "base/io.h"
#include "format/symtext.h"

static struct options {
	unsigned flags;		/* SP_FOLD_* */
	uint64_t top;		/* 0: folded output */
	const char *output;
	const char *input;
} opt = {
	.output = "-",
	.input = "-",
};

static void usage(void)
{
	printf("usage: sp-fold [--pid] [--tid] [--hidden] [--weight] [--top N] [-o FILE] [FILE]\n"
	       "\n"
	       "Fold the symbolized stream of sp-symbolize (FILE or standard input) into\n"
	       "lines 'comm;outer;...;leaf COUNT' for flamegraph.pl, most samples first.\n"
	       "\n"
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

enum { OPT_PID = 256, OPT_TID, OPT_HIDDEN, OPT_WEIGHT, OPT_TOP };

static const struct option longopts[] = {
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

static const char *hint(const char *kind)
{
	if (!strcmp(kind, "raw"))
		return "pipe it into sp-unwind, then sp-symbolize";
	return "pipe it into sp-symbolize first";
}

int main(int argc, char **argv)
{
	struct sp_st_reader *rd = NULL;
	struct sp_fold *fold = NULL;
	struct sp_out *out = NULL;
	struct sp_st_rec rec;
	const char *errstr;
	FILE *fp = NULL;
	int c, r, status = SP_EXIT_FATAL;

	sp_prog = "sp-fold";
	while ((c = getopt_long(argc, argv, "o:hV", longopts, NULL)) != -1) {
		switch (c) {
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
			return SP_EXIT_OK;
		case 'V':
			printf("sp-fold %s\n", SP_VERSION);
			return SP_EXIT_OK;
		default:
			fprintf(stderr, "try 'sp-fold --help'\n");
			return SP_EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		sp_usage_error("too many arguments: one input FILE at most");
	if (optind < argc)
		opt.input = argv[optind];

	/* a closed pipe shows up as EPIPE from the writes */
	signal(SIGPIPE, SIG_IGN);
	fp = strcmp(opt.input, "-") ? fopen(opt.input, "r") : stdin;
	if (!fp) {
		sp_warn("cannot open '%s': %s", opt.input, strerror(errno));
		goto out;
	}
	rd = sp_st_reader_new(fp, fp == stdin ? "stdin" : opt.input);
	fold = sp_fold_new(opt.flags);
	if (!rd || !fold) {
		sp_warn("out of memory");
		goto out;
	}
	r = sp_st_reader_header(rd);
	if (r == SP_IN_OTHER) {
		sp_warn("'%s' is %s %s stream: %s", fp == stdin ? "stdin" : opt.input,
			strcmp(sp_st_reader_kind(rd), "unwound") ? "a" : "an",
			sp_st_reader_kind(rd), hint(sp_st_reader_kind(rd)));
		goto out;
	}
	if (r < 0) {
		sp_warn("%s", sp_st_reader_error(rd));
		goto out;
	}
	while ((r = sp_st_read(rd, &rec)) > 0) {
		r = sp_fold_apply(fold, &rec);
		if (r == -EINVAL) {
			sp_st_reader_fail(rd, sp_fold_error(fold));
			r = SP_IN_ERROR;
			break;
		}
		if (r) {
			sp_warn("out of memory");
			goto out;
		}
	}
	if (r < 0) {
		sp_warn("%s", sp_st_reader_error(rd));
		goto out;
	}

	out = sp_out_open(opt.output, 0);
	if (!out) {
		sp_warn("cannot open '%s': %s", opt.output, strerror(errno));
		goto out;
	}
	if (opt.top)
		r = sp_fold_write_top(fold, out, (unsigned)opt.top);
	else
		r = sp_fold_write(fold, out);
	if (!r)
		r = sp_out_flush(out);
	if (r == -EPIPE) {
		status = SP_EXIT_OK;
		goto out;
	}
	if (r) {
		sp_warn("cannot write '%s': %s", !strcmp(opt.output, "-") ?
			"stdout" : opt.output, strerror(-r));
		goto out;
	}
	status = SP_EXIT_OK;
out:
	c = sp_out_close(out);
	if (c && c != -EPIPE && status == SP_EXIT_OK) {
		sp_warn("cannot write '%s': %s", opt.output, strerror(-c));
		status = SP_EXIT_FATAL;
	}
	sp_st_reader_free(rd);
	sp_fold_free(fold);
	if (fp && fp != stdin)
		fclose(fp);
	return status;
}
