/* SPDX-License-Identifier: MIT */
/* options.c: sp-symbolize's options and what they set up (options.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "elf/bidstore.h"
#include "elf/buildid.h"
#include "elf/locate.h"
#include "options.h"

const char sym_options_help[] =
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
	"      --no-demangle      C++ and Rust names as in the symbol tables\n";

void sym_options_init(struct sym_options *o)
{
	memset(o, 0, sizeof(*o));
	o->cache_max = SP_BIDSTORE_DEFAULT_MAX;
	o->started = time(NULL);
}

int sym_options_parse(struct sym_options *o, int c, const char *arg)
{
	const char **d;
	const char *why;

	switch (c) {
	case SYM_OPT_KALLSYMS:
		o->kallsyms = arg;
		return 1;
	case SYM_OPT_PERF_MAP_DIR:
		o->perf_map_dir = arg;
		return 1;
	case SYM_OPT_DEBUG_DIR:
		d = realloc(o->debug_dirs, (o->ndebug_dirs + 1) * sizeof(*d));
		if (!d)
			sp_die("out of memory");
		o->debug_dirs = d;
		o->debug_dirs[o->ndebug_dirs++] = arg;
		return 1;
	case SYM_OPT_NO_SYSTEM_DEBUG:
		o->flags |= SP_SYM_NO_SYSTEM_DEBUG;
		return 1;
	case SYM_OPT_CACHE_DIR:
		if (!*arg)
			sp_usage_error("invalid cache directory '': must be a path");
		o->cache_dir = arg;
		return 1;
	case SYM_OPT_NO_LINES:
		o->flags |= SP_SYM_NO_LINES;
		return 1;
	case SYM_OPT_NO_INLINE:
		o->flags |= SP_SYM_NO_INLINES;
		return 1;
	case SYM_OPT_NO_DEMANGLE:
		o->flags |= SP_SYM_NO_DEMANGLE;
		return 1;
	case SYM_OPT_NO_SYMBOL_CACHE:
		o->no_symbol_cache = 1;
		return 1;
	case SYM_OPT_CACHE_SIZE:
		why = sp_parse_size(arg, &o->cache_max);
		if (why)
			sp_usage_error("invalid cache size '%s': %s", arg, why);
		return 1;
	}
	return 0;
}

/*
 * The symbol cache's directory: --cache-dir, else the build-id cache's
 * default; NULL with --no-symbol-cache or when there is no default.
 */
static const char *symbol_cache_dir(struct sym_options *o)
{
	if (o->no_symbol_cache)
		return NULL;
	if (o->cache_dir)
		return o->cache_dir;
	return sp_bidstore_default_dir(o->symcache_buf,
				       sizeof(o->symcache_buf)) ?
	       NULL : o->symcache_buf;
}

void sym_options_apply(struct sym_options *o, struct sp_symbolizer *sym,
		       struct sp_procs *procs)
{
	const char *why;
	size_t i;

	if ((o->kallsyms && sp_symbolizer_set_kallsyms(sym, o->kallsyms)) ||
	    (o->cache_dir &&
	     sp_locator_set_store(sp_procs_locator(procs), o->cache_dir)) ||
	    (o->perf_map_dir &&
	     sp_symbolizer_set_perf_map_dir(sym, o->perf_map_dir)))
		sp_die("out of memory");
	sp_symbolizer_set_flags(sym, o->flags);
	sp_locator_debuginfod(sp_procs_locator(procs), &why);
	if (why)
		sp_warn("DEBUGINFOD_URLS is set, but no file is fetched: %s", why);
	o->symcache_dir = symbol_cache_dir(o);
	if (o->symcache_dir && sp_symbolizer_set_symbol_cache(sym, o->symcache_dir))
		sp_die("out of memory");
	for (i = 0; i < o->ndebug_dirs; i++)
		if (sp_symbolizer_add_debug_dir(sym, o->debug_dirs[i]))
			sp_die("out of memory");
}

/* Keep what this run named for the next; a failure costs only speed. */
static void save_symbol_cache(struct sym_options *o, struct sp_symbolizer *sym)
{
	struct sp_symbolize_stats st;
	struct sp_bidstore_usage u;
	int r;

	if (!o->symcache_dir)
		return;
	r = sp_symbolizer_save_symbol_cache(sym);
	if (r)
		sp_warn("cannot write the symbol cache in '%s': %s (the next run names its addresses again)",
			o->symcache_dir, strerror(-r));
	sp_symbolizer_stats(sym, &st);
	/* what was written counts against the cache's size, like a copy */
	if (st.symcache_written)
		sp_bidstore_trim(o->symcache_dir,
				 o->cache_max ? o->cache_max : UINT64_MAX,
				 o->started, &u);
}

/*
 * Files mapped with a build-id that no file at hand has: which, and how
 * many samples they left unnamed.  Returns how many left frames unnamed.
 */
static int report_missing(struct sp_symbolizer *sym, struct sp_procs *procs)
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

int sym_options_finish(struct sym_options *o, struct sp_symbolizer *sym,
		       struct sp_procs *procs)
{
	struct sp_symbolize_stats st;
	int status = SP_EXIT_OK;

	save_symbol_cache(o, sym);
	sp_symbolizer_stats(sym, &st);
	if (st.no_kallsyms) {
		sp_warn("no kernel symbols in '%s' (unreadable, or hidden by kptr_restrict): %" PRIu64 " kernel frames are [kernel]",
			o->kallsyms ? o->kallsyms : "/proc/kallsyms",
			st.no_kallsyms);
		status = SP_EXIT_PARTIAL;
	}
	if (report_missing(sym, procs))
		status = SP_EXIT_PARTIAL;
	return status;
}

void sym_options_free(struct sym_options *o)
{
	free(o->debug_dirs);
	o->debug_dirs = NULL;
}
