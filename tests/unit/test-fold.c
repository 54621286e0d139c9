/* SPDX-License-Identifier: MIT */
/* test-fold.c: name sanitising, folding, sorting and prefixes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fold/fold.h"
#include "fold/model.h"
#include "unit.h"

static char tmp[] = "/tmp/test-fold.XXXXXX";

static void check_name(const char *in, unsigned kind, unsigned origin,
		       const char *want, int line)
{
	char *got = sp_fold_name(in, kind, origin);

	if (got && !strcmp(got, want)) {
		unit_pass++;
	} else {
		unit_fail++;
		fprintf(stderr, "%s:%d: sp_fold_name('%s') = '%s', want '%s'\n",
			__FILE__, line, in ? in : "(null)", got ? got : "(null)",
			want);
	}
	free(got);
}

#define NAME(in, kind, origin, want) check_name(in, kind, origin, want, __LINE__)

static void test_names(void)
{
	NAME("a;b", SP_FK_NATIVE, SP_FO_SYMTAB, "a:b");
	NAME("foo 12", SP_FK_NATIVE, SP_FO_SYMTAB, "foo_12");
	NAME("foo  12", SP_FK_NATIVE, SP_FO_SYMTAB, "foo__12");
	NAME("foo 1.5", SP_FK_NATIVE, SP_FO_SYMTAB, "foo_1.5");
	NAME("v 2 ", SP_FK_NATIVE, SP_FO_SYMTAB, "v_2");
	NAME("foo12", SP_FK_NATIVE, SP_FO_SYMTAB, "foo12");
	NAME("12", SP_FK_NATIVE, SP_FO_SYMTAB, "12");
	NAME("x\t", SP_FK_NATIVE, SP_FO_SYMTAB, "x");
	NAME("a\tb\nc", SP_FK_NATIVE, SP_FO_SYMTAB, "a b c");
	NAME("", SP_FK_NATIVE, SP_FO_SYMTAB, "[unknown]");
	NAME(NULL, SP_FK_NATIVE, SP_FO_NONE, "[unknown]");
	NAME("   ", SP_FK_NATIVE, SP_FO_SYMTAB, "[unknown]");
	NAME("operator() (int)", SP_FK_NATIVE, SP_FO_SYMTAB, "operator() (int)");
	NAME("do_syscall_64", SP_FK_KERNEL, SP_FO_KALLSYMS, "do_syscall_64_[k]");
	NAME("", SP_FK_KERNEL, SP_FO_NONE, "[unknown]_[k]");
	NAME("py::hot:<stdin>", SP_FK_JIT, SP_FO_PERFMAP, "py::hot:<stdin>_[j]");
	NAME("LazyCompile:~fib /x.js:1", SP_FK_JIT, SP_FO_PERFMAP,
	     "LazyCompile:~fib /x.js:1_[j]");
	NAME("JS fn 7", SP_FK_JIT, SP_FO_PERFMAP, "JS fn_7_[j]");
	NAME("inl", SP_FK_INLINE, SP_FO_SYMTAB, "inl_[i]");
	NAME("[libz.so.1]+0x1f0", SP_FK_NATIVE, SP_FO_NONE, "[libz.so.1]");
	NAME("[libz.so.1]+0x1f0", SP_FK_NATIVE, SP_FO_SYMTAB, "[libz.so.1]+0x1f0");
	NAME("[vdso]+0xg", SP_FK_NATIVE, SP_FO_NONE, "[vdso]+0xg");
	NAME("f+0x10", SP_FK_NATIVE, SP_FO_NONE, "f+0x10");
}

static void test_comm_names(void)
{
	char *s;

	s = sp_fold_comm_name("my prog");
	CHECK_STR(s, "my_prog");
	free(s);
	s = sp_fold_comm_name("a;b\tc");
	CHECK_STR(s, "a:b_c");
	free(s);
	s = sp_fold_comm_name("");
	CHECK_STR(s, "[unknown]");
	free(s);
}

/* What f writes (top N lines when top), read back; f is freed. */
static char *output(struct sp_fold *f, unsigned top)
{
	struct sp_out *out = sp_out_open(tmp, 0);
	char *buf;
	FILE *fp;
	long len;

	if (top)
		CHECK(sp_fold_write_top(f, out, top) == 0);
	else
		CHECK(sp_fold_write(f, out) == 0);
	CHECK(sp_out_close(out) == 0);
	sp_fold_free(f);
	fp = fopen(tmp, "r");
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)len + 1);
	CHECK(fread(buf, 1, (size_t)len, fp) == (size_t)len);
	fclose(fp);
	return buf;
}

/* Feed symbolized text (without magic) to a fold; returns its output. */
static char *fold_text(unsigned flags, const char *text, unsigned top,
		       const char **err)
{
	static char errbuf[256];
	char *copy = strdup(text), *line, *save = NULL;
	struct sp_fold *f = sp_fold_new(flags);
	struct sp_st_rec rec;
	int r = 0;

	*err = NULL;
	for (line = strtok_r(copy, "\n", &save); line && !r;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *e = sp_st_parse(line, strlen(line), &rec);

		if (e) {
			snprintf(errbuf, sizeof(errbuf), "parse: %s", e);
			*err = errbuf;
			break;
		}
		r = sp_fold_apply(f, &rec);
		if (r) {
			snprintf(errbuf, sizeof(errbuf), "%s", sp_fold_error(f));
			*err = errbuf;
		}
	}
	free(copy);
	return output(f, top);
}

static const char two_procs[] =
	"comm\t0\t10\t10\tmy prog\texec\n"
	"comm\t0\t10\t11\tworker\t-\n"
	"comm\t0\t20\t20\tmy prog\t-\n"
	"stack\t10\t1\t3\tcomplete\n"
	"frame\t10\t1\t0\tnative\tsymtab\t-\t0x3\tleaf\t/x\t-\t-\n"
	"frame\t10\t1\t1\tnative\tsymtab\t-\t0x2\tmain\t/x\t-\t-\n"
	"frame\t10\t1\t2\tnative\tsymtab\thidden\t0x1\t_start\t/x\t-\t-\n"
	"stack\t20\t1\t2\tcomplete\n"
	"frame\t20\t1\t0\tnative\tsymtab\t-\t0x3\tleaf\t/x\t-\t-\n"
	"frame\t20\t1\t1\tnative\tsymtab\t-\t0x2\tmain\t/x\t-\t-\n"
	"stack\t20\t2\t1\tcomplete\n"
	"frame\t20\t2\t0\tnative\tsymtab\t-\t0x2\tmain\t/x\t-\t-\n"
	"stack\t10\t2\t0\tnoregs\n"
	"sample\t1\t10\t10\t0\t5\t1\n"
	"sample\t2\t20\t20\t0\t5\t1\n"
	"sample\t3\t10\t11\t0\t5\t1\n"
	"sample\t4\t20\t20\t0\t5\t2\n"
	"sample\t5\t20\t20\t0\t5\t2\n"
	"sample\t6\t10\t12\t0\t5\t2\n"
	"sample\t6\t30\t30\t0\t5\t1\n"
	"summary\tsamples=7\n";

static void test_fold(void)
{
	const char *err;
	char *s;

	/* 30/1 was never defined: stop there, print what came before */
	s = fold_text(0, two_procs, 0, &err);
	CHECK_STR(err, "sample of undefined stack 30/1");
	/* same comm and stack in two processes merge; ties sort bytewise,
	 * a stack before its extensions */
	CHECK_STR(s, "my_prog;main 2\n"
		     "my_prog;main;leaf 2\n"
		     "my_prog 1\n"
		     "worker;main;leaf 1\n");
	free(s);

	s = fold_text(SP_FOLD_PID, two_procs, 0, &err);
	CHECK_STR(s, "my_prog-20;main 2\n"
		     "my_prog-10 1\n"
		     "my_prog-10;main;leaf 1\n"
		     "my_prog-20;main;leaf 1\n"
		     "worker-10;main;leaf 1\n");
	free(s);

	s = fold_text(SP_FOLD_TID | SP_FOLD_PID | SP_FOLD_HIDDEN, two_procs, 0, &err);
	CHECK_STR(s, "my_prog-20/20;main 2\n"
		     "my_prog-10/10;_start;main;leaf 1\n"
		     "my_prog-10/12 1\n"
		     "my_prog-20/20;main;leaf 1\n"
		     "worker-10/11;_start;main;leaf 1\n");
	free(s);

	s = fold_text(SP_FOLD_WEIGHT, two_procs, 0, &err);
	CHECK_STR(s, "my_prog;main 10\n"
		     "my_prog;main;leaf 10\n"
		     "my_prog 5\n"
		     "worker;main;leaf 5\n");
	free(s);
}

static void test_sorting(void)
{
	static const char text[] =
		"comm\t0\t1\t1\tp\t-\n"
		"stack\t1\t1\t1\tcomplete\n"
		"frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tb\t-\t-\t-\n"
		"stack\t1\t2\t1\tcomplete\n"
		"frame\t1\t2\t0\tnative\tsymtab\t-\t0x1\tB\t-\t-\t-\n"
		"stack\t1\t3\t1\tcomplete\n"
		"frame\t1\t3\t0\tnative\tsymtab\t-\t0x1\ta\t-\t-\t-\n"
		"stack\t1\t4\t1\tcomplete\n"
		"frame\t1\t4\t0\tkernel\tkallsyms\t-\t0x1\tk\t-\t-\t-\n"
		"sample\t1\t1\t1\t0\t1\t1\n"
		"sample\t1\t1\t1\t0\t1\t2\n"
		"sample\t1\t1\t1\t0\t1\t3\n"
		"sample\t1\t1\t1\t0\t1\t4\n"
		"sample\t1\t1\t1\t0\t1\t4\n"
		"sample\t1\t1\t1\t0\t1\t4\n"
		"summary\tsamples=6\n";
	const char *err;
	char *s = fold_text(0, text, 0, &err);

	CHECK(err == NULL);
	CHECK_STR(s, "p;k_[k] 3\np;B 1\np;a 1\np;b 1\n");
	free(s);
}

static void test_grammar_errors(void)
{
	const char *err;
	char *s;

	s = fold_text(0, "frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tb\t-\t-\t-\n", 0, &err);
	CHECK_STR(err, "frame line without its stack line");
	free(s);
	s = fold_text(0, "stack\t1\t1\t2\tcomplete\n"
		      "frame\t1\t1\t1\tnative\tsymtab\t-\t0x1\tb\t-\t-\t-\n", 0, &err);
	CHECK_STR(err, "frame 1/1 #1 out of order: expected 1/1 #0");
	free(s);
	s = fold_text(0, "stack\t1\t1\t2\tcomplete\n"
		      "frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tb\t-\t-\t-\n"
		      "sample\t1\t1\t1\t0\t1\t1\n", 0, &err);
	CHECK_STR(err, "stack 1/1 ends after 1 of its 2 frames");
	free(s);
	/* a thread nobody named */
	s = fold_text(0, "stack\t1\t1\t0\tcomplete\nsample\t1\t1\t2\t0\t1\t1\n", 0, &err);
	CHECK(err == NULL);
	CHECK_STR(s, "[unknown] 1\n");
	free(s);
}

static void test_top(void)
{
	static const char text[] =
		"comm\t0\t1\t1\tp\t-\n"
		"stack\t1\t1\t4\tcomplete\n"
		"frame\t1\t1\t0\tnative\tsymtab\t-\t0x1\tfib\t-\t-\t-\n"
		"frame\t1\t1\t1\tnative\tsymtab\t-\t0x1\tfib\t-\t-\t-\n"
		"frame\t1\t1\t2\tnative\tsymtab\t-\t0x1\tfib\t-\t-\t-\n"
		"frame\t1\t1\t3\tnative\tsymtab\t-\t0x1\tmain\t-\t-\t-\n"
		"stack\t1\t2\t2\ttruncated\t-\n"
		"frame\t1\t2\t0\tnative\tsymtab\t-\t0x1\twork\t-\t-\t-\n"
		"frame\t1\t2\t1\tsynthetic\tnone\t-\t0x0\t[truncated]\t-\t-\t-\n"
		"sample\t1\t1\t1\t0\t1\t1\n"
		"sample\t1\t1\t1\t0\t1\t1\n"
		"sample\t1\t1\t1\t0\t1\t1\n"
		"sample\t1\t1\t1\t0\t1\t2\n"
		"summary\tsamples=4\n";
	const char *err;
	char *s = fold_text(0, text, 2, &err);

	CHECK(err == NULL);
	CHECK_STR(s, "# top 2 by self, of 4 samples\n"
		     "      self   self%      total  total%  function\n"
		     "         3  75.00%          3  75.00%  fib\n"
		     "         1  25.00%          1  25.00%  work\n"
		     "\n"
		     "# top 2 by total, of 4 samples\n"
		     "      self   self%      total  total%  function\n"
		     "         3  75.00%          3  75.00%  fib\n"
		     "         0   0.00%          3  75.00%  main\n"
		     "\n"
		     "# stack ends, of 4 samples\n"
		     "   samples   share  end\n"
		     "         3  75.00%  complete\n"
		     "         1  25.00%  truncated\n");
	free(s);
}

/* Parse one line of symbolized text and fold it; 0 or the error. */
static int feed(struct sp_fold *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int feed(struct sp_fold *f, const char *fmt, ...)
{
	struct sp_st_rec rec;
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (sp_st_parse(line, strlen(line), &rec))
		return -EINVAL;
	return sp_fold_apply(f, &rec);
}

/*
 * Processes come, are sampled and go, their pids reused, between profiles
 * cleared as sp-fold --every clears them: what the gone ones left is
 * freed, and what the live ones defined before still serves.
 */
static void test_gone(void)
{
	struct sp_fold *f = sp_fold_new(SP_FOLD_SAMPLES);
	uint32_t pid;
	int i, bad = 0;
	char *buf;

	bad |= feed(f, "event\tcpu-clock\tfreq\t99");
	bad |= feed(f, "comm\t0\t1000\t1000\tkeeper\t-");
	bad |= feed(f, "map\t0\t1000\t0x1000\t0x2000\t0x0\t-\t/k");
	bad |= feed(f, "stack\t1000\t1\t2\tcomplete");
	bad |= feed(f, "frame\t1000\t1\t0\tnative\tsymtab\t-\t0x1100\tkleaf\t/k\t-\t-");
	bad |= feed(f, "frame\t1000\t1\t1\tnative\tsymtab\t-\t0x1010\tmain\t/k\t-\t-");
	for (i = 0; i < 3000 && !bad; i++) {
		pid = 2000 + (uint32_t)(i % 500);
		bad |= feed(f, "comm\t%d\t%u\t%u\tproc\t-", i, pid, pid);
		bad |= feed(f, "map\t%d\t%u\t0x4000\t0x5000\t0x0\t-\t/p%d", i, pid, i);
		bad |= feed(f, "stack\t%u\t1\t2\tcomplete", pid);
		bad |= feed(f, "frame\t%u\t1\t0\tnative\tsymtab\t-\t0x4100\twork%d\t/p%d\t-\t-", pid, i, i);
		bad |= feed(f, "frame\t%u\t1\t1\tnative\tsymtab\t-\t0x4010\tmain\t/p%d\t-\t-", pid, i);
		bad |= feed(f, "sample\t%d\t%u\t%u\t0\t1\t1", i, pid, pid);
		bad |= feed(f, "gone\t%d\t%u", i, pid);
		if (i % 100 == 99)
			sp_fold_clear_counts(f);
	}
	CHECK(!bad);
	CHECK(sp_fold_compactions(f) > 0);
	/* of 3,001 stacks defined, those of the processes alive stay */
	CHECK(f->nstacks < 1000 && f->nframes < 2000 && f->nmaps < 1000);
	/* defined before every compaction, sampled after */
	CHECK(feed(f, "sample\t5000\t1000\t1000\t0\t1\t1") == 0);
	/* a pid gone and back: the new process's own stack */
	CHECK(feed(f, "comm\t5001\t2000\t2000\tnew\t-") == 0);
	CHECK(feed(f, "stack\t2000\t1\t1\tcomplete") == 0);
	CHECK(feed(f, "frame\t2000\t1\t0\tnative\tsymtab\t-\t0x4100\tfresh\t/q\t-\t-") == 0);
	CHECK(feed(f, "sample\t5002\t2000\t2000\t0\t1\t1") == 0);
	/* a gone process's stack is undefined from then on */
	CHECK(feed(f, "sample\t5003\t2499\t2499\t0\t1\t1") == -EINVAL);
	buf = output(f, 0);
	CHECK_STR(buf, "keeper;main;kleaf 1\nnew;fresh 1\n");
	free(buf);
}

/*
 * A process that lives on while its threads come and go: the names and
 * prefixes of the threads gone are let go, the process's stack stays.
 */
static void test_threads_gone(void)
{
	struct sp_fold *f = sp_fold_new(SP_FOLD_TID);
	uint32_t tid;
	int i, bad = 0;

	bad |= feed(f, "comm\t0\t1000\t1000\tpool\t-");
	bad |= feed(f, "stack\t1000\t1\t1\tcomplete");
	bad |= feed(f, "frame\t1000\t1\t0\tnative\tsymtab\t-\t0x1100\twork\t/k\t-\t-");
	for (i = 0; i < 5000 && !bad; i++) {
		tid = 1001 + (uint32_t)(i % 3000);
		bad |= feed(f, "comm\t%d\t1000\t%u\tworker-%d\t-", i, tid, i);
		bad |= feed(f, "sample\t%d\t1000\t%u\t0\t1\t1", i, tid);
		bad |= feed(f, "gone\t%d\t1000\t%u", i, tid);
		if (i % 100 == 99)
			sp_fold_clear_counts(f);
	}
	CHECK(!bad);
	CHECK(sp_fold_compactions(f) > 0);
	CHECK(f->comms.n < 1500 && f->prefixes.n < 1500 && f->nstacks == 1);
	/* the main thread's name and the stack serve on */
	CHECK(feed(f, "sample\t9000\t1000\t1000\t0\t1\t1") == 0);
	sp_fold_free(f);
}

/*
 * A thread renamed after it was sampled (an exec, a worker naming itself):
 * each of its stacks gets a second entry, chained to the first, while the
 * array of entries grows under the chain.  Sampled again under the new name,
 * every stack finds its entry: one per (thread, stack, name), counts kept.
 */
static void test_renamed_samples(void)
{
	struct sp_fold *f = sp_fold_new(SP_FOLD_SAMPLES);
	uint64_t total = 0;
	int i, round, bad = 0;
	size_t k;

	bad |= feed(f, "comm\t0\t10\t10\tbefore\t-");
	for (i = 1; i <= 300 && !bad; i++) {
		bad |= feed(f, "stack\t10\t%d\t1\tcomplete", i);
		bad |= feed(f, "frame\t10\t%d\t0\tnative\tsymtab\t-\t0x%x\tf%d\t/x\t-\t-", i, 0x1000 + i, i);
		bad |= feed(f, "sample\t%d\t10\t10\t0\t1\t%d", i, i);
	}
	bad |= feed(f, "comm\t400\t10\t10\tafter\t-");
	for (round = 0; round < 2; round++)
		for (i = 1; i <= 300 && !bad; i++)
			bad |= feed(f, "sample\t%d\t10\t10\t0\t1\t%d", 500 + i, i);
	CHECK(!bad);
	CHECK(f->nsamples == 600);
	for (k = 0; k < f->nsamples; k++)
		total += f->samples[k].count;
	CHECK(total == 900);
	sp_fold_free(f);
}

int main(void)
{
	int fd = mkstemp(tmp);

	CHECK(fd >= 0);
	close(fd);
	test_names();
	test_comm_names();
	test_fold();
	test_sorting();
	test_grammar_errors();
	test_top();
	test_gone();
	test_threads_gone();
	test_renamed_samples();
	unlink(tmp);
	return unit_done("test-fold");
}
