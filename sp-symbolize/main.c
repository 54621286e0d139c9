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
#include "elf/elfcache.h"
#include "base/io.h"
#include "elf/procs.h"
#include "symbolize/symbolize.h"
#include "format/symtext.h"
#include "format/unwound.h"

static struct options {
	const char *output;
	const char *input;
	const char *kallsyms;
	const char *perf_map_dir;
	unsigned flags;		/* SP_SYM_* */
	int stats;
} opt = {
	.output = "-",
	.input = "-",
};

static void usage(void)
{
	printf("usage: sp-symbolize [-o FILE] [--kallsyms FILE] [--perf-map-dir DIR]\n"
	       "                    [--debug-dir DIR]... [--no-lines] [--no-inline]\n"
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
	       "      --no-lines         leave source files and lines out\n"
	       "      --no-inline        one frame per address, no inlined functions\n"
	       "      --no-demangle      C++ and Rust names as in the symbol tables\n"
	       "      --stats            print symbolization counters on standard error\n"
	       "  -h, --help             show this help and exit\n"
	       "  -V, --version          show the version and exit\n"
	       "\n"
	       "Exit status: 0 ok, 1 frames left unnamed (no kernel symbols, or files\n"
	       "replaced since the recording), 2 bad input or failure, 64 usage error.\n");
}

enum {
	OPT_KALLSYMS = 256, OPT_PERF_MAP_DIR, OPT_DEBUG_DIR, OPT_NO_SYSTEM_DEBUG,
	OPT_NO_LINES, OPT_NO_INLINE, OPT_NO_DEMANGLE, OPT_STATS,
};

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "no-system-debug", no_argument, NULL, OPT_NO_SYSTEM_DEBUG },
	{ "no-lines", no_argument, NULL, OPT_NO_LINES },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "no-inlines", no_argument, NULL, OPT_NO_INLINE },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* The state main() cleans up through one path. */
static struct sp_in *in;
static struct sp_out *out;
static struct sp_elf_cache *cache;
static struct sp_procs *procs;
static struct sp_symbolizer *sym;
static const char **debug_dirs;
static size_t ndebug_dirs;

static int write_stack(const struct sp_unw_stack_view *v)
{
	const struct sp_frame *frames;
	struct sp_st_rec rec;
	size_t n, i;
	int r;

	r = sp_symbolize_stack(sym, v, &frames, &n);
	if (r)
		return r;
	rec.type = SP_ST_STACK;
	rec.u.stack = (struct sp_st_stack){ .pid = v->s->pid, .id = v->s->id,
		.nframes = (uint32_t)n, .end = sp_unw_end_name(v->s->end) };
	r = sp_st_write(out, &rec);
	rec.type = SP_ST_FRAME;
	for (i = 0; !r && i < n; i++) {
		rec.u.frame = (struct sp_st_frame){ .pid = v->s->pid,
			.id = v->s->id, .index = (uint32_t)i, .f = frames[i] };
		r = sp_st_write(out, &rec);
	}
	return r;
}

/*
 * One record in.  Returns 0, SP_IN_ERROR for bad input (the message is in
 * sp_in_error()), or -errno of the output.
 */
static int one_record(const struct sp_rec_hdr *h, int *summary)
{
	const struct sp_unw_sample *sa = (const void *)h;
	const struct sp_unw_summary *su = (const void *)h;
	const struct sp_lost_rec *lo = (const void *)h;
	struct sp_symbolize_stats st;
	struct sp_unw_stack_view v;
	struct sp_st_rec rec;
	const char *bad;
	char what[96];
	int r;

	if (*summary)
		return sp_in_fail(in, "record after the SUMMARY record");
	switch (h->type) {
	case SP_REC_MMAP:
	case SP_REC_COMM:
	case SP_REC_FORK:
	case SP_REC_EXIT:
	case SP_REC_IMAGE:
		if ((bad = sp_rec_check_common(h)))
			return sp_in_fail(in, bad);
		r = sp_symbolizer_apply(sym, h, &rec.u.comm);
		if (r < 0)
			return r;
		if (r == 0)
			return 0;
		rec.type = SP_ST_COMM;
		return sp_st_write(out, &rec);
	case SP_REC_LOST:
		if ((bad = sp_rec_check_common(h)))
			return sp_in_fail(in, bad);
		rec.type = SP_ST_LOST;
		rec.u.lost = (struct sp_st_lost){ .time = lo->time,
			.count = lo->lost };
		return sp_st_write(out, &rec);
	case SP_REC_THROTTLE:
		return (bad = sp_rec_check_common(h)) ? sp_in_fail(in, bad) : 0;
	case SP_REC_KSYM: {
		const struct sp_ksym_rec *k = (const void *)h;

		if ((bad = sp_rec_check_common(h)))
			return sp_in_fail(in, bad);
		return sp_symbolizer_add_ksym(sym, k->start, k->size, k->name);
	}
	case SP_REC_PERFMAP: {
		const struct sp_perfmap_rec *m = (const void *)h;

		if ((bad = sp_rec_check_common(h)))
			return sp_in_fail(in, bad);
		return sp_symbolizer_add_perf_map(sym, m->pid, m->text, m->len,
						  m->flags & SP_PERFMAP_RESET);
	}
	case SP_REC_STACK:
		if ((bad = sp_unw_stack_parse(h, &v)))
			return sp_in_fail(in, bad);
		return write_stack(&v);
	case SP_REC_SAMPLE:
		if (h->size < sizeof(*sa))
			return sp_in_fail(in, "SAMPLE record too short");
		if (!sp_symbolizer_has_stack(sym, sa->pid, sa->stack_id)) {
			snprintf(what, sizeof(what),
				 "SAMPLE of undefined stack %" PRIu32 "/%" PRIu32,
				 sa->pid, sa->stack_id);
			return sp_in_fail(in, what);
		}
		rec.type = SP_ST_SAMPLE;
		rec.u.sample = (struct sp_st_sample){ .time = sa->time,
			.pid = sa->pid, .tid = sa->tid, .cpu = sa->cpu,
			.id = sa->stack_id, .weight = sa->weight };
		return sp_st_write(out, &rec);
	case SP_REC_SUMMARY:
		if (h->size < sizeof(*su))
			return sp_in_fail(in, "SUMMARY record too short");
		*summary = 1;
		sp_symbolizer_stats(sym, &st);
		rec.type = SP_ST_SUMMARY;
		rec.u.summary = (struct sp_st_summary){ .samples = su->samples,
			.lost = su->lost, .stacks = su->stacks,
			.threads = su->threads, .processes = su->processes,
			.duration_ns = su->duration_ns, .frames = st.frames,
			.unresolved = st.unresolved };
		return sp_st_write(out, &rec);
	default:
		/* a record of a later version: skip it */
		return 0;
	}
}

/* Files replaced since the recording; returns how many left frames unnamed. */
static int report_mismatches(void)
{
	const struct sp_mismatch *m;
	size_t n, i;
	int bad = 0;

	m = sp_symbolizer_mismatches(sym, &n);
	for (i = 0; i < n; i++) {
		if (m[i].recovered) {
			sp_warn("'%s' was replaced since the recording (build-id %s recorded, %s on disk): named from the debug file of %s",
				m[i].path, m[i].recorded,
				*m[i].on_disk ? m[i].on_disk : "none",
				m[i].recorded);
			continue;
		}
		sp_warn("'%s' was replaced since the recording (build-id %s recorded, %s on disk): %" PRIu64 " frames left unnamed",
			m[i].path, m[i].recorded,
			*m[i].on_disk ? m[i].on_disk : "none", m[i].frames);
		bad++;
	}
	return bad;
}

static void print_stats(const struct sp_symbolize_stats *st)
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
}

static const char *hint(const char *kind)
{
	if (!strcmp(kind, "raw"))
		return "pipe it into sp-unwind first";
	if (!strcmp(kind, "symbolized"))
		return "pipe it into sp-fold, it is symbolized already";
	return "sp-symbolize reads the unwound stream of sp-unwind";
}

int main(int argc, char **argv)
{
	struct sp_unw_header hdr;
	struct sp_symbolize_stats st;
	const struct sp_rec_hdr *h;
	struct sp_st_rec rec;
	char name[sizeof(hdr.ev.name) + 1];
	int c, r, summary = 0, status = SP_EXIT_FATAL;

	sp_prog = "sp-symbolize";
	while ((c = getopt_long(argc, argv, "o:hV", longopts, NULL)) != -1) {
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

			if (!d) {
				sp_warn("out of memory");
				return SP_EXIT_FATAL;
			}
			debug_dirs = d;
			debug_dirs[ndebug_dirs++] = optarg;
			break;
		}
		case OPT_NO_SYSTEM_DEBUG:
			opt.flags |= SP_SYM_NO_SYSTEM_DEBUG;
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
		case OPT_STATS:
			opt.stats = 1;
			break;
		case 'h':
			usage();
			return SP_EXIT_OK;
		case 'V':
			printf("sp-symbolize %s\n", SP_VERSION);
			return SP_EXIT_OK;
		default:
			fprintf(stderr, "try 'sp-symbolize --help'\n");
			return SP_EXIT_USAGE;
		}
	}
	if (argc - optind > 1)
		sp_usage_error("too many arguments: one input FILE at most");
	if (optind < argc)
		opt.input = argv[optind];

	signal(SIGPIPE, SIG_IGN);
	in = sp_in_open(opt.input);
	if (!in) {
		sp_warn("cannot open '%s': %s", opt.input, strerror(errno));
		goto out;
	}
	r = sp_in_header(in, SP_UNW_MAGIC, SP_UNW_VERSION, &hdr, sizeof(hdr),
			 sizeof(hdr));
	if (r == SP_IN_OTHER) {
		sp_warn("'%s' is a %s stream: %s", sp_in_name(in),
			sp_in_kind(in), hint(sp_in_kind(in)));
		goto out;
	}
	if (r < 0) {
		sp_warn("%s", sp_in_error(in));
		goto out;
	}
	cache = sp_elf_cache_new();
	procs = cache ? sp_procs_new(cache) : NULL;
	sym = procs ? sp_symbolizer_new(procs) : NULL;
	if (!sym || (opt.kallsyms && sp_symbolizer_set_kallsyms(sym, opt.kallsyms)) ||
	    (opt.perf_map_dir &&
	     sp_symbolizer_set_perf_map_dir(sym, opt.perf_map_dir))) {
		sp_warn("out of memory");
		goto out;
	}
	sp_symbolizer_set_flags(sym, opt.flags);
	for (c = 0; (size_t)c < ndebug_dirs; c++)
		if (sp_symbolizer_add_debug_dir(sym, debug_dirs[c])) {
			sp_warn("out of memory");
			goto out;
		}
	out = sp_out_open(opt.output, 0);
	if (!out) {
		sp_warn("cannot open '%s': %s", opt.output, strerror(errno));
		goto out;
	}

	memcpy(name, hdr.ev.name, sizeof(hdr.ev.name));
	name[sizeof(hdr.ev.name)] = 0;
	rec.type = SP_ST_EVENT;
	rec.u.event = (struct sp_st_event){ .name = name,
		.freq = !!(hdr.ev.flags & SP_EV_FREQ),
		.value = hdr.ev.freq_or_period };
	r = sp_st_write_magic(out);
	if (!r)
		r = sp_st_write(out, &rec);
	while (!r && (r = sp_in_next(in, &h)) > 0)
		r = one_record(h, &summary);
	if (r == 0 && !summary)
		r = sp_in_fail(in, "truncated stream: no SUMMARY record");
	if (r == 0)
		r = sp_out_flush(out);
	if (r == -EPIPE) {
		status = SP_EXIT_OK;
		goto out;
	}
	if (r == SP_IN_ERROR) {
		sp_out_flush(out);
		sp_warn("%s", sp_in_error(in));
		goto out;
	}
	if (r == -ENOMEM) {
		sp_warn("out of memory");
		goto out;
	}
	if (r) {
		sp_warn("cannot write '%s': %s", !strcmp(opt.output, "-") ?
			"stdout" : opt.output, strerror(-r));
		goto out;
	}
	status = SP_EXIT_OK;
	sp_symbolizer_stats(sym, &st);
	if (st.no_kallsyms) {
		sp_warn("no kernel symbols in '%s' (unreadable, or hidden by kptr_restrict): %" PRIu64 " kernel frames are [kernel]",
			opt.kallsyms ? opt.kallsyms : "/proc/kallsyms",
			st.no_kallsyms);
		status = SP_EXIT_PARTIAL;
	}
	if (report_mismatches())
		status = SP_EXIT_PARTIAL;
	if (opt.stats)
		print_stats(&st);
out:
	c = sp_out_close(out);
	if (c && c != -EPIPE && status != SP_EXIT_FATAL) {
		sp_warn("cannot write '%s': %s", opt.output, strerror(-c));
		status = SP_EXIT_FATAL;
	}
	sp_symbolizer_free(sym);
	sp_procs_free(procs);
	sp_elf_cache_free(cache);
	sp_in_close(in);
	free(debug_dirs);
	return status;
}
