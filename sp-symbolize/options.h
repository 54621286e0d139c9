/* SPDX-License-Identifier: MIT */
/*
 * options.h: what sp-symbolize's options set up, shared with sp-fold,
 * which takes the same options when it names frames itself (given a raw
 * or an unwound stream): one parser, one set-up, one report.
 */
#ifndef SP_SYMBOLIZE_OPTIONS_H
#define SP_SYMBOLIZE_OPTIONS_H

#include <getopt.h>
#include <stdint.h>
#include <time.h>

#include "elf/procs.h"
#include "symbolize/symbolize.h"

struct sym_options {
	const char *kallsyms;
	const char *perf_map_dir;
	const char *cache_dir;	/* NULL: the default */
	uint64_t cache_max;	/* bytes; 0: no limit */
	int no_symbol_cache;
	unsigned flags;		/* SP_SYM_* */
	const char **debug_dirs;
	size_t ndebug_dirs;
	/* where the symbol cache is, once sym_options_apply() has run */
	const char *symcache_dir;
	char symcache_buf[4096];
	time_t started;
};

/* Codes of the long options, above any short option's character. */
enum {
	SYM_OPT_KALLSYMS = 512, SYM_OPT_PERF_MAP_DIR, SYM_OPT_DEBUG_DIR,
	SYM_OPT_NO_SYSTEM_DEBUG, SYM_OPT_NO_LINES, SYM_OPT_NO_INLINE,
	SYM_OPT_NO_DEMANGLE, SYM_OPT_CACHE_DIR, SYM_OPT_NO_SYMBOL_CACHE,
	SYM_OPT_CACHE_SIZE,
};

/* Entries of a getopt_long table. */
#define SYM_LONGOPTS \
	{ "kallsyms", required_argument, NULL, SYM_OPT_KALLSYMS }, \
	{ "perf-map-dir", required_argument, NULL, SYM_OPT_PERF_MAP_DIR }, \
	{ "debug-dir", required_argument, NULL, SYM_OPT_DEBUG_DIR }, \
	{ "no-system-debug", no_argument, NULL, SYM_OPT_NO_SYSTEM_DEBUG }, \
	{ "cache-dir", required_argument, NULL, SYM_OPT_CACHE_DIR }, \
	{ "no-lines", no_argument, NULL, SYM_OPT_NO_LINES }, \
	{ "no-inline", no_argument, NULL, SYM_OPT_NO_INLINE }, \
	{ "no-inlines", no_argument, NULL, SYM_OPT_NO_INLINE }, \
	{ "no-demangle", no_argument, NULL, SYM_OPT_NO_DEMANGLE }, \
	{ "no-symbol-cache", no_argument, NULL, SYM_OPT_NO_SYMBOL_CACHE }, \
	{ "cache-size", required_argument, NULL, SYM_OPT_CACHE_SIZE }

/* The help text of those options, lines of 80 columns. */
extern const char sym_options_help[];

void sym_options_init(struct sym_options *o);

/* Take option c with argument arg: 1 when it is one of these, else 0. */
int sym_options_parse(struct sym_options *o, int c, const char *arg);

/* Set up sym and the locator of procs as the options say; dies on ENOMEM. */
void sym_options_apply(struct sym_options *o, struct sp_symbolizer *sym,
		       struct sp_procs *procs);

/*
 * The input is done: keep what was named in the symbol cache, and warn of
 * frames left unnamed.  Returns SP_EXIT_PARTIAL when some were, else
 * SP_EXIT_OK.
 */
int sym_options_finish(struct sym_options *o, struct sp_symbolizer *sym,
		       struct sp_procs *procs);

void sym_options_free(struct sym_options *o);

#endif
