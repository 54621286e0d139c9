/* SPDX-License-Identifier: MIT */
/* sp-unwind: DWARF-unwind the samples of a raw stream into stack IDs. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "elf/locate.h"
#include "unwind/unwstream.h"
#include "report.h"

static struct options {
	const char *input;
	const char *output;
	const char *cache_dir;	/* NULL: the default */
	int quiet;
	int no_memo;
} opt = { "-", "-", NULL, 0, 0 };

/* What main() works with: reachable from here until it returns or dies. */
static struct sp_in *in;
static struct sp_out *out;
static struct sp_unwstream *u;

static void usage(void)
{
	printf("usage: sp-unwind [-q] [-o FILE] [--cache-dir DIR] [--no-memo] [FILE]\n"
	       "\n"
	       "Unwind the user stacks of a raw stream (from sp-record) with DWARF CFI\n"
	       "and write the unwound stream: samples that reference stack IDs.\n"
	       "Files are those with the recorded build-ids: from the build-id cache,\n"
	       "else at their paths.\n"
	       "\n"
	       "  -o, --output FILE    write to FILE instead of standard output\n"
	       "      --cache-dir DIR  the build-id cache sp-record kept copies in\n"
	       "                       (default $XDG_CACHE_HOME/stackpulse, else\n"
	       "                       ~/.cache/stackpulse)\n"
	       "      --no-memo        step through every frame of every sample: take\n"
	       "                       none from the thread's last stack where both\n"
	       "                       restarted alike (the same output, slower; for\n"
	       "                       checking that)\n"
	       "  -q, --quiet          no report on standard error\n"
	       "  -h, --help           this help\n"
	       "  -V, --version        print the version\n"
	       "\n"
	       "Exit status: 0 ok, 1 some events were lost while recording or some\n"
	       "stacks end at files missing with their recorded build-id, 2 bad input\n"
	       "or a write error, 64 usage error.\n");
}

static int emit(void *arg, const struct sp_rec_hdr *rec)
{
	return sp_out_write(arg, rec, rec->size);
}

int main(int argc, char **argv)
{
	enum { OPT_CACHE_DIR = 256, OPT_NO_MEMO };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
		{ "no-memo", no_argument, NULL, OPT_NO_MEMO },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct sp_raw_header rh;
	struct sp_unw_header uh;
	const struct sp_rec_hdr *rec;
	const char *bad, *why;
	int c, r = 0, w;

	sp_prog = "sp-unwind";
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			opt.output = optarg;
			break;
		case 'q':
			opt.quiet = 1;
			break;
		case OPT_CACHE_DIR:
			if (!*optarg)
				sp_usage_error("invalid cache directory '': must be a path");
			opt.cache_dir = optarg;
			break;
		case OPT_NO_MEMO:
			opt.no_memo = 1;
			break;
		case 'h':
			usage();
			return sp_stdout_done();
		case 'V':
			printf("sp-unwind %s\n", SP_VERSION);
			return sp_stdout_done();
		default:
			sp_bad_option(argv, c);
		}
	}
	if (argc - optind > 1)
		sp_usage_error("too many arguments");
	if (argc - optind == 1)
		opt.input = argv[optind];
	signal(SIGPIPE, SIG_IGN);
	sp_finish_on_terminal_signals();

	in = sp_open_stream(opt.input, SP_RAW_MAGIC, SP_RAW_VERSION, &rh,
			    sizeof(rh), SP_RAW_HEADER_MIN);
	bad = sp_raw_header_check(&rh);
	if (bad)
		sp_die("%s at byte 16 of '%s'", bad, sp_in_name(in));
	out = sp_open_output(opt.output, "unwound");
	sp_pace_output(in, out);
	u = sp_unwstream_new(&rh, emit, out);
	if (!u || (opt.cache_dir &&
		   sp_locator_set_store(sp_unwstream_locator(u), opt.cache_dir)))
		sp_die("out of memory");
	if (opt.no_memo)
		sp_unwstream_set_memo(u, 0);
	sp_locator_debuginfod(sp_unwstream_locator(u), &why);
	if (why)
		sp_warn("DEBUGINFOD_URLS is set, but no file is fetched: %s", why);
	sp_unwstream_header(u, &uh);
	w = sp_out_write(out, &uh, sizeof(uh));
	while (!w && (r = sp_in_next(in, &rec)) > 0) {
		w = sp_unwstream_feed(u, rec);
		if (w == -EINVAL) {
			r = sp_in_fail(in, sp_unwstream_error(u));
			w = 0;
			break;
		}
	}
	if (!w && r == 0) {
		w = sp_unwstream_finish(u);
		if (w == -EINVAL) {
			r = sp_in_fail(in, sp_unwstream_error(u));
			w = 0;
		}
	}
	if (!w && r < 0) {
		/* keep what was unwound: flush it, then fail */
		sp_out_flush(out);
		sp_die("%s", sp_in_error(in));
	}
	if (!w)
		w = sp_out_close(out);
	if (w)
		sp_write_failed(opt.output, w);
	if (!opt.quiet) {
		unwind_report(u);
		unwind_report_missing(u);
	}
	r = sp_unwstream_summary(u)->lost || sp_unwstream_stats(u)->no_buildid ?
	    SP_EXIT_PARTIAL : SP_EXIT_OK;
	sp_unwstream_free(u);
	sp_in_close(in);
	return r;
}
