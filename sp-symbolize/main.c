/* SPDX-License-Identifier: MIT */
/* sp-symbolize: name the frames of an unwound stream, as text. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "elfcache.h"
#include "io.h"
#include "procs.h"
#include "symbolize.h"
#include "symtext.h"
#include "unwound.h"

static struct options {
	const char *output;
	const char *input;
	const char *kallsyms;
	const char *perf_map_dir;
} opt = {
	.output = "-",
	.input = "-",
};

static void usage(void)
{
	printf("usage: sp-symbolize [-o FILE] [--kallsyms FILE] [--perf-map-dir DIR] [FILE]\n"
	       "\n"
	       "Read the unwound stream of sp-unwind (FILE or standard input) and write\n"
	       "the symbolized text stream: every stack's frames with function names.\n"
	       "\n"
	       "  -o, --output FILE      write to FILE instead of standard output\n"
	       "      --kallsyms FILE    kernel symbols (default /proc/kallsyms)\n"
	       "      --perf-map-dir DIR where perf-PID.map files are (default /tmp)\n"
	       "  -h, --help             show this help and exit\n"
	       "  -V, --version          show the version and exit\n"
	       "\n"
	       "Exit status: 0 ok, 1 kernel frames left unnamed (no kernel symbols),\n"
	       "2 bad input or failure, 64 usage error.\n");
}

enum { OPT_KALLSYMS = 256, OPT_PERF_MAP_DIR };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR },
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
static struct sp_frame *frames;
static size_t frames_cap;

static int write_stack(const struct sp_unw_stack_view *v)
{
	size_t n = (size_t)v->s->nr_kernel + v->s->nr_user, i;
	struct sp_st_rec rec;
	int r;

	if (n > frames_cap) {
		struct sp_frame *f = realloc(frames, n * sizeof(*f));

		if (!f)
			return -ENOMEM;
		frames = f;
		frames_cap = n;
	}
	r = sp_symbolize_stack(sym, v, frames);
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
	free(frames);
	return status;
}
