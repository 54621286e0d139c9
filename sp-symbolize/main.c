/* SPDX-License-Identifier: MIT */
/* sp-symbolize: name the frames of an unwound stream, as text. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "elf/debuginfod.h"
#include "elf/locate.h"
#include "symbolize/symstream.h"
#include "options.h"

static struct options {
	const char *output;
	const char *input;
	int stats;
	struct sym_options sym;
} opt = {
	.output = "-",
	.input = "-",
};

static void usage(void)
{
	printf("usage: sp-symbolize [-o FILE] [--kallsyms FILE] [--perf-map-dir DIR]\n"
	       "                    [--debug-dir DIR]... [--cache-dir DIR]\n"
	       "                    [--cache-size SIZE] [--no-symbol-cache]\n"
	       "                    [--no-system-debug] [--no-lines] [--no-inline]\n"
	       "                    [--no-demangle] [--stats] [FILE]\n"
	       "\n"
	       "Read the unwound stream of sp-unwind (FILE or standard input) and write\n"
	       "the symbolized text stream: every stack's frames with function names,\n"
	       "inlined functions, source files and lines.\n"
	       "\n"
	       "  -o, --output FILE      write to FILE instead of standard output\n"
	       "%s"
	       "      --stats            print symbolization counters on standard error\n"
	       "  -h, --help             show this help and exit\n"
	       "  -V, --version          show the version and exit\n"
	       "\n"
	       "Exit status: 0 ok, 1 frames left unnamed (no kernel symbols, or no file\n"
	       "with a recorded build-id: replaced or deleted since the recording),\n"
	       "2 bad input or failure, 64 usage error.\n", sym_options_help);
}

enum { OPT_STATS = 256 };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	SYM_LONGOPTS,
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* What main() works with: reachable from here until it returns or dies. */
static struct sp_in *in;
static struct sp_out *out;
static struct sp_elf_cache *cache;
static struct sp_procs *procs;
static struct sp_symbolizer *sym;
static struct sp_symstream *ss;

static int write_rec(void *arg, const struct sp_st_rec *rec)
{
	return sp_st_write(arg, rec);
}

static void print_stats(const struct sp_symbolize_stats *st,
			const struct sp_debuginfod *dbgd)
{
	fprintf(stderr, "sp-symbolize: %" PRIu64 " stacks, %" PRIu64 " frames (%"
		PRIu64 " inline, %" PRIu64 " unresolved), %" PRIu64
		" distinct addresses resolved\n", st->stacks, st->frames,
		st->inline_frames, st->unresolved, st->resolved);
	fprintf(stderr, "sp-symbolize: %" PRIu64 " modules, %" PRIu64
		" DWARF opened (%" PRIu64 " units), %" PRIu64
		" debug files opened, %" PRIu64 " perf map loads, %" PRIu64
		" jitdump loads\n", st->modules, st->dwarf_opens,
		st->dwarf_units, st->debug_files, st->perf_map_loads,
		st->jitdump_loads);
	if (st->dwarf_compressed)
		fprintf(stderr, "sp-symbolize: compressed DWARF: %" PRIu64 " of %"
			PRIu64 " KiB inflated\n", st->dwarf_inflated / 1024,
			st->dwarf_compressed / 1024);
	fprintf(stderr, "sp-symbolize: symbol cache: %" PRIu64 " files used, %"
		PRIu64 " addresses named from them, %" PRIu64 " of other settings, %"
		PRIu64 " damaged, %" PRIu64 " written (%" PRIu64 " bytes)\n",
		st->symcache_files, st->symcache_hits, st->symcache_stale,
		st->symcache_damaged, st->symcache_written, st->symcache_bytes);
	if (dbgd)
		fprintf(stderr, "sp-symbolize: debuginfod: %" PRIu64
			" build-ids asked, %" PRIu64 " files found\n",
			sp_debuginfod_stats(dbgd)->asked,
			sp_debuginfod_stats(dbgd)->found);
}

int main(int argc, char **argv)
{
	struct sp_unw_header hdr;
	struct sp_symbolize_stats st;
	const struct sp_rec_hdr *h;
	int c, r, status;

	sp_prog = "sp-symbolize";
	sym_options_init(&opt.sym);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			opt.output = optarg;
			break;
		case OPT_STATS:
			opt.stats = 1;
			break;
		case 'h':
			usage();
			return sp_stdout_done();
		case 'V':
			printf("sp-symbolize %s\n", SP_VERSION);
			return sp_stdout_done();
		default:
			if (!sym_options_parse(&opt.sym, c, optarg))
				sp_bad_option(argv, c);
		}
	}
	if (argc - optind > 1)
		sp_usage_error("too many arguments: one input FILE at most");
	if (optind < argc)
		opt.input = argv[optind];

	signal(SIGPIPE, SIG_IGN);
	sp_finish_on_terminal_signals();
	in = sp_open_stream(opt.input, SP_UNW_MAGIC, SP_UNW_VERSION, &hdr,
			    sizeof(hdr), SP_UNW_HEADER_MIN);
	cache = sp_elf_cache_new();
	procs = cache ? sp_procs_new(cache) : NULL;
	sym = procs ? sp_symbolizer_new(procs) : NULL;
	if (!sym)
		sp_die("out of memory");
	sym_options_apply(&opt.sym, sym, procs);
	out = sp_open_output(opt.output, NULL);
	sp_pace_output(in, out);
	ss = sp_symstream_new(sym, write_rec, out);
	if (!ss)
		sp_die("out of memory");

	r = sp_st_write_magic(out);
	if (!r)
		r = sp_symstream_header(ss, &hdr);
	while (!r && (r = sp_in_next(in, &h)) > 0)
		r = sp_symstream_feed(ss, h);
	if (r == 0)
		r = sp_symstream_finish(ss);
	if (r == -EINVAL)
		r = sp_in_fail(in, sp_symstream_error(ss));
	if (r == SP_IN_ERROR) {
		/* keep what was symbolized: flush it, then fail */
		sp_out_flush(out);
		sp_die("%s", sp_in_error(in));
	}
	if (!r)
		r = sp_out_close(out);
	if (r)
		sp_write_failed(opt.output, r);
	status = sym_options_finish(&opt.sym, sym, procs);
	sp_symbolizer_stats(sym, &st);
	if (opt.stats)
		print_stats(&st, sp_locator_debuginfod(sp_procs_locator(procs),
						       NULL));
	sp_symstream_free(ss);
	sp_symbolizer_free(sym);
	sp_procs_free(procs);
	sp_elf_cache_free(cache);
	sp_in_close(in);
	sym_options_free(&opt.sym);
	return status;
}
