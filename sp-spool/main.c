/* SPDX-License-Identifier: MIT */
/* sp-spool: store the unwound stream in a spool file, and read it back. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "cli/cli.h"
#include "format/spool.h"

static struct options {
	struct sp_spool_opts spool;
	uint64_t flush_ns;
	int quiet;
	int json;
	const char *write_only;	/* the first option given that goes with write */
} opt = {
	.spool = { SP_SPOOL_LEVEL, SP_SPOOL_BLOCK_SIZE, SP_SPOOL_ENC_DELTA },
	.flush_ns = 1000000000ull,
};

static void usage(void)
{
	printf("usage: sp-spool write [-q] [-l LEVEL] [-b BYTES] [-t SECONDS] [--plain] FILE\n"
	       "       sp-spool cat FILE...\n"
	       "       sp-spool info [--json] FILE\n"
	       "       sp-spool verify FILE...\n"
	       "       sp-spool -h | -V\n"
	       "\n"
	       "Keep the unwound stream (from sp-unwind) in a compressed spool file, and\n"
	       "read it back for sp-symbolize.\n"
	       "\n"
	       "  write FILE   store the unwound stream read on standard input in FILE\n"
	       "  cat FILE...  write the unwound stream of the spools to standard output,\n"
	       "               several spools as one stream\n"
	       "  info FILE    print counts, time span, size and compression of FILE\n"
	       "  verify FILE  check every block of every FILE\n"
	       "\n"
	       "  -l, --level LEVEL        zlib level 0..9 (default %d)\n"
	       "  -b, --block-size BYTES   records per block, %u..%u (default %u)\n"
	       "  -t, --flush-interval SECONDS\n"
	       "                           write a block at least this often (default 1)\n"
	       "      --plain              store samples as they are, not as deltas\n"
	       "  -q, --quiet              no report on standard error\n"
	       "      --json               info as one JSON object\n"
	       "  -h, --help               this help\n"
	       "  -V, --version            print the version\n"
	       "\n"
	       "Exit status: 0 ok, 1 partial (a spool cut short, lost events, a write\n"
	       "interrupted), 2 damage, bad input or a write error, 64 usage error.\n",
	       SP_SPOOL_LEVEL, SP_SPOOL_BLOCK_MIN, SP_SPOOL_BLOCK_LIMIT,
	       SP_SPOOL_BLOCK_SIZE);
}

/* write ------------------------------------------------------------------- */

/*
 * The main thread blocks in read() when the input pauses; a flusher thread
 * writes out a block that has waited flush_ns, so a writer killed later
 * loses at most that much.  The mutex keeps the two off the writer at once.
 */
static struct flusher {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sp_spool_writer *w;
	uint64_t since;		/* when the first pending record came */
	int quit;
} fl = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0 };

/*
 * What the commands work with: reachable from here until they return or
 * the tool dies.
 */
static struct sp_in *in;
static struct sp_spool_writer *writer;
static struct sp_spool *spool;

static volatile sig_atomic_t stop;
static int devnull = -1;

/*
 * End the input at SIGINT, SIGTERM or SIGHUP (a closed terminal): sp_in
 * retries an interrupted read(), which then reads /dev/null and sees the
 * end; what was read is kept.  A terminal's first ^C or hang-up, which
 * reached sp-record too, lets it end the stream instead, as the other
 * stages do (sp_finish_on_terminal_signals()).
 */
static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (sp_terminal_signal_deferred(sig, si))
		return;
	stop = sig;
	if (devnull >= 0)
		dup2(devnull, 0);
}

static void *flush_loop(void *arg)
{
	pthread_mutex_lock(&fl.lock);
	while (!fl.quit) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&fl.cond, &fl.lock, &ts);
		if (!fl.quit && sp_spool_writer_pending(fl.w) &&
		    sp_mono_ns() - fl.since >= opt.flush_ns)
			sp_spool_writer_flush(fl.w);	/* errors stick in w */
	}
	pthread_mutex_unlock(&fl.lock);
	return NULL;
}

static void start_flusher(struct sp_spool_writer *w, pthread_t *th)
{
	struct sigaction sa;
	sigset_t set, old;

	fl.w = w;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* the signals must interrupt the main thread's read(), so only it takes them */
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (pthread_create(th, NULL, flush_loop, NULL))
		sp_die("cannot start the flusher thread");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;	/* no SA_RESTART */
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void stop_flusher(pthread_t th)
{
	pthread_mutex_lock(&fl.lock);
	fl.quit = 1;
	pthread_cond_signal(&fl.cond);
	pthread_mutex_unlock(&fl.lock);
	pthread_join(th, NULL);
}

static int cmd_write(const char *path)
{
	struct sp_unw_header uh;
	struct sp_spool_writer *w;
	struct sp_spool_stats st;
	const struct sp_rec_hdr *rec;
	uint64_t lost = 0;
	int r, wr = 0, have_summary = 0, status = SP_EXIT_OK;
	pthread_t th;
	struct stat sb;
	char why[256] = "";

	in = sp_in_fdopen(0, "stdin");
	if (!in)
		sp_die("out of memory");
	r = sp_in_header(in, SP_UNW_MAGIC, SP_UNW_VERSION, &uh,
			 SP_UNW_HEADER_MIN, sizeof(uh));
	if (r == SP_IN_OTHER)
		sp_wrong_stream("stdin", sp_in_kind(in), "unwound");
	if (r)
		sp_die("%s", sp_in_error(in));
	w = writer = sp_spool_writer_open(path, &uh, &opt.spool);
	if (!w)
		sp_die("cannot write '%s': %s", path, strerror(errno));
	start_flusher(w, &th);

	while ((r = sp_in_next(in, &rec)) > 0) {
		pthread_mutex_lock(&fl.lock);
		if (!sp_spool_writer_pending(w))
			fl.since = sp_mono_ns();
		wr = sp_spool_writer_add(w, rec);
		pthread_mutex_unlock(&fl.lock);
		if (wr == -EINVAL) {
			snprintf(why, sizeof(why), "%s at byte %llu of 'stdin'",
				 sp_spool_writer_error(w),
				 (unsigned long long)sp_in_rec_offset(in));
			break;
		}
		if (wr)
			break;
		if (rec->type == SP_REC_SUMMARY) {
			have_summary = 1;
			lost = ((const struct sp_unw_summary *)rec)->lost;
		}
	}
	if (r < 0 && !stop)
		snprintf(why, sizeof(why), "%s", sp_in_error(in));
	stop_flusher(th);
	r = sp_spool_writer_flush(w);
	sp_spool_writer_stats(w, &st);
	wr = wr ? wr : r;
	r = sp_spool_writer_close(w);
	writer = NULL;
	if (!stat(path, &sb))
		st.file_bytes = (uint64_t)sb.st_size;
	if (!wr)
		wr = r;
	if (wr && wr != -EINVAL) {
		sp_warn("cannot write '%s': %s", path, strerror(-wr));
		status = SP_EXIT_FATAL;
	} else if (why[0]) {
		sp_warn("%s", why);
		status = SP_EXIT_FATAL;
	} else if (!have_summary) {
		sp_warn("%s: '%s' keeps %llu records and no summary, and reads as cut",
			stop ? "interrupted" : "'stdin' ends without a summary record",
			path, (unsigned long long)st.records);
		status = SP_EXIT_PARTIAL;
	} else if (lost) {
		status = SP_EXIT_PARTIAL;
	}
	if (!opt.quiet && status != SP_EXIT_FATAL)
		fprintf(stderr, "sp-spool: '%s': %llu samples, %llu stacks, %llu records in %llu blocks; %llu bytes (%.1f bytes/sample, %.1fx smaller than the stream)\n",
			path, (unsigned long long)st.samples,
			(unsigned long long)st.stacks,
			(unsigned long long)st.records,
			(unsigned long long)st.blocks,
			(unsigned long long)st.file_bytes,
			st.samples ? (double)st.file_bytes / (double)st.samples : 0.0,
			st.file_bytes ? (double)st.stream_bytes / (double)st.file_bytes : 0.0);
	sp_in_close(in);
	in = NULL;
	return status;
}

/* cat --------------------------------------------------------------------- */

struct cat {
	struct sp_out *out;
	uint8_t *scratch;
	size_t cap;
	uint32_t max_id;	/* largest stack ID written so far */
	struct sp_unw_summary sum;
	int nsum;
};

static void put(struct cat *c, const void *rec, size_t len)
{
	int r = sp_out_rec(c->out, rec, len);

	if (r)
		sp_write_failed("-", r);
}

static void merge(struct sp_unw_summary *m, const struct sp_unw_summary *s, int first)
{
	int i;

	if (first) {
		*m = *s;
		return;
	}
	m->samples += s->samples;
	m->lost += s->lost;
	m->stacks += s->stacks;
	m->threads += s->threads;
	m->processes += s->processes;
	if (s->start_time < m->start_time)
		m->start_time = s->start_time;
	if (s->end_time > m->end_time)
		m->end_time = s->end_time;
	m->duration_ns += s->duration_ns;
	for (i = 0; i < SP_END_MAX; i++)
		m->ends[i] += s->ends[i];
}

/* A later file's STACK or SAMPLE with its stack ID moved past base. */
static const struct sp_rec_hdr *renumber(struct cat *c, const struct sp_rec_hdr *rec,
					 uint32_t base, const char *path)
{
	uint32_t *id;

	if (rec->size > c->cap) {
		free(c->scratch);
		c->cap = rec->size;
		c->scratch = malloc(c->cap);
		if (!c->scratch)
			sp_die("out of memory");
	}
	memcpy(c->scratch, rec, rec->size);
	if (rec->type == SP_REC_STACK)
		id = &((struct sp_unw_stack *)c->scratch)->id;
	else
		id = &((struct sp_unw_sample *)c->scratch)->stack_id;
	if (*id > UINT32_MAX - base)
		sp_die("too many stacks to concatenate '%s'", path);
	*id += base;
	return (const void *)c->scratch;
}

/* Copy one spool; 0, or 1 when it was cut. */
static int cat_one(struct cat *c, const char *path, int first, int nfiles)
{
	struct sp_unw_summary sum;
	const struct sp_rec_hdr *rec;
	struct sp_spool *r;
	uint32_t base = first ? 0 : c->max_id;
	int ret, have_summary = 0, status = 0;

	ret = sp_spool_open(path, &r);
	spool = r;
	if (!r)
		sp_die("out of memory");
	if (ret < 0) {
		sp_out_flush(c->out);
		sp_die("%s", sp_spool_error(r));
	}
	if (first) {
		const struct sp_unw_header *uh = sp_spool_header(r);
		int wr = sp_out_write(c->out, uh, sizeof(*uh));

		if (wr)
			sp_write_failed("-", wr);
	}
	while ((ret = sp_spool_next(r, &rec)) > 0) {
		if (rec->type == SP_REC_SUMMARY) {
			memcpy(&sum, rec, sizeof(sum));
			have_summary = 1;
			if (nfiles == 1)
				put(c, rec, rec->size);
			continue;
		}
		if (base && (rec->type == SP_REC_STACK || rec->type == SP_REC_SAMPLE))
			rec = renumber(c, rec, base, path);
		if (rec->type == SP_REC_STACK) {
			uint32_t id = ((const struct sp_unw_stack *)rec)->id;

			if (id > c->max_id)
				c->max_id = id;
		}
		put(c, rec, rec->size);
	}
	if (ret == -ENODATA) {
		sp_warn("%s", sp_spool_error(r));
		status = 1;
	} else if (ret < 0) {
		sp_out_flush(c->out);
		sp_die("%s", sp_spool_error(r));
	}
	if (!have_summary) {
		/* a cut spool: count what it kept, so the stream still ends well */
		sp_spool_tally(r, &sum);
		if (nfiles == 1)
			put(c, &sum, sizeof(sum));
	}
	merge(&c->sum, &sum, first);
	sp_spool_close(r);
	spool = NULL;
	return status;
}

static int cmd_cat(int n, char **paths)
{
	static struct cat c;	/* reachable when a write fails */
	int i, r, status = SP_EXIT_OK;

	c.out = sp_open_output("-", "unwound");
	for (i = 0; i < n; i++)
		if (cat_one(&c, paths[i], i == 0, n))
			status = SP_EXIT_PARTIAL;
	if (n > 1)
		put(&c, &c.sum, sizeof(c.sum));
	r = sp_out_close(c.out);
	if (r)
		sp_write_failed("-", r);
	free(c.scratch);
	return status;
}

/* info -------------------------------------------------------------------- */

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static int cmd_info(const char *path)
{
	struct sp_unw_summary sum;
	struct sp_spool_info inf;
	const struct sp_rec_hdr *rec;
	struct sp_spool *r;
	double bps, ratio;
	uint64_t span;
	int ret, complete = 1, have_summary;

	ret = sp_spool_open(path, &r);
	spool = r;
	if (!r)
		sp_die("out of memory");
	if (ret < 0)
		sp_die("%s", sp_spool_error(r));
	have_summary = !sp_spool_summary(r, &sum);
	if (!have_summary) {
		/* no trailer to read: the answer is in the blocks */
		while ((ret = sp_spool_next(r, &rec)) > 0)
			if (rec->type == SP_REC_SUMMARY) {
				memcpy(&sum, rec, sizeof(sum));
				have_summary = 1;
			}
		if (ret < 0 && ret != -ENODATA)
			sp_die("%s", sp_spool_error(r));
		complete = ret == 0;
		if (!have_summary)
			sp_spool_tally(r, &sum);
	}
	sp_spool_info(r, &inf);
	span = inf.last_time - inf.first_time;
	bps = inf.samples ? (double)inf.file_size / (double)inf.samples : 0;
	ratio = inf.file_size ? (double)inf.stream_bytes / (double)inf.file_size : 0;
	if (opt.json) {
		printf("{\"file\": ");
		json_string(path);
		printf(", \"complete\": %s, \"samples\": %llu, \"lost\": %llu, "
		       "\"processes\": %llu, \"threads\": %llu, \"stacks\": %llu, "
		       "\"records\": %llu, \"blocks\": %llu, "
		       "\"first_time\": %llu, \"last_time\": %llu, \"span_ns\": %llu, "
		       "\"duration_ns\": %llu, \"file_size\": %llu, "
		       "\"stream_bytes\": %llu, \"bytes_per_sample\": %.2f, "
		       "\"compression_ratio\": %.2f}\n",
		       complete ? "true" : "false",
		       (unsigned long long)sum.samples, (unsigned long long)sum.lost,
		       (unsigned long long)sum.processes,
		       (unsigned long long)sum.threads,
		       (unsigned long long)sum.stacks,
		       (unsigned long long)inf.records, (unsigned long long)inf.blocks,
		       (unsigned long long)inf.first_time,
		       (unsigned long long)inf.last_time, (unsigned long long)span,
		       (unsigned long long)sum.duration_ns,
		       (unsigned long long)inf.file_size,
		       (unsigned long long)inf.stream_bytes, bps, ratio);
	} else {
		printf("file:              %s\n", path);
		printf("complete:          %s\n", complete ? "yes" : "no (cut)");
		printf("samples:           %llu\n", (unsigned long long)sum.samples);
		printf("lost events:       %llu\n", (unsigned long long)sum.lost);
		printf("processes:         %llu\n", (unsigned long long)sum.processes);
		printf("threads:           %llu\n", (unsigned long long)sum.threads);
		printf("distinct stacks:   %llu\n", (unsigned long long)sum.stacks);
		printf("time span:         %.3f s (first to last sample)\n", (double)span / 1e9);
		printf("duration:          %.3f s\n", (double)sum.duration_ns / 1e9);
		printf("records:           %llu in %llu blocks\n",
		       (unsigned long long)inf.records, (unsigned long long)inf.blocks);
		printf("file size:         %llu bytes\n", (unsigned long long)inf.file_size);
		printf("bytes per sample:  %.2f\n", bps);
		printf("compression ratio: %.2f (unwound stream %llu bytes)\n", ratio,
		       (unsigned long long)inf.stream_bytes);
	}
	if (fflush(stdout) || ferror(stdout))
		sp_die("cannot write 'stdout': %s", strerror(errno));
	if (!complete)
		sp_warn("%s", sp_spool_error(r));
	sp_spool_close(r);
	spool = NULL;
	return complete ? SP_EXIT_OK : SP_EXIT_PARTIAL;
}

/* verify ------------------------------------------------------------------ */

static int verify_one(const char *path)
{
	const struct sp_rec_hdr *rec;
	struct sp_spool_info inf;
	struct sp_spool *r;
	int ret;

	ret = sp_spool_open(path, &r);
	spool = r;
	if (!r)
		sp_die("out of memory");
	if (ret == 0)
		while ((ret = sp_spool_next(r, &rec)) > 0)
			;
	if (ret < 0) {
		sp_warn("%s", sp_spool_error(r));
		sp_spool_close(r);
	spool = NULL;
		return ret == -ENODATA ? SP_EXIT_PARTIAL : SP_EXIT_FATAL;
	}
	sp_spool_info(r, &inf);
	printf("%s: ok: %llu blocks, %llu records, %llu samples\n", path,
	       (unsigned long long)inf.blocks, (unsigned long long)inf.records,
	       (unsigned long long)inf.samples);
	sp_spool_close(r);
	spool = NULL;
	return SP_EXIT_OK;
}

static int cmd_verify(int n, char **paths)
{
	int i, s, status = SP_EXIT_OK;

	for (i = 0; i < n; i++) {
		s = verify_one(paths[i]);
		if (s > status)
			status = s;
	}
	if (fflush(stdout) || ferror(stdout))
		sp_die("cannot write 'stdout': %s", strerror(errno));
	return status;
}

/* main -------------------------------------------------------------------- */

enum { OPT_PLAIN = 256, OPT_JSON };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "level", required_argument, NULL, 'l' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "flush-interval", required_argument, NULL, 't' },
		{ "plain", no_argument, NULL, OPT_PLAIN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = NULL, *why;
	static char flag[4];
	uint64_t v;
	int c, nargs;

	sp_prog = "sp-spool";
	opterr = 0;
	/* the command may come before or after the options */
	while ((c = getopt_long(argc, argv, "+:l:b:t:qhV", longopts, NULL)) != -1 ||
	       (!cmd && optind < argc)) {
		if (c == -1) {
			cmd = argv[optind++];
			continue;
		}
		/* what was given, not what differs from the defaults */
		if (!opt.write_only && c == OPT_PLAIN) {
			opt.write_only = "--plain";
		} else if (!opt.write_only && c > 0 && c < 128 &&
			   strchr("lbtq", c)) {
			snprintf(flag, sizeof(flag), "-%c", c);
			opt.write_only = flag;
		}
		switch (c) {
		case 'l':
			why = sp_parse_u64(optarg, 0, 9, &v);
			if (why)
				sp_usage_error("invalid level '%s': %s", optarg, why);
			opt.spool.level = (int)v;
			break;
		case 'b':
			why = sp_parse_u64(optarg, SP_SPOOL_BLOCK_MIN,
					   SP_SPOOL_BLOCK_LIMIT, &v);
			if (why)
				sp_usage_error("invalid block size '%s': %s", optarg, why);
			opt.spool.block_size = (uint32_t)v;
			break;
		case 't':
			why = sp_parse_seconds(optarg, &opt.flush_ns);
			if (why)
				sp_usage_error("invalid flush interval '%s': %s", optarg, why);
			break;
		case OPT_PLAIN:
			opt.spool.enc = SP_SPOOL_ENC_PLAIN;
			break;
		case OPT_JSON:
			opt.json = 1;
			break;
		case 'q':
			opt.quiet = 1;
			break;
		case 'h':
			usage();
			return sp_stdout_done();
		case 'V':
			printf("sp-spool %s\n", SP_VERSION);
			return sp_stdout_done();
		default:
			sp_bad_option(argv, c);
		}
	}
	if (!cmd)
		sp_usage_error("missing command: write, cat, info or verify");
	nargs = argc - optind;
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(cmd, "write")) {
		if (nargs != 1)
			sp_usage_error("write takes one FILE");
		return cmd_write(argv[optind]);
	}
	if (opt.write_only)
		sp_usage_error("%s goes with write: -l, -b, -t, -q and --plain are options of write",
			       opt.write_only);
	if (opt.json && strcmp(cmd, "info"))
		sp_usage_error("--json goes with info");
	if (!strcmp(cmd, "cat")) {
		if (nargs < 1)
			sp_usage_error("cat takes one FILE or more");
		return cmd_cat(nargs, argv + optind);
	}
	if (!strcmp(cmd, "info")) {
		if (nargs != 1)
			sp_usage_error("info takes one FILE");
		return cmd_info(argv[optind]);
	}
	if (!strcmp(cmd, "verify")) {
		if (nargs < 1)
			sp_usage_error("verify takes one FILE or more");
		return cmd_verify(nargs, argv + optind);
	}
	sp_usage_error("unknown command '%s': write, cat, info or verify", cmd);
}
