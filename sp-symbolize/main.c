/* SPDX-License-Identifier: MIT */
/* sp-symbolize: name the frames of an unwound stream, as text. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "elf/bidstore.h"
#include "elf/buildid.h"
#include "elf/debuginfod.h"
#include "elf/locate.h"
#include "symbolize/symstream.h"

static struct options {
	const char *output;
	const char *input;
	const char *kallsyms;
	const char *perf_map_dir;
	const char *cache_dir;	/* NULL: the default */
	uint64_t cache_max;	/* bytes; 0: no limit */
	int no_symbol_cache;
	unsigned flags;		/* SP_SYM_* */
	int stats;
} opt = {
	.cache_max = SP_BIDSTORE_DEFAULT_MAX,
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
	       "      --kallsyms FILE    kernel symbols (default /proc/kallsyms)\n"
	       "      --perf-map-dir DIR where perf-PID.map files are (default /tmp)\n"
	       "      --debug-dir DIR    search DIR for debug files before /usr/lib/debug\n"
	       "                         (DIR/.build-id/xx/rest.debug, DIR/LINK-NAME)\n"
	       "      --no-system-debug  do not search /usr/lib/debug\n"
	       "      --cache-dir DIR    the build-id cache sp-record kept copies in\n"
	       "                         (default $XDG_CACHE_HOME/stackpulse, else\n"
	       "                         ~/.cache/stackpulse); its symbol cache names\n"
	       "                         addresses named before without reading the\n"
	       "                         binary's symbols or DWARF again\n"
	       "      --cache-size SIZE  after writing to the symbol cache, evict the\n"
	       "                         oldest build-ids to keep DIR under SIZE bytes\n"
	       "                         (K, M, G suffixes; 0: no limit; default 1G)\n"
	       "      --no-symbol-cache  neither read nor write the symbol cache\n"
	       "      --no-lines         leave source files and lines out\n"
	       "      --no-inline        one frame per address, no inlined functions\n"
	       "      --no-demangle      C++ and Rust names as in the symbol tables\n"
	       "      --stats            print symbolization counters on standard error\n"
	       "  -h, --help             show this help and exit\n"
	       "  -V, --version          show the version and exit\n"
	       "\n"
	       "Exit status: 0 ok, 1 frames left unnamed (no kernel symbols, or no file\n"
	       "with a recorded build-id: replaced or deleted since the recording),\n"
	       "2 bad input or failure, 64 usage error.\n");
}

enum {
	OPT_KALLSYMS = 256, OPT_PERF_MAP_DIR, OPT_DEBUG_DIR, OPT_NO_SYSTEM_DEBUG,
	OPT_NO_LINES, OPT_NO_INLINE, OPT_NO_DEMANGLE, OPT_STATS, OPT_CACHE_DIR,
	OPT_NO_SYMBOL_CACHE, OPT_CACHE_SIZE,
};

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "no-system-debug", no_argument, NULL, OPT_NO_SYSTEM_DEBUG },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "no-lines", no_argument, NULL, OPT_NO_LINES },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "no-inlines", no_argument, NULL, OPT_NO_INLINE },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "no-symbol-cache", no_argument, NULL, OPT_NO_SYMBOL_CACHE },
	{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE },
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
static const char **debug_dirs;
static size_t ndebug_dirs;
static struct sp_symstream *ss;

static int write_rec(void *arg, const struct sp_st_rec *rec)
{
	return sp_st_write(arg, rec);
}

/*
 * Files mapped with a build-id that no file at hand has: which, and how
 * many samples they left unnamed.  Returns how many left frames unnamed.
 */
static int report_missing(void)
{
	const struct sp_missing_file *m;
	char hex[2 * sizeof(m->build_id) + 1];
	const char *servers = sp_locator_debuginfod(sp_procs_locator(procs),
						    NULL) ? ", nor on the debuginfod servers" : "";
	uint64_t frames, samples;
	size_t n, i;
	int bad = 0;

	m = sp_symbolizer_missing(sym, &n);
	for (i = 0; i < n; i++) {
		sp_build_id_hex(m[i].build_id, m[i].build_id_size, hex);
		sp_symbolizer_missing_counts(sym, i, &frames, &samples);
		if (!frames)
			continue;	/* in no stack */
		if (m[i].debug_only) {
			sp_warn("no file with build-id %s for '%s': its frames in %" PRIu64 " samples are named from its debug file",
				hex, m[i].path, samples);
			continue;
		}
		sp_warn("no file with build-id %s for '%s' (replaced or deleted since the recording, and not in the build-id cache%s): its frames in %" PRIu64 " samples are [unknown build-id %.*s]",
			hex, m[i].path, servers, samples, SP_UNKNOWN_BUILDID_DIGITS, hex);
		bad++;
	}
	return bad;
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

/*
 * The symbol cache's directory: --cache-dir, else the build-id cache's
 * default; NULL with --no-symbol-cache or when there is no default.
 */
static const char *symbol_cache_dir(char *buf, size_t size)
{
	if (opt.no_symbol_cache)
		return NULL;
	if (opt.cache_dir)
		return opt.cache_dir;
	return sp_bidstore_default_dir(buf, size) ? NULL : buf;
}

/* Keep what this run named for the next; a failure costs only speed. */
static void save_symbol_cache(const char *dir, time_t started)
{
	struct sp_symbolize_stats st;
	struct sp_bidstore_usage u;
	int r;

	if (!dir)
		return;
	r = sp_symbolizer_save_symbol_cache(sym);
	if (r)
		sp_warn("cannot write the symbol cache in '%s': %s (the next run names its addresses again)",
			dir, strerror(-r));
	sp_symbolizer_stats(sym, &st);
	/* what was written counts against the cache's size, like a copy */
	if (st.symcache_written)
		sp_bidstore_trim(dir, opt.cache_max ? opt.cache_max : UINT64_MAX,
				 started, &u);
}

int main(int argc, char **argv)
{
	struct sp_unw_header hdr;
	struct sp_symbolize_stats st;
	const struct sp_rec_hdr *h;
	char symcache_buf[4096];
	const char *symcache_dir;
	time_t started = time(NULL);
	const char *why;
	int c, r, status = SP_EXIT_OK;

	sp_prog = "sp-symbolize";
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			opt.output = optarg;
			break;
		case OPT_KALLSYMS:
			opt.kallsyms = optarg;
			break;
		case OPT_PERF_MAP_DIR:
			opt.perf_map_dir = optarg;
			break;
		case OPT_DEBUG_DIR: {
			const char **d = realloc(debug_dirs, (ndebug_dirs + 1) *
						 sizeof(*d));

			if (!d)
				sp_die("out of memory");
			debug_dirs = d;
			debug_dirs[ndebug_dirs++] = optarg;
			break;
		}
		case OPT_NO_SYSTEM_DEBUG:
			opt.flags |= SP_SYM_NO_SYSTEM_DEBUG;
			break;
		case OPT_CACHE_DIR:
			if (!*optarg)
				sp_usage_error("invalid cache directory '': must be a path");
			opt.cache_dir = optarg;
			break;
		case OPT_NO_LINES:
			opt.flags |= SP_SYM_NO_LINES;
			break;
		case OPT_NO_INLINE:
			opt.flags |= SP_SYM_NO_INLINES;
			break;
		case OPT_NO_DEMANGLE:
			opt.flags |= SP_SYM_NO_DEMANGLE;
			break;
		case OPT_NO_SYMBOL_CACHE:
			opt.no_symbol_cache = 1;
			break;
		case OPT_CACHE_SIZE:
			why = sp_parse_size(optarg, &opt.cache_max);
			if (why)
				sp_usage_error("invalid cache size '%s': %s",
					       optarg, why);
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
	if (!sym || (opt.kallsyms && sp_symbolizer_set_kallsyms(sym, opt.kallsyms)) ||
	    (opt.cache_dir &&
	     sp_locator_set_store(sp_procs_locator(procs), opt.cache_dir)) ||
	    (opt.perf_map_dir &&
	     sp_symbolizer_set_perf_map_dir(sym, opt.perf_map_dir)))
		sp_die("out of memory");
	sp_symbolizer_set_flags(sym, opt.flags);
	sp_locator_debuginfod(sp_procs_locator(procs), &why);
	if (why)
		sp_warn("DEBUGINFOD_URLS is set, but no file is fetched: %s", why);
	symcache_dir = symbol_cache_dir(symcache_buf, sizeof(symcache_buf));
	if (symcache_dir && sp_symbolizer_set_symbol_cache(sym, symcache_dir))
		sp_die("out of memory");
	for (c = 0; (size_t)c < ndebug_dirs; c++)
		if (sp_symbolizer_add_debug_dir(sym, debug_dirs[c]))
			sp_die("out of memory");
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
	save_symbol_cache(symcache_dir, started);
	sp_symbolizer_stats(sym, &st);
	if (st.no_kallsyms) {
		sp_warn("no kernel symbols in '%s' (unreadable, or hidden by kptr_restrict): %" PRIu64 " kernel frames are [kernel]",
			opt.kallsyms ? opt.kallsyms : "/proc/kallsyms",
			st.no_kallsyms);
		status = SP_EXIT_PARTIAL;
	}
	if (report_missing())
		status = SP_EXIT_PARTIAL;
	if (opt.stats)
		print_stats(&st, sp_locator_debuginfod(sp_procs_locator(procs),
						       NULL));
	sp_symstream_free(ss);
	sp_symbolizer_free(sym);
	sp_procs_free(procs);
	sp_elf_cache_free(cache);
	sp_in_close(in);
	free(debug_dirs);
	return status;
}
