// SPDX-License-Identifier: MIT
/*
 * fuzz-spoolblock.c: what lies behind a spool block's checksums (docs/
 * spool.md): the inflated bytes, the delta decoding of samples, the
 * records and their checks, the block header's sizes, counts and times,
 * the trailer's index and copy of the summary.
 *
 * Random bytes rarely pass a CRC-32, so the harness makes the checksums:
 * the input is the bytes each block inflates to, and the harness compresses
 * them, writes block headers whose sizes, counts and times are those of the
 * bytes (as far as they can be decoded), a spool header and optionally a
 * trailer, all with sound checksums, and reads the file back through
 * fz_read_spool().  Input:
 *
 *	opts u8         bit 0: delta encoding (else plain); bit 1: a trailer;
 *	                bits 2-3: zlib level 0, 1, 6, 9; bit 4: an old
 *	                120-byte spool header; bit 5: the trailer's stride 2
 *	lie u8, xor u8  when xor is not 0, XOR it into field (lie & 7) of
 *	                block (lie >> 3) before its checksum is made, or of
 *	                the trailer (block 31): a header that lies soundly
 *	*block          u16 length, then that many bytes (the last block
 *	                takes what is left)
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/spool-codec.h"
#include "fuzz.h"

#define MAX_BLOCKS 64

struct block {
	const uint8_t *t;	/* what it inflates to */
	size_t tsize;
	uint32_t nrec, usize;	/* as far as the bytes decode */
	uint32_t husize;	/* what its header says */
	uint8_t *u;		/* decoded, NULL when it does not decode */
	uint64_t first, last, offset;
	uint64_t samples;
	int timed;
};

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		b->cap = 2 * (b->len + len);
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static int skip_varint(const uint8_t **p, const uint8_t *end)
{
	while (*p < end)
		if (!(*(*p)++ & 0x80))
			return 0;
	return -1;
}

/* Count the records of the bytes as far as they go, as a writer would have. */
static void scan(struct block *b, int delta)
{
	const uint8_t *p = b->t, *end = b->t + b->tsize;
	struct sp_rec_hdr h;
	int k;

	b->nrec = 0;
	b->usize = 0;
	while (p < end) {
		if (delta && *p == 1) {
			p++;
			for (k = 0; k < 6; k++)
				if (skip_varint(&p, end))
					return;
			b->usize += sizeof(struct sp_unw_sample);
			b->nrec++;
			continue;
		}
		if (delta && *p++ != 0)
			return;
		if ((size_t)(end - p) < sizeof(h))
			return;
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > (size_t)(end - p))
			return;
		p += h.size;
		b->usize += h.size;
		b->nrec++;
	}
}

/* The records the block holds, and the time range of its samples. */
static void decode(struct block *b, int delta)
{
	struct sp_rec_hdr h;
	size_t off;

	if (!delta && b->nrec && b->usize == b->tsize) {
		b->u = malloc(b->tsize);
		if (!b->u)
			abort();
		memcpy(b->u, b->t, b->tsize);
	} else if (delta && b->nrec) {
		b->u = malloc(b->usize);
		if (!b->u)
			abort();
		if (sp_spool_decode(b->t, b->tsize, b->u, b->usize, b->nrec)) {
			free(b->u);
			b->u = NULL;
		}
	}
	for (off = 0; b->u && off < b->usize; off += h.size) {
		struct sp_unw_sample s;

		memcpy(&h, b->u + off, sizeof(h));
		if (h.type != SP_REC_SAMPLE || h.size < sizeof(s))
			continue;
		memcpy(&s, b->u + off, sizeof(s));
		if (!b->timed || s.time < b->first)
			b->first = s.time;
		if (!b->timed || s.time > b->last)
			b->last = s.time;
		b->timed = 1;
		b->samples++;
	}
}

static void lie(void *field, size_t size, uint8_t x)
{
	uint8_t *p = field;

	p[0] ^= x;
	if (size > 1 && x & 1)
		p[size - 1] ^= x;
}

/*
 * compress2() into z, with one deflate stream per level kept across inputs
 * and reset for each block: the same bytes, without setting up zlib's
 * quarter megabyte of state for every block of every input.
 */
static uLongf deflate_block(uint8_t *z, uLongf zcap, const uint8_t *t,
			    size_t tsize, int level)
{
	static z_stream zs[10];
	static int ready[10];
	z_stream *s = &zs[level];

	if (!ready[level]) {
		if (deflateInit(s, level) != Z_OK)
			abort();
		ready[level] = 1;
	} else if (deflateReset(s) != Z_OK) {
		abort();
	}
	s->next_in = (Bytef *)t;
	s->avail_in = (uInt)tsize;
	s->next_out = z;
	s->avail_out = (uInt)zcap;
	if (deflate(s, Z_FINISH) != Z_STREAM_END)
		abort();
	return zcap - s->avail_out;
}

static void write_block(struct buf *f, struct block *b, uint32_t seq,
			int delta, int level, int lie_field, uint8_t x)
{
	struct sp_spool_block h = { SP_SPOOL_BLOCK_MAGIC };
	uLongf zlen = compressBound((uLong)b->tsize);
	uint8_t *z = malloc(zlen);

	if (!z)
		abort();
	zlen = deflate_block(z, zlen, b->t, b->tsize, level);
	h.seq = seq;
	h.enc = delta ? SP_SPOOL_ENC_DELTA : SP_SPOOL_ENC_PLAIN;
	h.nrec = b->nrec;
	h.usize = delta ? b->usize : (uint32_t)b->tsize;
	h.tsize = (uint32_t)b->tsize;
	h.zsize = (uint32_t)zlen;
	h.first_time = b->first;
	h.last_time = b->last;
	b->husize = h.usize;
	switch (lie_field) {
	case 0: lie(&h.seq, 4, x); break;
	case 1: lie(&h.enc, 4, x); break;
	case 2: lie(&h.nrec, 4, x); break;
	case 3: lie(&h.usize, 4, x); break;
	case 4: lie(&h.tsize, 4, x); break;
	case 5: lie(&h.zsize, 4, x); break;
	case 6: lie(&h.first_time, 8, x); break;
	case 7: lie(&h.last_time, 8, x); break;
	}
	h.data_crc = sp_spool_crc(z, zlen);
	h.hdr_crc = sp_spool_crc(&h, SP_SPOOL_HDR_CRC_LEN);
	b->offset = f->len;
	put(f, &h, sizeof(h));
	put(f, z, zlen);
	free(z);
}

static void write_trailer(struct buf *f, const struct block *bl, size_t n,
			  uint32_t stride, uint32_t unw_size, int lie_field,
			  uint8_t x)
{
	struct sp_spool_trailer t = { SP_SPOOL_INDEX_MAGIC };
	struct sp_spool_footer ft = { 0 };
	struct sp_spool_index_entry e[MAX_BLOCKS];
	const struct block *last = n ? &bl[n - 1] : NULL;
	struct sp_rec_hdr h;
	uint32_t ne = 0, c;
	size_t i, off;
	int timed = 0;

	t.nblocks = (uint32_t)n;
	t.stride = stride;
	t.stream_bytes = unw_size;
	for (i = 0; i < n; i++) {
		t.records += bl[i].nrec;
		t.samples += bl[i].samples;
		t.stream_bytes += bl[i].husize;
		if (bl[i].timed && (!timed || bl[i].first < t.first_time))
			t.first_time = bl[i].first;
		if (bl[i].timed && (!timed || bl[i].last > t.last_time))
			t.last_time = bl[i].last;
		timed |= bl[i].timed;
		if (i % stride == 0)
			e[ne++] = (struct sp_spool_index_entry){ bl[i].offset,
				bl[i].first, bl[i].last, (uint32_t)i, bl[i].nrec };
	}
	/* the summary: the last record, when it is one */
	for (off = 0; last && last->u && off < last->usize; off += h.size) {
		memcpy(&h, last->u + off, sizeof(h));
		if (off + h.size == last->usize && h.type == SP_REC_SUMMARY &&
		    h.size >= sizeof(t.summary)) {
			memcpy(&t.summary, last->u + off, sizeof(t.summary));
			t.flags = SP_SPOOL_HAVE_SUMMARY;
		}
	}
	t.nentries = ne;
	switch (lie_field) {
	case 0: lie(&t.nblocks, 4, x); break;
	case 1: lie(&t.nentries, 4, x); break;
	case 2: lie(&t.stride, 4, x); break;
	case 3: lie(&t.flags, 4, x); break;
	case 4: lie(&t.records, 8, x); break;
	case 5: lie(&t.samples, 8, x); break;
	case 6: lie(&t.stream_bytes, 8, x); break;
	case 7: if (ne) lie(&e[0].offset, 8, x); break;
	}
	ft.trailer_offset = f->len;
	ft.trailer_size = (uint32_t)(sizeof(t) + ne * sizeof(e[0]) + sizeof(ft));
	memcpy(ft.magic, SP_SPOOL_END_MAGIC, SP_MAGIC_LEN);
	c = sp_spool_crc(&t, sizeof(t));
	c = (uint32_t)crc32(c, (const void *)e, (uInt)(ne * sizeof(e[0])));
	ft.crc = (uint32_t)crc32(c, (const void *)&ft, SP_SPOOL_FOOTER_CRC_LEN);
	put(f, &t, sizeof(t));
	put(f, e, ne * sizeof(e[0]));
	put(f, &ft, sizeof(ft));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int levels[4] = { 0, 1, 6, 9 };
	struct sp_spool_header sh = { { SP_SPOOL_MAGIC, SP_SPOOL_VERSION,
					sizeof(sh) } };
	struct block bl[MAX_BLOCKS] = { { 0 } };
	struct buf f = { 0 };
	uint8_t opts, which, x;
	size_t n = 0, i, len;
	int delta, level;

	if (size < 3)
		return 0;
	opts = data[0];
	which = data[1];
	x = data[2];
	data += 3;
	size -= 3;
	delta = opts & 1;
	level = levels[opts >> 2 & 3];
	while (size && n < MAX_BLOCKS) {
		len = size;
		if (size >= 2) {
			len = (size_t)data[0] | (size_t)data[1] << 8;
			data += 2;
			size -= 2;
			if (len > size)
				len = size;
		}
		bl[n].t = data;
		bl[n].tsize = len;
		scan(&bl[n], delta);
		decode(&bl[n], delta);
		n++;
		data += len;
		size -= len;
	}

	/* the header: of today, or of a writer before start_realtime */
	memcpy(sh.unw.h.magic, SP_UNW_MAGIC, SP_MAGIC_LEN);
	sh.unw.h.version = SP_UNW_VERSION;
	sh.unw.h.header_size = sizeof(sh.unw);
	sh.unw.ev.flags = SP_EV_FREQ;
	sh.unw.ev.freq_or_period = 99;
	sh.unw.ev.start_time = 1000;
	sh.block_size = SP_SPOOL_BLOCK_SIZE;
	if (opts & 16) {
		sh.h.header_size = SP_SPOOL_HEADER_MIN;
		sh.unw.h.header_size = SP_UNW_HEADER_MIN;
	}
	sh.crc = sp_spool_crc(&sh, sh.h.header_size);
	put(&f, &sh, sh.h.header_size);
	for (i = 0; i < n; i++)
		write_block(&f, &bl[i], (uint32_t)i, delta, level,
			    x && which >> 3 == i ? which & 7 : -1, x);
	if (opts & 2)
		write_trailer(&f, bl, n, opts & 32 ? 2 : 1,
			      sh.unw.h.header_size,
			      x && which >> 3 == 31 ? which & 7 : -1, x);
	fz_read_spool(f.p, f.len);
	for (i = 0; i < n; i++)
		free(bl[i].u);
	free(f.p);
	return 0;
}
