/* SPDX-License-Identifier: MIT */
/* spool-codec.c: checksums, record checks and the delta encoding of spool blocks. */
#include <string.h>
#include <zlib.h>

#include "spool-codec.h"

#define TAG_RECORD 0
#define TAG_SAMPLE 1

uint32_t sp_spool_crc(const void *p, size_t n)
{
	return (uint32_t)crc32(crc32(0, Z_NULL, 0), p, (uInt)n);
}

const char *sp_spool_rec_framing(const struct sp_rec_hdr *rec, size_t room)
{
	if (room < sizeof(*rec))
		return "record header runs past the block";
	if (rec->size < sizeof(*rec) || rec->size % 8 || rec->size > SP_REC_MAX)
		return "bad record size";
	if (rec->size > room)
		return "record runs past the block";
	return NULL;
}

const char *sp_spool_rec_check(const struct sp_u64map *stacks,
			       int after_summary, const struct sp_rec_hdr *rec)
{
	const struct sp_unw_sample *s = (const void *)rec;
	struct sp_unw_stack_view v;

	if (after_summary)
		return "record after the summary";
	switch (rec->type) {
	case SP_REC_SAMPLE:
		if (rec->size < sizeof(*s))
			return "SAMPLE record too short";
		if (!sp_u64map_find(stacks, sp_spool_key(s->pid, s->stack_id)))
			return "SAMPLE refers to a stack no STACK record defined";
		return NULL;
	case SP_REC_OFFCPU:
		if (rec->size < sizeof(*s))
			return "OFFCPU record too short";
		if (s->stack_id &&
		    !sp_u64map_find(stacks, sp_spool_key(s->pid, s->stack_id)))
			return "OFFCPU refers to a stack no STACK record defined";
		return NULL;
	case SP_REC_STACK:
		return sp_unw_stack_parse(rec, &v);
	case SP_REC_SUMMARY:
		return rec->size < sizeof(struct sp_unw_summary) ?
			"SUMMARY record too short" : NULL;
	case SP_REC_MMAP: case SP_REC_COMM: case SP_REC_FORK:
	case SP_REC_EXIT: case SP_REC_LOST: case SP_REC_THROTTLE:
	case SP_REC_IMAGE: case SP_REC_KSYM: case SP_REC_PERFMAP:
	case SP_REC_PYCODE:
		return sp_rec_check_common(rec);
	default:
		return NULL;	/* a later version's: kept as it is */
	}
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	unsigned shift = 0;

	*v = 0;
	for (;;) {
		if (p == end || shift > 63)
			return -1;
		if (shift == 63 && *p > 1)
			return -1;
		*v |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
		if (!(*p++ & 0x80))
			break;
	}
	*pp = p;
	return 0;
}

/* Signed differences, mod 2^64, as small unsigned numbers. */
static uint64_t zigzag(uint64_t now, uint64_t prev)
{
	int64_t d = (int64_t)(now - prev);

	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static uint64_t unzigzag(uint64_t prev, uint64_t z)
{
	return prev + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1));
}

/* Samples as varint deltas of their fields from the previous sample. */
size_t sp_spool_encode(const uint8_t *u, size_t ulen, uint8_t *t)
{
	const uint8_t *p = u, *end = u + ulen;
	struct sp_unw_sample prev = { { 0, 0 } };
	uint8_t *t0 = t;

	while (p < end) {
		const struct sp_rec_hdr *h = (const void *)p;

		if (h->type == SP_REC_SAMPLE && h->size == sizeof(prev)) {
			struct sp_unw_sample s;

			memcpy(&s, p, sizeof(s));
			*t++ = TAG_SAMPLE;
			t += put_varint(t, zigzag(s.time, prev.time));
			t += put_varint(t, zigzag(s.pid, prev.pid));
			t += put_varint(t, zigzag(s.tid, prev.tid));
			t += put_varint(t, s.cpu);
			t += put_varint(t, s.stack_id);
			t += put_varint(t, zigzag(s.weight, prev.weight));
			prev = s;
		} else {
			*t++ = TAG_RECORD;
			memcpy(t, p, h->size);
			t += h->size;
		}
		p += h->size;
	}
	return (size_t)(t - t0);
}

const char *sp_spool_decode(const uint8_t *t, size_t tsize, uint8_t *u,
			    size_t usize, uint32_t nrec)
{
	const uint8_t *p = t, *end = t + tsize;
	struct sp_unw_sample prev = { { 0, 0 } };
	uint8_t *o = u, *oend = u + usize;
	uint32_t i;

	for (i = 0; i < nrec; i++) {
		struct sp_rec_hdr h;

		if (p == end)
			return "encoded records end early";
		if (*p == TAG_RECORD) {
			p++;
			if (end - p < (ptrdiff_t)sizeof(h))
				return "encoded record runs past the block";
			memcpy(&h, p, sizeof(h));
			if (h.size < sizeof(h) || h.size % 8 || h.size > SP_REC_MAX ||
			    (size_t)(end - p) < h.size || (size_t)(oend - o) < h.size)
				return "encoded record runs past the block";
			memcpy(o, p, h.size);
			p += h.size;
			o += h.size;
		} else if (*p == TAG_SAMPLE) {
			struct sp_unw_sample s = { { SP_REC_SAMPLE, sizeof(s) } };
			uint64_t v[6];
			int k;

			p++;
			for (k = 0; k < 6; k++)
				if (get_varint(&p, end, &v[k]))
					return "bad varint in an encoded sample";
			if ((size_t)(oend - o) < sizeof(s))
				return "encoded sample runs past the block";
			s.time = unzigzag(prev.time, v[0]);
			v[1] = unzigzag(prev.pid, v[1]);
			v[2] = unzigzag(prev.tid, v[2]);
			if (v[1] > UINT32_MAX || v[2] > UINT32_MAX ||
			    v[3] > UINT32_MAX || v[4] > UINT32_MAX)
				return "encoded sample field out of range";
			s.pid = (uint32_t)v[1];
			s.tid = (uint32_t)v[2];
			s.cpu = (uint32_t)v[3];
			s.stack_id = (uint32_t)v[4];
			s.weight = unzigzag(prev.weight, v[5]);
			memcpy(o, &s, sizeof(s));
			o += sizeof(s);
			prev = s;
		} else {
			return "unknown record tag";
		}
	}
	if (p != end)
		return "encoded bytes after the last record";
	if (o != oend)
		return "records do not fill the block's size";
	return NULL;
}

