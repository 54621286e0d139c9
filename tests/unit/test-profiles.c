/* SPDX-License-Identifier: MIT */
/*
 * test-profiles.c: the pprof and speedscope writers of lib/fold: the pprof
 * profile is gunzipped and decoded with protobuf-c and checked message by
 * message (mappings replaced in part, inline chains, labels, values); the
 * speedscope file is compared whole (time order, merged runs, escapes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fold/fold.h"
#include "fold/profile.pb-c.h"
#include "unit.h"

static char tmp[] = "/tmp/test-profiles.XXXXXX";

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Location pb_location;

static void feed(struct sp_fold *f, const char *text)
{
	char *copy = strdup(text), *line, *save = NULL;
	struct sp_st_rec rec;

	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *e = sp_st_parse(line, strlen(line), &rec);

		if (e)
			fprintf(stderr, "parse '%s': %s\n", line, e);
		CHECK(e == NULL);
		if (!e)
			CHECK(sp_fold_apply(f, &rec) == 0);
	}
	free(copy);
}

static void feed_map(struct sp_fold *f, uint32_t pid, uint64_t start,
		     uint64_t end, uint64_t pgoff, const char *bid,
		     const char *path)
{
	struct sp_st_rec rec = { .type = SP_ST_MAP };

	rec.u.map = (struct sp_st_map){ .pid = pid, .start = start,
		.end = end, .pgoff = pgoff, .build_id = bid, .path = path };
	CHECK(sp_fold_apply(f, &rec) == 0);
}

/* What a writer wrote to tmp, len bytes, malloc'd. */
static char *slurp(size_t *len)
{
	FILE *fp = fopen(tmp, "r");
	char *buf;
	long n;

	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	CHECK(fread(buf, 1, (size_t)n, fp) == (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

static pb_profile *write_pprof(struct sp_fold *f)
{
	struct sp_out *out = sp_out_open(tmp, 1);
	uint8_t *raw = malloc(1 << 20);
	z_stream z = { 0 };
	pb_profile *p;
	size_t len;
	char *gz;

	CHECK(sp_fold_write_pprof(f, out) == 0);
	CHECK(sp_out_close(out) == 0);
	gz = slurp(&len);
	CHECK(len > 2 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
	CHECK(inflateInit2(&z, 16 + 15) == Z_OK);
	z.next_in = (uint8_t *)gz;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = 1 << 20;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(gz);
	free(raw);
	CHECK(p != NULL);
	return p;
}

static const char *s(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] :
	       "(out of range)";
}

static const pb_location *loc(const pb_profile *p, uint64_t id)
{
	return id && id <= p->n_location ? p->location[id - 1] : NULL;
}

static const char *fn_name(const pb_profile *p, const pb_location *l,
			   size_t line)
{
	uint64_t id = l->line[line]->function_id;

	return id && id <= p->n_function ?
	       s(p, p->function[id - 1]->name) : "(bad function)";
}

/*
 * Mappings: a library mapped at 0x1000-0x4000, then a second file mapped
 * over its middle (0x2000-0x3000), as mmap(MAP_FIXED) does.  A frame named
 * before the second mapping keeps the whole first; frames after it are in
 * the left or right piece (offset moved on) or in the new file.
 */
static void test_pprof_mappings(void)
{
	struct sp_fold *f = sp_fold_new(SP_FOLD_SAMPLES);
	const Perftools__Profiles__Mapping *m;
	pb_profile *p;
	const pb_location *l;
	size_t i;

	feed(f, "event\tcpu-clock\tfreq\t100\n"
		"comm\t0\t10\t10\tprog\t-\n");
	feed_map(f, 10, 0x1000, 0x4000, 0x10000, "aabb", "/lib/a.so");
	feed(f, "stack\t10\t1\t1\troot\n"
		"frame\t10\t1\t0\tnative\tsymtab\t-\t0x2100\tearly\t/lib/a.so\t-\t-\n");
	feed_map(f, 10, 0x2000, 0x3000, 0, NULL, "/lib/b.so");
	feed(f, "stack\t10\t2\t3\troot\n"
		"frame\t10\t2\t0\tnative\tsymtab\t-\t0x2100\tinb\t/lib/b.so\t-\t-\n"
		"frame\t10\t2\t1\tnative\tsymtab\t-\t0x3100\tright\t/lib/a.so\t-\t-\n"
		"frame\t10\t2\t2\tnative\tsymtab\t-\t0x1100\tleft\t/lib/a.so\t-\t-\n"
		"sample\t1\t10\t10\t0\t10000000\t1\n"
		"sample\t2\t10\t10\t0\t10000000\t2\n"
		"summary\tsamples=2\tduration_ns=5\n");
	p = write_pprof(f);
	if (!p)
		goto out;
	CHECK(p->n_string_table > 0 && !strcmp(p->string_table[0], ""));
	CHECK(p->n_sample_type == 2);
	CHECK_STR(s(p, p->sample_type[1]->type), "cpu");
	CHECK_STR(s(p, p->sample_type[1]->unit), "nanoseconds");
	CHECK(p->period == 10000000);
	CHECK(p->duration_nanos == 5);
	CHECK(p->n_sample == 2 && p->n_location == 4);
	for (i = 0; i < p->n_location; i++) {
		l = p->location[i];
		CHECK(l->id == i + 1 && l->n_line == 1);
		CHECK(l->mapping_id >= 1 && l->mapping_id <= p->n_mapping);
		m = p->mapping[l->mapping_id - 1];
		CHECK(m->memory_start <= l->address && l->address < m->memory_limit);
		if (!strcmp(fn_name(p, l, 0), "early")) {
			CHECK(m->memory_start == 0x1000 && m->memory_limit == 0x4000);
			CHECK(m->file_offset == 0x10000);
			CHECK_STR(s(p, m->build_id), "aabb");
		} else if (!strcmp(fn_name(p, l, 0), "inb")) {
			CHECK(m->memory_start == 0x2000 && m->memory_limit == 0x3000);
			CHECK_STR(s(p, m->filename), "/lib/b.so");
			CHECK_STR(s(p, m->build_id), "");
		} else if (!strcmp(fn_name(p, l, 0), "right")) {
			CHECK(m->memory_start == 0x3000 && m->memory_limit == 0x4000);
			CHECK(m->file_offset == 0x12000);
			CHECK_STR(s(p, m->filename), "/lib/a.so");
		} else {
			CHECK_STR(fn_name(p, l, 0), "left");
			CHECK(m->memory_start == 0x1000 && m->memory_limit == 0x2000);
			CHECK(m->file_offset == 0x10000);
		}
		CHECK(m->has_functions && !m->has_filenames);
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
out:
	sp_fold_free(f);
}

/*
 * An inline chain is one location of several lines, innermost first; a
 * kernel frame is shared by two processes; samples are per thread and name
 * with pid, tid and thread_name; --pid adds the thread's root location.
 */
static void test_pprof_samples(void)
{
	static const char text[] =
		"event\tcpu-clock\tperiod\t250000\n"
		"comm\t0\t10\t10\tprog\t-\n"
		"comm\t0\t20\t20\tother\t-\n"
		"stack\t10\t1\t4\troot\n"
		"frame\t10\t1\t0\tkernel\tkallsyms\t-\t0xffffffff81000010\tdo_sys\t[kernel]\t-\t-\n"
		"frame\t10\t1\t1\tinline\tsymtab\t-\t0x500\tleaf\t/bin/p\tp.c\t7\n"
		"frame\t10\t1\t2\tnative\tsymtab\t-\t0x500\touter()\t/bin/p\tp.c\t20\t_Z5outerv\t18\n"
		"frame\t10\t1\t3\tnative\tsymtab\thidden\t0x400\t_start\t/bin/p\t-\t-\n"
		"stack\t20\t1\t1\troot\n"
		"frame\t20\t1\t0\tkernel\tkallsyms\t-\t0xffffffff81000010\tdo_sys\t[kernel]\t-\t-\n"
		"sample\t1\t10\t10\t0\t250000\t1\n"
		"sample\t2\t10\t10\t0\t250000\t1\n"
		"sample\t3\t20\t20\t0\t250000\t1\n"
		"comm\t4\t10\t10\trenamed\t-\n"
		"sample\t5\t10\t10\t0\t250000\t1\n"
		"summary\tsamples=4\n";
	struct sp_fold *f = sp_fold_new(SP_FOLD_SAMPLES | SP_FOLD_PID | SP_FOLD_SHORT);
	const Perftools__Profiles__Sample *sa;
	const pb_location *l;
	pb_profile *p;
	size_t i;

	feed(f, text);
	p = write_pprof(f);
	if (!p)
		goto out;
	CHECK(p->period == 250000);
	/* prog, other, renamed prog */
	CHECK(p->n_sample == 3);
	if (p->n_sample != 3)
		goto done;
	sa = p->sample[0];
	CHECK(sa->n_value == 2 && sa->value[0] == 2 && sa->value[1] == 500000);
	/* kernel leaf, the inline chain, the thread's root; _start hidden */
	CHECK(sa->n_location_id == 3);
	l = loc(p, sa->location_id[0]);
	CHECK(l && l->n_line == 1 && !strcmp(fn_name(p, l, 0), "do_sys"));
	CHECK(l && l->mapping_id &&
	      !strcmp(s(p, p->mapping[l->mapping_id - 1]->filename),
		      "[kernel.kallsyms]"));
	l = loc(p, sa->location_id[1]);
	CHECK(l && l->n_line == 2 && l->address == 0x500);
	if (l && l->n_line == 2) {
		CHECK_STR(fn_name(p, l, 0), "leaf");
		CHECK(l->line[0]->line == 7);
		CHECK_STR(fn_name(p, l, 1), "outer");
		CHECK(l->line[1]->line == 20);
		/* the system's name is the symbol, the start its first line */
		CHECK_STR(s(p, p->function[l->line[1]->function_id - 1]->system_name),
			  "_Z5outerv");
		CHECK(p->function[l->line[1]->function_id - 1]->start_line == 18);
		CHECK_STR(s(p, p->function[l->line[0]->function_id - 1]->system_name),
			  "leaf");
		CHECK(p->mapping[l->mapping_id - 1]->has_inline_frames);
		CHECK(p->mapping[l->mapping_id - 1]->has_line_numbers);
		CHECK_STR(s(p, p->function[l->line[0]->function_id - 1]->filename),
			  "p.c");
	}
	l = loc(p, sa->location_id[2]);
	CHECK(l && l->mapping_id == 0 && !strcmp(fn_name(p, l, 0), "prog-10"));
	CHECK(sa->n_label == 3);
	for (i = 0; i < sa->n_label; i++) {
		const char *k = s(p, sa->label[i]->key);

		if (!strcmp(k, "pid"))
			CHECK(sa->label[i]->num == 10);
		else if (!strcmp(k, "tid"))
			CHECK(sa->label[i]->num == 10);
		else
			CHECK(!strcmp(k, "thread_name") &&
			      !strcmp(s(p, sa->label[i]->str), "prog"));
	}
	/* the kernel location is one for both processes */
	CHECK(p->sample[1]->location_id[0] == sa->location_id[0]);
	CHECK(p->sample[1]->value[0] == 1);
	sa = p->sample[2];
	CHECK(sa->value[0] == 1);
	CHECK(sa->n_label == 3 && !strcmp(s(p, sa->label[2]->str), "renamed"));
done:
	perftools__profiles__profile__free_unpacked(p, NULL);
out:
	sp_fold_free(f);
}

/* The recording began at time 1000 of its clock. */
static void feed_start(struct sp_fold *f)
{
	struct sp_st_rec rec = { .type = SP_ST_START };

	rec.u.start = (struct sp_st_start){ .time = 1000,
		.realtime = 1700000000000000000ull };
	CHECK(sp_fold_apply(f, &rec) == 0);
}

static char *write_speedscope(struct sp_fold *f)
{
	struct sp_out *out = sp_out_open(tmp, 0);
	size_t len;

	CHECK(sp_fold_write_speedscope(f, out) == 0);
	CHECK(sp_out_close(out) == 0);
	return slurp(&len);
}

static void test_speedscope(void)
{
	static const char text[] =
		"event\tcpu-clock\tfreq\t1000\n"
		"comm\t0\t10\t11\tw\"q\t-\n"
		"comm\t0\t10\t10\tm\t-\n"
		"stack\t10\t1\t2\troot\n"
		"frame\t10\t1\t0\tnative\tsymtab\t-\t0x2\tb\\\\\xff\t/x\tx.c\t3\n"
		"frame\t10\t1\t1\tnative\tsymtab\t-\t0x1\tmain\t/x\t-\t-\n"
		"stack\t10\t2\t1\troot\n"
		"frame\t10\t2\t0\tnative\tsymtab\t-\t0x1\tmain\t/x\t-\t-\n"
		"sample\t2000\t10\t11\t0\t7\t1\n"
		"sample\t3000\t10\t11\t0\t7\t1\n"
		"sample\t4000\t10\t11\t0\t7\t2\n"
		"sample\t5000\t10\t11\t0\t7\t1\n"
		"sample\t6000\t10\t10\t0\t7\t2\n"
		"summary\tsamples=5\n";
	struct sp_fold *f = sp_fold_new(SP_FOLD_TIMELINE);
	char *out;

	feed_start(f);
	feed(f, text);
	out = write_speedscope(f);
	CHECK_STR(out,
		  "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		  "\"shared\":{\"frames\":[{\"name\":\"main\",\"file\":\"/x\"},"
		  "{\"name\":\"b\\\\\\ufffd\",\"file\":\"x.c\"}]},"
		  "\"profiles\":["
		  "{\"type\":\"sampled\",\"name\":\"m 10/10\",\"unit\":\"none\","
		  "\"startValue\":0,\"endValue\":1,\"samples\":[[0]],\"weights\":[1]},"
		  "{\"type\":\"sampled\",\"name\":\"w\\\"q 10/11\",\"unit\":\"none\","
		  "\"startValue\":0,\"endValue\":4,\"samples\":[[0,1],[0],[0,1]],"
		  "\"weights\":[2,1,1]}],"
		  "\"name\":\"stackpulse\",\"activeProfileIndex\":1,"
		  "\"exporter\":\"stackpulse@" SP_VERSION "\"}\n");
	free(out);
	sp_fold_free(f);

	/* --weight on a clock: nanoseconds from the recording's start */
	f = sp_fold_new(SP_FOLD_TIMELINE | SP_FOLD_WEIGHT);
	feed_start(f);
	feed(f, text);
	out = write_speedscope(f);
	CHECK(strstr(out, "\"name\":\"w\\\"q 10/11\",\"unit\":\"nanoseconds\","
			  "\"startValue\":1000,\"endValue\":1028,") != NULL);
	CHECK(strstr(out, "\"weights\":[14,7,7]") != NULL);
	free(out);
	sp_fold_free(f);
}

int main(void)
{
	int fd = mkstemp(tmp);

	CHECK(fd >= 0);
	close(fd);
	test_pprof_mappings();
	test_pprof_samples();
	test_speedscope();
	unlink(tmp);
	return unit_done("test-profiles");
}
