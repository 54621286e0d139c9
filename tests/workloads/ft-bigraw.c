/* SPDX-License-Identifier: MIT */
/*
 * ft-bigraw: a made-up raw stream (lib/format/raw.h) of more than BYTES
 * bytes, written to standard output: a stream header, the COMM of one
 * thread, then samples of that thread, each with the largest stack copy a
 * raw stream holds (65528 bytes) and an instruction pointer in no mapping,
 * then the SUMMARY.  Not a profiled workload: it feeds the tests a stream
 * larger than 4 GiB through a pipe, so that no such file is ever written.
 *
 * With "bad", a record whose size is no multiple of 8 stands in place of
 * the SUMMARY, at the first offset past BYTES.
 *
 * Says on standard error how many samples and bytes it wrote and, with
 * "bad", the byte offset of the bad record:
 *	ft-bigraw: 65330 samples, 4295055808 bytes
 *	ft-bigraw: 65330 samples, bad record at byte 4295055688
 *
 * usage: ft-bigraw BYTES [bad]
 * Exit status 0, 1 when a write fails (a reader that went away), 64 usage.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/raw.h"

#define REGS_MASK	0xff0fffull	/* sp-record's: 20 registers */
#define NREGS		20
#define STACK		65528u

static uint64_t written;

static void put(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(1, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "ft-bigraw: write error: %s\n",
				strerror(errno));
			exit(1);
		}
		b += w;
		n -= (size_t)w;
		written += (uint64_t)w;
	}
}

int main(int argc, char **argv)
{
	static uint8_t rec[sizeof(struct sp_raw_sample) + 8 * NREGS + STACK];
	struct sp_raw_header h;
	struct sp_comm_rec c;
	struct sp_raw_summary sum;
	struct sp_raw_sample *s = (void *)rec;
	uint64_t *regs = (uint64_t *)(s + 1);
	uint64_t bytes, n = 0, t = 1000000000ull;
	int bad;
	char *end;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "bad"))) {
		fprintf(stderr, "usage: ft-bigraw BYTES [bad]\n");
		return 64;
	}
	bytes = strtoull(argv[1], &end, 10);
	if (*end || !bytes) {
		fprintf(stderr, "ft-bigraw: invalid size '%s'\n", argv[1]);
		return 64;
	}
	bad = argc == 3;

	memset(&h, 0, sizeof(h));
	memcpy(h.h.magic, SP_RAW_MAGIC, SP_MAGIC_LEN);
	h.h.version = SP_RAW_VERSION;
	h.h.header_size = sizeof(h);
	h.ev.flags = SP_EV_FREQ;
	h.ev.freq_or_period = 99;
	h.ev.clockid = 1;
	h.ev.ncpus = 1;
	h.ev.start_time = t;
	strcpy(h.ev.name, "cpu-clock");
	h.regs_mask = REGS_MASK;
	h.stack_size = STACK;
	put(&h, sizeof(h));

	memset(&c, 0, sizeof(c));
	c.hdr.type = SP_REC_COMM;
	c.hdr.size = sizeof(c);
	c.time = t;
	c.pid = c.tid = 4242;
	strcpy(c.comm, "bigraw");
	put(&c, sizeof(c));

	s->hdr.type = SP_REC_SAMPLE;
	s->hdr.size = sizeof(rec);
	s->pid = s->tid = 4242;
	s->abi = 2;	/* PERF_SAMPLE_REGS_ABI_64 */
	s->period = 10101010;
	s->ip = 0x1000;	/* in no mapping: the stack ends there */
	s->nr_regs = NREGS;
	s->stack_len = STACK;
	regs[7] = 0x7ffd00000000ull;	/* SP */
	regs[8] = s->ip;		/* IP */
	while (written <= bytes) {
		t += 10101010;
		s->time = t;
		put(rec, sizeof(rec));
		n++;
	}
	if (bad) {
		struct sp_rec_hdr r = { SP_REC_SAMPLE, 12 };

		fprintf(stderr, "ft-bigraw: %llu samples, bad record at byte %llu\n",
			(unsigned long long)n, (unsigned long long)written);
		put(&r, sizeof(r));
		return 0;
	}
	memset(&sum, 0, sizeof(sum));
	sum.hdr.type = SP_REC_SUMMARY;
	sum.hdr.size = sizeof(sum);
	sum.samples = n;
	sum.threads = sum.processes = 1;
	sum.start_time = h.ev.start_time;
	sum.end_time = t;
	sum.duration_ns = t - h.ev.start_time;
	put(&sum, sizeof(sum));
	fprintf(stderr, "ft-bigraw: %llu samples, %llu bytes\n",
		(unsigned long long)n, (unsigned long long)written);
	return 0;
}
