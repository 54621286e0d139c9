/* SPDX-License-Identifier: MIT */
/*
 * test-spool.c: spool files: round trips, cut files, damage, a full disk,
 * and the stacks of a process gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/spool.h"
#include "unit.h"

#define NSTACKS 7
#define NSAMPLES 6000

/* A synthetic unwound stream: the records, back to back, and its header. */
static uint8_t *stream;
static size_t stream_len, stream_cap;
static uint32_t stream_nrec;
static struct sp_unw_header uh = { { SP_UNW_MAGIC, SP_UNW_VERSION, sizeof(uh) } };
static char dir[] = "/tmp/test-spool.XXXXXX";

static void add(const void *rec)
{
	const struct sp_rec_hdr *h = rec;

	if (stream_len + h->size > stream_cap) {
		stream_cap = (stream_len + h->size) * 2;
		stream = realloc(stream, stream_cap);
		if (!stream)
			abort();
	}
	memcpy(stream + stream_len, rec, h->size);
	stream_len += h->size;
	stream_nrec++;
}

static void make_stream(void)
{
	uint64_t buf[64] = { 0 };
	struct sp_comm_rec comm = { { SP_REC_COMM, sizeof(comm) }, 5, 42, 42, 0, 0, "deep" };
	struct sp_lost_rec lost = { { SP_REC_LOST, sizeof(lost) }, 7, 1, 3 };
	struct sp_unw_summary sum = { { SP_REC_SUMMARY, sizeof(sum) } };
	struct sp_mmap_rec *m = (void *)buf;
	struct sp_unw_stack *s = (void *)buf;
	uint64_t t = 1000000000;
	int i, k;

	strcpy(uh.ev.name, "cpu-clock");
	uh.ev.freq_or_period = 999;
	uh.ev.flags = SP_EV_FREQ;
	m->hdr.type = SP_REC_MMAP;
	m->hdr.size = sizeof(*m) + 16;
	m->pid = m->tid = 42;
	m->start = 0x400000;
	m->len = 0x1000;
	strcpy(m->filename, "/bin/deep");
	add(m);
	add(&comm);
	for (i = 1; i <= NSTACKS; i++) {
		memset(buf, 0, sizeof(buf));
		s->hdr.type = SP_REC_STACK;
		s->pid = 42;
		s->id = (uint32_t)i;
		s->nr_user = (uint16_t)(3 + i);
		s->hdr.size = (uint32_t)(sizeof(*s) + 8 * s->nr_user + sp_align8(s->nr_user));
		for (k = 0; k < s->nr_user; k++)
			((uint64_t *)(s + 1))[k] = 0x401000 + 16 * (uint64_t)(k * i);
		add(s);
	}
	for (i = 0; i < NSAMPLES; i++) {
		struct sp_unw_sample smp = { { SP_REC_SAMPLE, sizeof(smp) } };

		t += 1001001 + (uint64_t)(i * 7919 % 5000);
		smp.time = t;
		smp.pid = 42;
		smp.tid = 42 + (uint32_t)(i % 3);
		smp.cpu = (uint32_t)(i / 100 % 2);
		smp.stack_id = 1 + (uint32_t)(i * 31 % NSTACKS);
		smp.weight = 1001001;
		add(&smp);
		if (i == 3000)
			add(&lost);
	}
	sum.samples = NSAMPLES;
	sum.lost = 3;
	sum.stacks = NSTACKS;
	sum.threads = 3;
	sum.processes = 1;
	sum.start_time = 1000000000;
	sum.end_time = t;
	sum.duration_ns = t - 1000000000;
	sum.ends[SP_END_COMPLETE] = NSAMPLES;
	add(&sum);
}

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static int write_spool(const char *path, uint32_t enc, uint32_t block_size)
{
	struct sp_spool_opts o;
	struct sp_spool_writer *w;
	size_t off;
	int r = 0;

	sp_spool_opts_init(&o);
	o.enc = enc;
	o.block_size = block_size;
	w = sp_spool_writer_open(path, &uh, &o);
	if (!w)
		return -errno;
	for (off = 0; off < stream_len && !r; off += ((struct sp_rec_hdr *)(stream + off))->size)
		r = sp_spool_writer_add(w, (const void *)(stream + off));
	if (r) {
		sp_spool_writer_close(w);
		return r;
	}
	return sp_spool_writer_close(w);
}

/* Read path; the records must be a prefix of the stream.  Returns the count. */
static long read_prefix(const char *path, int *ret)
{
	const struct sp_rec_hdr *rec;
	struct sp_spool *r;
	size_t off = 0;
	long n = 0;

	*ret = sp_spool_open(path, &r);
	if (*ret == 0) {
		while ((*ret = sp_spool_next(r, &rec)) > 0) {
			if (off + rec->size > stream_len ||
			    memcmp(stream + off, rec, rec->size)) {
				*ret = -1000;
				break;
			}
			off += rec->size;
			n++;
		}
	}
	sp_spool_close(r);
	return n;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	uint8_t *buf = malloc(1 << 22);
	int fd = open(path, O_RDONLY);
	ssize_t n = read(fd, buf, 1 << 22);

	close(fd);
	*len = n > 0 ? (size_t)n : 0;
	return buf;
}

static void spit(const char *path, const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (write(fd, buf, len) != (ssize_t)len)
		abort();
	close(fd);
}

static void test_round_trip(uint32_t enc)
{
	struct sp_unw_summary sum, tally;
	struct sp_unw_stack_view v;
	struct sp_spool_sample smp;
	struct sp_spool_info inf;
	struct sp_spool *r;
	char path[64];
	long n;
	int ret, samples = 0;

	path_of(path, sizeof(path), "a.spool");
	CHECK(write_spool(path, enc, 4096) == 0);
	n = read_prefix(path, &ret);
	CHECK(ret == 0);
	CHECK(n == (long)stream_nrec);

	CHECK(sp_spool_open(path, &r) == 0);
	CHECK(!memcmp(sp_spool_header(r), &uh, sizeof(uh)));
	CHECK(sp_spool_summary(r, &sum) == 0);
	CHECK(!memcmp(&sum, stream + stream_len - sizeof(sum), sizeof(sum)));
	sp_spool_info(r, &inf);
	CHECK(inf.indexed && inf.samples == NSAMPLES && inf.blocks > 10);
	CHECK(inf.stream_bytes == sizeof(uh) + stream_len);
	while ((ret = sp_spool_next_sample(r, &smp)) > 0) {
		CHECK(smp.pid == 42);
		if (sp_spool_stack(r, smp.pid, smp.stack_id, &v) == 0)
			samples++;
	}
	CHECK(ret == 0);
	CHECK(samples == NSAMPLES);
	CHECK(sp_spool_stack(r, 42, 3, &v) == 0 && v.s->nr_user == 6);
	CHECK(sp_spool_stack(r, 43, 3, &v) == -ENOENT);
	CHECK(sp_spool_max_stack_id(r) == NSTACKS);
	sp_spool_tally(r, &tally);
	CHECK(tally.samples == NSAMPLES && tally.lost == 3 && tally.stacks == NSTACKS);
	CHECK(tally.threads == 3 && tally.processes == 1);
	sp_spool_close(r);
}

/* Block ends of a spool, from its block headers. */
static size_t block_ends(const uint8_t *buf, size_t len, uint64_t *ends,
			 uint32_t *nrec, size_t max)
{
	size_t pos = sizeof(struct sp_spool_header), n = 0;
	struct sp_spool_block b;

	while (pos + sizeof(b) <= len && n < max) {
		memcpy(&b, buf + pos, sizeof(b));
		if (memcmp(b.magic, SP_SPOOL_BLOCK_MAGIC, 8))
			break;
		pos += sizeof(b) + b.zsize;
		nrec[n] = b.nrec;
		ends[n++] = pos;
	}
	return n;
}

static void test_cuts(void)
{
	char path[64], cutp[64];
	uint64_t ends[512];
	uint32_t nrec[512];
	size_t len, nb, cut, i;
	uint8_t *buf;
	int bad = 0;

	path_of(path, sizeof(path), "a.spool");
	path_of(cutp, sizeof(cutp), "cut.spool");
	CHECK(write_spool(path, SP_SPOOL_ENC_DELTA, 4096) == 0);
	buf = slurp(path, &len);
	nb = block_ends(buf, len, ends, nrec, 512);
	CHECK(nb > 10);
	for (cut = 0; cut <= len; cut += 1024) {
		long want = 0, got;
		int ret;

		spit(cutp, buf, cut);
		for (i = 0; i < nb && ends[i] <= cut; i++)
			want += nrec[i];
		got = read_prefix(cutp, &ret);
		if (cut < sizeof(struct sp_spool_header)) {
			bad += ret != -EBADMSG;
			continue;
		}
		/* every complete block is read, then the cut is reported */
		if (got != want || ret != -ENODATA) {
			fprintf(stderr, "cut at %zu: %ld records (want %ld), ret %d\n",
				cut, got, want, ret);
			bad++;
		}
	}
	CHECK(bad == 0);
	{
		struct sp_spool *r;
		const struct sp_rec_hdr *rec;
		int ret;

		spit(cutp, buf, ends[3] + 100);
		CHECK(sp_spool_open(cutp, &r) == 0);
		while ((ret = sp_spool_next(r, &rec)) > 0)
			;
		CHECK(ret == -ENODATA);
		CHECK(strstr(sp_spool_error(r), "is cut at byte") != NULL);
		CHECK(strstr(sp_spool_error(r), "after block 3") != NULL);
		sp_spool_close(r);
	}
	free(buf);
}

static void test_flip(void)
{
	char path[64], flipp[64], want[64];
	const struct sp_rec_hdr *rec;
	uint64_t ends[512];
	uint32_t nrec[512];
	struct sp_spool *r;
	uint8_t *buf;
	size_t len;
	int ret;

	path_of(path, sizeof(path), "a.spool");
	path_of(flipp, sizeof(flipp), "flip.spool");
	CHECK(write_spool(path, SP_SPOOL_ENC_DELTA, 4096) == 0);
	buf = slurp(path, &len);
	CHECK(block_ends(buf, len, ends, nrec, 512) > 4);
	buf[ends[2] + sizeof(struct sp_spool_block) + 5] ^= 0x40;	/* block 3's data */
	spit(flipp, buf, len);
	CHECK(sp_spool_open(flipp, &r) == 0);
	while ((ret = sp_spool_next(r, &rec)) > 0)
		;
	CHECK(ret == -EBADMSG);
	snprintf(want, sizeof(want), "bad checksum in block 3 at byte %llu",
		 (unsigned long long)ends[2]);
	CHECK(strstr(sp_spool_error(r), want) != NULL);
	sp_spool_close(r);

	buf[ends[2] + sizeof(struct sp_spool_block) + 5] ^= 0x40;
	buf[ends[2] + 20] ^= 0x01;	/* block 3's usize */
	spit(flipp, buf, len);
	CHECK(sp_spool_open(flipp, &r) == 0);
	while ((ret = sp_spool_next(r, &rec)) > 0)
		;
	CHECK(ret == -EBADMSG);
	CHECK(strstr(sp_spool_error(r), "in block 3") != NULL);
	sp_spool_close(r);

	/* random bytes after a good header: damage, not a crash */
	srand(1);
	for (size_t i = sizeof(struct sp_spool_header); i < len; i++)
		buf[i] = (uint8_t)rand();
	spit(flipp, buf, len);
	read_prefix(flipp, &ret);
	CHECK(ret == -EBADMSG);
	free(buf);
}

static void test_full_disk(void)
{
	struct sp_spool_writer *w;
	size_t off;
	int r = 0;

	w = sp_spool_writer_open("/dev/full", &uh, NULL);
	if (!w) {
		CHECK(errno == ENOSPC);
		return;
	}
	for (off = 0; off < stream_len && !r; off += ((struct sp_rec_hdr *)(stream + off))->size)
		r = sp_spool_writer_add(w, (const void *)(stream + off));
	if (!r)
		r = sp_spool_writer_close(w);
	else
		CHECK(sp_spool_writer_close(w) == r);
	CHECK(r == -ENOSPC);
}

static void test_bad_records(void)
{
	struct sp_unw_sample smp = { { SP_REC_SAMPLE, sizeof(smp) }, 1, 42, 42, 0, 9, 1 };
	struct sp_rec_hdr odd = { SP_REC_COMM, 12 };
	struct sp_spool_writer *w;
	char path[64];

	path_of(path, sizeof(path), "bad.spool");
	w = sp_spool_writer_open(path, &uh, NULL);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK(sp_spool_writer_add(w, &smp.hdr) == -EINVAL);
	CHECK(strstr(sp_spool_writer_error(w), "STACK") != NULL);
	CHECK(sp_spool_writer_add(w, &odd) == -EINVAL);
	CHECK(sp_spool_writer_close(w) == 0);
}

/*
 * The writer forgets the stacks of a process when a reader may forget the
 * process (format/alive.h): a sample that still refers to one is refused.
 */
static void test_forgotten(void)
{
	struct {
		struct sp_unw_stack st;
		uint64_t ips[1];
		uint8_t uflags[8];
	} stack = { .st = { .hdr = { SP_REC_STACK, sizeof(stack) }, .pid = 50,
		.id = 1, .nr_user = 1 }, .ips = { 0x401000 } };
	struct sp_unw_sample smp = { { SP_REC_SAMPLE, sizeof(smp) }, 1, 50, 50,
				     0, 1, 1 };
	struct sp_task_rec t = { .hdr = { SP_REC_EXIT, sizeof(t) },
		.time = 1000000000, .pid = 50, .ppid = 1, .tid = 50, .ptid = 1 };
	struct sp_spool_writer *w;
	char path[64];

	path_of(path, sizeof(path), "gone.spool");
	w = sp_spool_writer_open(path, &uh, NULL);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK(sp_spool_writer_add(w, &stack.st.hdr) == 0);
	CHECK(sp_spool_writer_add(w, &smp.hdr) == 0);
	CHECK(sp_spool_writer_add(w, &t.hdr) == 0);
	/* within a second of its end, late samples are still its own */
	t.hdr.type = SP_REC_FORK;
	t.pid = t.tid = 51;
	t.time = 1999999999;
	CHECK(sp_spool_writer_add(w, &t.hdr) == 0);
	CHECK(sp_spool_writer_add(w, &smp.hdr) == 0);
	t.pid = t.tid = 52;
	t.time = 2000000000;
	CHECK(sp_spool_writer_add(w, &t.hdr) == 0);
	CHECK(sp_spool_writer_add(w, &smp.hdr) == -EINVAL);
	CHECK(strstr(sp_spool_writer_error(w), "STACK") != NULL);
	/* a new process 50 defines its own */
	stack.st.id = 2;
	smp.stack_id = 2;
	CHECK(sp_spool_writer_add(w, &stack.st.hdr) == 0);
	CHECK(sp_spool_writer_add(w, &smp.hdr) == 0);
	CHECK(sp_spool_writer_close(w) == 0);
}

int main(void)
{
	char cmd[80];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	make_stream();
	test_round_trip(SP_SPOOL_ENC_DELTA);
	test_round_trip(SP_SPOOL_ENC_PLAIN);
	test_cuts();
	test_flip();
	test_full_disk();
	test_bad_records();
	test_forgotten();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	free(stream);
	return unit_done("test-spool");
}
