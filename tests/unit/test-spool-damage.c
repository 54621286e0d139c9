/* SPDX-License-Identifier: MIT */
/*
 * test-spool-damage.c: every truncation and every single-byte flip of a
 * small spool, read back whole: a cut file gives the records of its
 * complete blocks and -ENODATA, a damaged one -EBADMSG (or -ENOTSUP for a
 * version flipped into the future) and never a record that was not
 * written; a flipped end marker is damage at its very byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/spool.h"
#include "unit.h"

#define NSTACKS 3
#define NSAMPLES 1200

static uint8_t stream[NSAMPLES * 48 + 4096];
static size_t stream_len;
static struct sp_unw_header uh = { { SP_UNW_MAGIC, SP_UNW_VERSION, sizeof(uh) } };
static char dir[] = "/tmp/test-spool-damage.XXXXXX";
static char path[64], damaged[64];

static void add(const void *rec)
{
	const struct sp_rec_hdr *h = rec;

	memcpy(stream + stream_len, rec, h->size);
	stream_len += h->size;
}

/* A stream of a few stacks, samples enough for several 4 KiB blocks. */
static void make_stream(void)
{
	uint64_t buf[16] = { 0 }, t = 1000000000;
	struct sp_unw_stack *s = (void *)buf;
	struct sp_unw_summary sum = { { SP_REC_SUMMARY, sizeof(sum) } };
	int i;

	strcpy(uh.ev.name, "cpu-clock");
	for (i = 1; i <= NSTACKS; i++) {
		memset(buf, 0, sizeof(buf));
		s->hdr.type = SP_REC_STACK;
		s->pid = 7;
		s->id = (uint32_t)i;
		s->nr_user = 2;
		s->hdr.size = (uint32_t)(sizeof(*s) + 2 * 8 + 8);
		((uint64_t *)(s + 1))[0] = 0x401000 + (uint64_t)i;
		((uint64_t *)(s + 1))[1] = 0x402000;
		add(s);
	}
	for (i = 0; i < NSAMPLES; i++) {
		struct sp_unw_sample smp = { { SP_REC_SAMPLE, sizeof(smp) } };

		t += 1000000 + (uint64_t)(i * 7919 % 3000);
		smp.time = t;
		smp.pid = 7;
		smp.tid = 7 + (uint32_t)(i % 2);
		smp.stack_id = 1 + (uint32_t)(i % NSTACKS);
		smp.weight = 1000000;
		add(&smp);
	}
	sum.samples = NSAMPLES;
	sum.stacks = NSTACKS;
	sum.threads = 2;
	sum.processes = 1;
	sum.start_time = 1000000000;
	sum.end_time = t;
	sum.duration_ns = t - sum.start_time;
	sum.ends[SP_END_COMPLETE] = NSAMPLES;
	add(&sum);
}

static int write_spool(void)
{
	struct sp_spool_opts o;
	struct sp_spool_writer *w;
	size_t off;
	int r = 0;

	sp_spool_opts_init(&o);
	o.block_size = SP_SPOOL_BLOCK_MIN;
	w = sp_spool_writer_open(path, &uh, &o);
	if (!w)
		return -errno;
	for (off = 0; off < stream_len && !r;
	     off += ((struct sp_rec_hdr *)(stream + off))->size)
		r = sp_spool_writer_add(w, (const void *)(stream + off));
	if (r)
		sp_spool_writer_close(w);
	return r ? r : sp_spool_writer_close(w);
}

/* Thousands of files: in memory, not on a disk */
static int memfd = -1;

static void spit(const uint8_t *buf, size_t len)
{
	if (ftruncate(memfd, 0) || pwrite(memfd, buf, len, 0) != (ssize_t)len)
		abort();
}

/*
 * Read the damaged file whole as sp-spool cat does.  Returns what the last
 * call returned; *n is the count of records, -1 when one of them was not
 * the stream's; the message in err.
 */
static int read_all(long *n, char *err, size_t size)
{
	const struct sp_rec_hdr *rec;
	struct sp_spool *r;
	size_t off = 0;
	int ret;

	*n = 0;
	ret = sp_spool_open(damaged, &r);
	if (!r)
		abort();
	if (!ret)
		while ((ret = sp_spool_next(r, &rec)) > 0) {
			if (off + rec->size > stream_len ||
			    memcmp(stream + off, rec, rec->size)) {
				*n = -1;
				break;
			}
			off += rec->size;
			(*n)++;
		}
	snprintf(err, size, "%s", sp_spool_error(r));
	sp_spool_close(r);
	return ret;
}

/* Block ends and the records up to each, from the block headers. */
static size_t blocks(const uint8_t *buf, size_t len, size_t *ends, long *recs,
		     size_t max)
{
	size_t pos = sizeof(struct sp_spool_header), n = 0;
	struct sp_spool_block b;
	long total = 0;

	while (pos + sizeof(b) <= len && n < max) {
		memcpy(&b, buf + pos, sizeof(b));
		if (memcmp(b.magic, SP_SPOOL_BLOCK_MAGIC, SP_MAGIC_LEN))
			break;
		pos += sizeof(b) + b.zsize;
		total += b.nrec;
		recs[n] = total;
		ends[n++] = pos;
	}
	return n;
}

static void test_truncations(const uint8_t *buf, size_t len)
{
	size_t ends[64], nb, cut, i;
	long recs[64], want, got;
	char err[512];
	int ret, bad = 0;

	nb = blocks(buf, len, ends, recs, 64);
	CHECK(nb >= 4);
	for (cut = 0; cut < len; cut++) {
		spit(buf, cut);
		ret = read_all(&got, err, sizeof(err));
		if (cut < sizeof(struct sp_spool_header)) {
			/* no header, nothing readable: damage */
			if (ret != -EBADMSG || got) {
				fprintf(stderr, "cut at %zu: ret %d: %s\n", cut, ret, err);
				bad++;
			}
			continue;
		}
		for (want = 0, i = 0; i < nb && ends[i] <= cut; i++)
			want = recs[i];
		if (ret != -ENODATA || got != want || !strstr(err, "is cut at byte")) {
			fprintf(stderr, "cut at %zu: ret %d, %ld records (want %ld): %s\n",
				cut, ret, got, want, err);
			bad++;
		}
	}
	CHECK(bad == 0);
	spit(buf, len);
	ret = read_all(&got, err, sizeof(err));
	CHECK(ret == 0);
	CHECK(got == recs[nb - 1]);
}

static void test_flips(uint8_t *buf, size_t len)
{
	static const uint8_t masks[] = { 0x01, 0x80, 0xff };
	char err[512], want[64];
	size_t at, m;
	long got;
	int ret, bad = 0, end_ok = 0;

	for (at = 0; at < len; at++) {
		for (m = 0; m < sizeof(masks); m++) {
			buf[at] ^= masks[m];
			spit(buf, len);
			buf[at] ^= masks[m];
			ret = read_all(&got, err, sizeof(err));
			if ((ret != -EBADMSG && ret != -ENOTSUP) || got < 0) {
				fprintf(stderr, "flip %#x at %zu: ret %d, %ld records: %s\n",
					masks[m], at, ret, got, err);
				bad++;
				continue;
			}
			if (at < len - SP_MAGIC_LEN)
				continue;
			/* the end marker: damage at the byte, after every record */
			snprintf(want, sizeof(want), "at byte %zu of '", at);
			if (strstr(err, "bad end marker") && strstr(err, want) &&
			    got == NSTACKS + NSAMPLES + 1)
				end_ok++;
			else
				fprintf(stderr, "flip %#x at %zu of the end marker: %s\n",
					masks[m], at, err);
		}
	}
	CHECK(bad == 0);
	CHECK(end_ok == SP_MAGIC_LEN * (int)sizeof(masks));
}

/* A flipped end marker costs no record: all are read, then the damage. */
static void test_end_marker_records(uint8_t *buf, size_t len)
{
	char err[512];
	long got;
	int ret;

	buf[len - 3] ^= 0x20;
	spit(buf, len);
	buf[len - 3] ^= 0x20;
	ret = read_all(&got, err, sizeof(err));
	CHECK(ret == -EBADMSG);
	CHECK(got == NSTACKS + NSAMPLES + 1);
	CHECK(strstr(err, "bad end marker (a spool ends in \"SPEND\" and 3 zero bytes) at byte ") != NULL);
}

int main(void)
{
	char cmd[96];
	uint8_t *buf;
	size_t len;
	int fd;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/a.spool", dir);
	memfd = memfd_create("d.spool", 0);
	if (memfd < 0) {
		perror("memfd_create");
		return 1;
	}
	snprintf(damaged, sizeof(damaged), "/proc/self/fd/%d", memfd);
	make_stream();
	CHECK(write_spool() == 0);
	buf = malloc(1 << 20);
	fd = open(path, O_RDONLY);
	len = fd >= 0 ? (size_t)read(fd, buf, 1 << 20) : 0;
	if (fd >= 0)
		close(fd);
	/* a few KB: every byte is tried */
	CHECK(len > 1024 && len < 16384);
	test_truncations(buf, len);
	test_flips(buf, len);
	test_end_marker_records(buf, len);
	free(buf);
	close(memfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return unit_done("test-spool-damage");
}
