/* SPDX-License-Identifier: MIT */
/* sp-unwind: DWARF-unwind the samples of a raw stream into stack IDs. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "intern.h"
#include "io.h"
#include "raw.h"
#include "unwind.h"
#include "unwound.h"

static struct options {
	const char *input;
	const char *output;
	int quiet;
} opt = { "-", "-", 0 };

static void usage(void)
{
	printf("usage: sp-unwind [-q] [-o FILE] [FILE]\n"
	       "\n"
	       "Unwind the user stacks of a raw stream (from sp-record) with DWARF CFI\n"
	       "and write the unwound stream: samples that reference stack IDs.\n"
	       "\n"
	       "  -o, --output FILE  write to FILE instead of standard output\n"
	       "  -q, --quiet        no report on standard error\n"
	       "  -h, --help         this help\n"
	       "  -V, --version      print the version\n"
	       "\n"
	       "Exit status: 0 ok, 1 some events were lost while recording,\n"
	       "2 bad input or a write error, 64 usage error.\n");
}

struct state {
	struct sp_in *in;
	struct sp_out *out;
	struct sp_raw_header rh;
	struct sp_procs *procs;
	struct sp_unwinder *unw;
	struct sp_intern *stacks;
	struct sp_frames frames;
	struct sp_unw_summary sum;
	uint8_t *rec;		/* scratch for STACK records */
	size_t reccap;
};

static void write_failed(struct state *st, int r)
{
	if (r == -EPIPE)
		exit(SP_EXIT_OK);	/* the reader is gone: stop quietly */
	sp_die("cannot write '%s': %s",
	       strcmp(opt.output, "-") ? opt.output : "stdout", strerror(-r));
}

static void put(struct state *st, const void *rec, size_t len)
{
	int r = sp_out_rec(st->out, rec, len);

	if (r)
		write_failed(st, r);
}

static void emit_stack(struct state *st, uint32_t pid, uint32_t id,
		       const struct sp_raw_sample_view *v)
{
	const struct sp_frames *f = &st->frames;
	struct sp_unw_stack *s;
	size_t n = v->s->nr_kernel + f->nr_user;
	size_t size = sizeof(*s) + 8 * n + sp_align8(f->nr_user);

	if (size > st->reccap) {
		free(st->rec);
		st->rec = malloc(size);
		st->reccap = size;
		if (!st->rec)
			sp_die("out of memory");
	}
	memset(st->rec, 0, size);
	s = (struct sp_unw_stack *)st->rec;
	s->hdr.type = SP_REC_STACK;
	s->hdr.size = (uint32_t)size;
	s->pid = pid;
	s->id = id;
	s->nr_kernel = v->s->nr_kernel;
	s->nr_user = (uint16_t)f->nr_user;
	s->end = (uint8_t)f->end;
	memcpy(s + 1, v->kernel_ips, 8u * v->s->nr_kernel);
	memcpy((uint64_t *)(s + 1) + v->s->nr_kernel, f->ips, 8u * f->nr_user);
	memcpy((uint8_t *)((uint64_t *)(s + 1) + n), f->flags, f->nr_user);
	put(st, s, size);
}

static int do_sample(struct state *st, const struct sp_rec_hdr *rec)
{
	struct sp_raw_sample_view v;
	struct sp_stack_key k;
	struct sp_unw_sample out = { { SP_REC_SAMPLE, sizeof(out) } };
	const char *bad;
	uint32_t id;
	int is_new;

	bad = sp_raw_sample_parse(&st->rh, rec, &v);
	if (bad)
		return sp_in_fail(st->in, bad);
	if (sp_unwind_sample(st->unw, &v, &st->frames))
		sp_die("out of memory");
	k.pid = v.s->pid;
	k.end = (uint8_t)st->frames.end;
	k.nr_kernel = v.s->nr_kernel;
	k.nr_user = (uint16_t)st->frames.nr_user;
	k.kernel_ips = v.kernel_ips;
	k.user_ips = st->frames.ips;
	k.uflags = st->frames.flags;
	id = sp_intern_stack(st->stacks, &k, &is_new);
	if (!id)
		sp_die("out of memory");
	if (is_new)
		emit_stack(st, v.s->pid, id, &v);
	out.time = v.s->time;
	out.pid = v.s->pid;
	out.tid = v.s->tid;
	out.cpu = v.s->cpu;
	out.stack_id = id;
	out.weight = v.s->period;
	put(st, &out, sizeof(out));
	st->sum.samples++;
	st->sum.ends[st->frames.end]++;
	return 0;
}

static void open_input(struct state *st)
{
	struct sp_unw_header uh = { { SP_UNW_MAGIC, SP_UNW_VERSION, sizeof(uh) } };
	const char *bad;
	int r;

	st->in = sp_in_open(opt.input);
	if (!st->in)
		sp_die("cannot open '%s': %s", opt.input, strerror(errno));
	r = sp_in_header(st->in, SP_RAW_MAGIC, SP_RAW_VERSION, &st->rh,
			 sizeof(st->rh), sizeof(st->rh));
	if (r == SP_IN_OTHER) {
		const char *kind = sp_in_kind(st->in);

		sp_die("'%s' is %s %s stream: %s", sp_in_name(st->in),
		       kind[0] == 'u' ? "an" : "a", kind,
		       !strcmp(kind, "unwound") ? "pipe it into sp-symbolize" :
		       !strcmp(kind, "symbolized") ? "pipe it into sp-fold" :
		       "read it back with 'sp-spool cat'");
	}
	if (r)
		sp_die("%s", sp_in_error(st->in));
	bad = sp_raw_header_check(&st->rh);
	if (bad)
		sp_die("%s at byte 16 of '%s'", bad, sp_in_name(st->in));
	st->out = sp_out_open(opt.output, 1);
	if (!st->out) {
		if (errno == ENOTTY)
			sp_die("refusing to write the unwound stream to a terminal: pipe it into sp-symbolize");
		sp_die("cannot open '%s': %s", opt.output, strerror(errno));
	}
	uh.ev = st->rh.ev;
	r = sp_out_write(st->out, &uh, sizeof(uh));
	if (r)
		write_failed(st, r);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct state st = { 0 };
	const struct sp_rec_hdr *rec;
	const struct sp_raw_summary *rs = NULL;
	struct sp_raw_summary raw_sum;
	struct sp_elf_cache *cache;
	const char *bad;
	int c, r, status = SP_EXIT_OK;

	sp_prog = "sp-unwind";
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			opt.output = optarg;
			break;
		case 'q':
			opt.quiet = 1;
			break;
		case 'h':
			usage();
			return SP_EXIT_OK;
		case 'V':
			printf("sp-unwind %s\n", SP_VERSION);
			return SP_EXIT_OK;
		default:
			if (optopt)
				sp_usage_error("unknown option '-%c'", optopt);
			sp_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		sp_usage_error("too many arguments");
	if (argc - optind == 1)
		opt.input = argv[optind];
	signal(SIGPIPE, SIG_IGN);

	open_input(&st);
	cache = sp_elf_cache_new();
	st.procs = cache ? sp_procs_new(cache) : NULL;
	st.unw = st.procs ? sp_unwinder_new(st.procs, &st.rh) : NULL;
	st.stacks = sp_intern_new();
	if (!st.unw || !st.stacks)
		sp_die("out of memory");

	while ((r = sp_in_next(st.in, &rec)) > 0) {
		if (rs) {
			r = sp_in_fail(st.in, "record after the summary");
			break;
		}
		if (rec->type == SP_REC_SAMPLE) {
			r = do_sample(&st, rec);
			if (r < 0)
				break;
			continue;
		}
		if (rec->type == SP_REC_SUMMARY) {
			if (rec->size < sizeof(raw_sum)) {
				r = sp_in_fail(st.in, "SUMMARY record too short");
				break;
			}
			memcpy(&raw_sum, rec, sizeof(raw_sum));
			rs = &raw_sum;
			continue;
		}
		if (rec->type >= SP_REC_TYPE_MAX || rec->type == SP_REC_STACK)
			continue;	/* not ours to read: later versions */
		bad = sp_rec_check_common(rec);
		if (bad) {
			r = sp_in_fail(st.in, bad);
			break;
		}
		if (rec->type == SP_REC_LOST)
			st.sum.lost += ((const struct sp_lost_rec *)rec)->lost;
		if (sp_procs_apply(st.procs, rec))
			sp_die("out of memory");
		put(&st, rec, rec->size);
	}
	if (r == 0 && !rs)
		r = sp_in_fail(st.in, "truncated stream: no summary record");
	if (r < 0) {
		/* keep what was unwound: flush it, then fail */
		sp_out_flush(st.out);
		sp_die("%s", sp_in_error(st.in));
	}

	st.sum.hdr.type = SP_REC_SUMMARY;
	st.sum.hdr.size = sizeof(st.sum);
	st.sum.lost = rs->lost;
	st.sum.stacks = sp_intern_count(st.stacks);
	st.sum.threads = rs->threads;
	st.sum.processes = rs->processes;
	st.sum.start_time = rs->start_time;
	st.sum.end_time = rs->end_time;
	st.sum.duration_ns = rs->duration_ns;
	put(&st, &st.sum, sizeof(st.sum));
	r = sp_out_close(st.out);
	if (r)
		write_failed(&st, r);
	if (!opt.quiet) {
		const uint64_t *e = st.sum.ends;

		fprintf(stderr, "sp-unwind: %llu samples, %llu stacks: %llu root, %llu truncated, %llu noinfo, %llu error",
			(unsigned long long)st.sum.samples,
			(unsigned long long)st.sum.stacks,
			(unsigned long long)e[SP_END_ROOT],
			(unsigned long long)e[SP_END_TRUNCATED],
			(unsigned long long)e[SP_END_NOINFO],
			(unsigned long long)e[SP_END_ERROR]);
		if (e[SP_END_DEPTH] || e[SP_END_NOREGS])
			fprintf(stderr, ", %llu depth, %llu noregs",
				(unsigned long long)e[SP_END_DEPTH],
				(unsigned long long)e[SP_END_NOREGS]);
		fputc('\n', stderr);
	}
	if (st.sum.lost)
		status = SP_EXIT_PARTIAL;
	sp_in_close(st.in);
	free(st.rec);
	sp_intern_free(st.stacks);
	sp_unwinder_free(st.unw);
	sp_procs_free(st.procs);
	sp_elf_cache_free(cache);
	return status;
}
