/* SPDX-License-Identifier: MIT */
/* spool-read.c: a spool file back into the unwound stream, checking every block. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/grow.h"
#include "spool-codec.h"

/* A STACK record kept for lookups; all of them chained for close. */
struct stack_node {
	struct stack_node *next;
	uint64_t rec[];
};

struct sp_spool {
	int fd;
	char *name;
	uint64_t size;		/* of the file when last looked */
	struct sp_spool_header hdr;
	int state;		/* sticky error, or 0 */
	int done;
	char err[384];

	/* the trailer, when valid */
	int indexed;
	int footer_seen;	/* the file ends in a footer (magic, or all but) */
	char tr_bad[96];	/* why that trailer is unusable */
	uint64_t tr_bad_at;	/* where, when not where the trailer begins */
	uint64_t tr_off;
	struct sp_spool_trailer tr;
	struct sp_spool_index_entry *idx;

	/* blocks */
	uint64_t pos;		/* next block header */
	uint32_t seq;		/* next block number */
	uint64_t block_off;	/* current block */
	uint8_t *zbuf, *tbuf, *ubuf;
	size_t zcap, tcap, ucap;
	size_t ulen, upos;
	uint32_t urec;		/* records handed out of this block */

	/* the stream so far */
	struct sp_u64map stacks;	/* sp_spool_key() -> its stack_node */
	struct sp_u64map threads, pids;	/* seen */
	struct stack_node *nodes;
	int after_summary;
	struct sp_unw_summary last_summary;
	uint64_t records, samples, lost, stream_bytes;
	uint64_t ends[SP_END_MAX];
	uint64_t first_time, last_time;
	int timed;
	uint32_t max_id;
};

static int fail(struct sp_spool *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sp_spool *r, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->state = code;
	return code;
}

/* Damage at byte off: "<what> at byte <off> of '<name>'". */
static int damage(struct sp_spool *r, uint64_t off, const char *what)
{
	return fail(r, -EBADMSG, "%s at byte %llu of '%s'", what,
		    (unsigned long long)off, r->name);
}

static int damage_block(struct sp_spool *r, const char *what)
{
	return fail(r, -EBADMSG, "%s in block %u at byte %llu of '%s'", what,
		    r->seq, (unsigned long long)r->pos, r->name);
}

/* The file ends early: everything before r->pos has been read. */
static int cut(struct sp_spool *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int cut(struct sp_spool *r, const char *fmt, ...)
{
	char why[160], after[32] = "the header";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (r->seq)
		snprintf(after, sizeof(after), "block %u", r->seq - 1);
	return fail(r, -ENODATA, "'%s' is cut at byte %llu after %s: %s",
		    r->name, (unsigned long long)r->pos, after, why);
}

/* Read up to n bytes at off; the count (short at the end) or -errno. */
static ssize_t read_at(struct sp_spool *r, uint64_t off, void *buf, size_t n)
{
	size_t got = 0;

	/* past what an off_t holds is past the end of any file */
	if (off > (uint64_t)INT64_MAX - n)
		return 0;
	while (got < n) {
		ssize_t k = pread(r->fd, (uint8_t *)buf + got, n - got,
				  (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return fail(r, -errno, "cannot read '%s': %s", r->name,
				    strerror(errno));
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/*
 * The file ends in footer f but for its magic: a whole trailer whose end
 * marker is damaged, not a file cut short (a cut one ends elsewhere, so
 * its last bytes do not read as a footer that checks out).
 */
static void bad_end_marker(struct sp_spool *r, const struct sp_spool_footer *f,
			   uint64_t min)
{
	uint8_t *buf;
	size_t i;

	if (f->trailer_size < min || f->trailer_size > r->size ||
	    f->trailer_offset != r->size - f->trailer_size ||
	    f->trailer_offset < r->pos)
		return;
	buf = malloc(f->trailer_size);
	if (!buf)
		return;
	if (read_at(r, f->trailer_offset, buf, f->trailer_size) == f->trailer_size &&
	    sp_spool_crc(buf, f->trailer_size - 12) == f->crc &&
	    !memcmp(buf, SP_SPOOL_INDEX_MAGIC, SP_MAGIC_LEN)) {
		for (i = 0; f->magic[i] == SP_SPOOL_END_MAGIC[i]; i++)
			;
		r->footer_seen = 1;
		r->tr_bad_at = r->size - SP_MAGIC_LEN + i;
		snprintf(r->tr_bad, sizeof(r->tr_bad),
			 "bad end marker (a spool ends in \"SPEND\" and 3 zero bytes)");
	}
	free(buf);
}

static void load_trailer(struct sp_spool *r)
{
	struct sp_spool_footer f;
	uint64_t min = sizeof(struct sp_spool_trailer) + sizeof(f);
	size_t elen;
	uint8_t *buf;
	uint32_t c, i;

	if (r->size < r->pos + min ||
	    read_at(r, r->size - sizeof(f), &f, sizeof(f)) != sizeof(f))
		return;		/* no trailer: the reader scans */
	if (memcmp(f.magic, SP_SPOOL_END_MAGIC, SP_MAGIC_LEN)) {
		bad_end_marker(r, &f, min);
		return;
	}
	r->footer_seen = 1;
	snprintf(r->tr_bad, sizeof(r->tr_bad), "bad trailer size");
	if (f.trailer_size < min || f.trailer_size > r->size ||
	    f.trailer_offset != r->size - f.trailer_size ||
	    f.trailer_offset < r->pos ||
	    (f.trailer_size - min) % sizeof(*r->idx) ||
	    (f.trailer_size - min) / sizeof(*r->idx) > SP_SPOOL_INDEX_MAX)
		return;
	buf = malloc(f.trailer_size);
	if (!buf)
		return;
	if (read_at(r, f.trailer_offset, buf, f.trailer_size) != f.trailer_size)
		goto out;
	c = sp_spool_crc(buf, f.trailer_size - 12);
	snprintf(r->tr_bad, sizeof(r->tr_bad), "bad trailer checksum");
	if (c != f.crc)
		goto out;
	memcpy(&r->tr, buf, sizeof(r->tr));
	elen = f.trailer_size - min;
	snprintf(r->tr_bad, sizeof(r->tr_bad), "bad trailer");
	if (memcmp(r->tr.magic, SP_SPOOL_INDEX_MAGIC, SP_MAGIC_LEN) ||
	    r->tr.nentries != elen / sizeof(*r->idx) || !r->tr.stride ||
	    r->tr.nentries > (r->tr.nblocks + r->tr.stride - 1) / r->tr.stride)
		goto out;
	r->idx = malloc(elen ? elen : 1);
	if (!r->idx)
		goto out;
	memcpy(r->idx, buf + sizeof(r->tr), elen);
	for (i = 0; i < r->tr.nentries; i++)
		if (r->idx[i].seq != i * r->tr.stride ||
		    r->idx[i].offset >= f.trailer_offset)
			goto out;
	r->tr_off = f.trailer_offset;
	r->indexed = 1;
	r->tr_bad[0] = 0;
out:
	if (!r->indexed) {
		free(r->idx);
		r->idx = NULL;
	}
	free(buf);
}

int sp_spool_open(const char *path, struct sp_spool **rp)
{
	struct sp_spool_header *h;
	struct sp_spool *r;
	struct stat sb;
	uint8_t *buf = NULL;
	const char *kind;
	uint32_t c;
	ssize_t n;
	int ret;

	*rp = r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->name = strdup(path);
	r->fd = -1;
	if (!r->name) {
		free(r);
		*rp = NULL;
		return -ENOMEM;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return fail(r, -errno, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(r->fd, &sb))
		return fail(r, -errno, "cannot stat '%s': %s", path, strerror(errno));
	r->size = (uint64_t)sb.st_size;
	h = &r->hdr;
	n = read_at(r, 0, h, sizeof(*h));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return damage(r, 0, "empty file, expected a spool");
	if (n < SP_MAGIC_LEN || memcmp(h->h.magic, SP_SPOOL_MAGIC, SP_MAGIC_LEN)) {
		kind = n >= SP_MAGIC_LEN ? sp_stream_kind(h->h.magic) : NULL;
		if (kind)
			return fail(r, -EBADMSG, "'%s' is %s %s stream, not a spool%s",
				    path, kind[0] == 'u' ? "an" : "a", kind,
				    !strcmp(kind, "unwound") ?
				    ": store it with 'sp-spool write'" : "");
		return damage(r, 0, "not a spool (bad magic)");
	}
	if ((size_t)n < sizeof(h->h))
		return fail(r, -EBADMSG, "truncated spool header: need %zu bytes, have %zd at byte %zd of '%s'",
			    sizeof(*h), n, n, path);
	if (h->h.version == 0 || h->h.version > SP_SPOOL_VERSION)
		return fail(r, -ENOTSUP, "spool version %u is not supported (this build reads 1..%u): upgrade stackpulse at byte 8 of '%s'",
			    h->h.version, SP_SPOOL_VERSION, path);
	if (h->h.header_size < SP_SPOOL_HEADER_MIN || h->h.header_size % 8 ||
	    h->h.header_size > SP_REC_MAX)
		return fail(r, -EBADMSG, "bad spool header size %u: must be a multiple of 8 in %zu..%u at byte 12 of '%s'",
			    h->h.header_size, SP_SPOOL_HEADER_MIN, SP_REC_MAX, path);
	/* an older, shorter header: what follows it is not ours */
	if (h->h.header_size < sizeof(*h))
		memset((char *)h + h->h.header_size, 0,
		       sizeof(*h) - h->h.header_size);
	if ((uint64_t)n < h->h.header_size && r->size < h->h.header_size)
		return fail(r, -EBADMSG, "truncated spool header: need %u bytes, have %llu at byte %llu of '%s'",
			    h->h.header_size, (unsigned long long)r->size,
			    (unsigned long long)r->size, path);
	buf = malloc(h->h.header_size);
	if (!buf)
		return fail(r, -ENOMEM, "out of memory reading '%s'", path);
	n = read_at(r, 0, buf, h->h.header_size);
	if (n != (ssize_t)h->h.header_size) {
		free(buf);
		return n < 0 ? (int)n : damage(r, (uint64_t)n, "truncated spool header");
	}
	memset(buf + offsetof(struct sp_spool_header, crc), 0, sizeof(h->crc));
	c = sp_spool_crc(buf, h->h.header_size);
	free(buf);
	if (c != h->crc)
		return damage(r, 0, "bad spool header checksum");
	if (memcmp(h->unw.h.magic, SP_UNW_MAGIC, SP_MAGIC_LEN) ||
	    h->unw.h.version == 0 || h->unw.h.version > SP_UNW_VERSION ||
	    h->unw.h.header_size < SP_UNW_HEADER_MIN ||
	    h->unw.h.header_size > sizeof(h->unw) ||
	    h->unw.h.header_size != h->h.header_size -
				     offsetof(struct sp_spool_header, unw))
		return damage(r, offsetof(struct sp_spool_header, unw),
			      "bad unwound stream header in the spool header");
	r->pos = h->h.header_size;
	r->stream_bytes = h->unw.h.header_size;
	/* handed out whole: a field an older writer left out reads as 0 */
	h->unw.h.header_size = sizeof(h->unw);
	load_trailer(r);
	ret = r->state;
	return ret;
}

const struct sp_unw_header *sp_spool_header(const struct sp_spool *r)
{
	return &r->hdr.unw;
}

const char *sp_spool_error(const struct sp_spool *r)
{
	return r->err;
}

/* The stream's records in ubuf: framing, count, time range. */
static const char *check_block(struct sp_spool *r, const struct sp_spool_block *b)
{
	uint64_t first = 0, last = 0;
	size_t off = 0;
	uint32_t n = 0;
	int timed = 0;

	while (off < b->usize) {
		const struct sp_rec_hdr *h = (const void *)(r->ubuf + off);
		const char *why = sp_spool_rec_framing(h, b->usize - off);

		if (why)
			return why;
		if (h->type == SP_REC_SAMPLE && h->size >= sizeof(struct sp_unw_sample)) {
			uint64_t t = ((const struct sp_unw_sample *)h)->time;

			if (!timed || t < first)
				first = t;
			if (!timed || t > last)
				last = t;
			timed = 1;
		}
		off += h->size;
		n++;
	}
	if (n != b->nrec)
		return "record count does not match the block header";
	if (first != b->first_time || last != b->last_time)
		return "time range does not match the block's samples";
	return NULL;
}

static int ensure(struct sp_spool *r, uint8_t **buf, size_t *cap, size_t need)
{
	if (sp_grow((void **)buf, cap, need ? need : 1, 1))
		return fail(r, -ENOMEM, "out of memory reading '%s'", r->name);
	return 0;
}

/* The trailer must describe the blocks just read. */
static int check_trailer(struct sp_spool *r)
{
	const struct sp_spool_trailer *t = &r->tr;
	int summary_ok;

	summary_ok = (t->flags & SP_SPOOL_HAVE_SUMMARY) ?
		r->after_summary && !memcmp(&t->summary, &r->last_summary,
					    sizeof(t->summary)) :
		!r->after_summary;
	if (t->nblocks != r->seq || t->records != r->records ||
	    t->samples != r->samples || t->stream_bytes != r->stream_bytes ||
	    !summary_ok)
		return damage(r, r->tr_off, "trailer does not match the blocks");
	r->done = 1;
	return 0;
}

/* Read block r->seq at r->pos; 1, 0 at the trailer, or an error. */
static int load_block(struct sp_spool *r)
{
	struct sp_spool_block b;
	const char *why;
	uLongf tlen;
	uLong zlen;
	ssize_t n;

	if (r->indexed && r->pos == r->tr_off)
		return check_trailer(r);
	if (r->indexed && r->pos > r->tr_off)
		return damage(r, r->tr_off, "a block runs into the trailer");
	n = read_at(r, r->pos, &b, sizeof(b));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return cut(r, "no trailer");
	if (!memcmp(b.magic, SP_SPOOL_INDEX_MAGIC, (size_t)n < 8 ? (size_t)n : 8)) {
		if (r->indexed)
			return damage_block(r, "trailer magic where a block belongs");
		if (r->footer_seen && r->tr_bad[0])
			return damage(r, r->tr_bad_at ? r->tr_bad_at : r->pos,
				      r->tr_bad);
		return cut(r, "the file ends inside the trailer");
	}
	if (memcmp(b.magic, SP_SPOOL_BLOCK_MAGIC, (size_t)n < 8 ? (size_t)n : 8))
		return damage_block(r, "bad block magic");
	if ((size_t)n < sizeof(b))
		return cut(r, "the file ends inside the header of block %u", r->seq);
	if (sp_spool_crc(&b, SP_SPOOL_HDR_CRC_LEN) != b.hdr_crc)
		return damage_block(r, "bad header checksum");
	if (b.seq != r->seq)
		return damage_block(r, "wrong block number");
	if (b.enc > SP_SPOOL_ENC_DELTA || !b.nrec || b.usize < 8 ||
	    b.usize % 8 || b.usize > SP_SPOOL_USIZE_MAX || b.nrec > b.usize / 8 ||
	    b.tsize < b.nrec || b.tsize > 2ull * b.usize ||
	    (b.enc == SP_SPOOL_ENC_PLAIN && b.tsize != b.usize) ||
	    !b.zsize || b.zsize > compressBound(b.tsize))
		return damage_block(r, "bad sizes");
	if (r->pos + sizeof(b) + b.zsize > r->size) {
		struct stat sb;

		if (!fstat(r->fd, &sb))
			r->size = (uint64_t)sb.st_size;
		if (r->pos + sizeof(b) + b.zsize > r->size)
			return cut(r, "the file ends inside block %u: need %u bytes, have %llu",
				   r->seq, b.zsize,
				   (unsigned long long)(r->size - r->pos - sizeof(b)));
	}
	if (ensure(r, &r->zbuf, &r->zcap, b.zsize) ||
	    ensure(r, &r->tbuf, &r->tcap, b.tsize) ||
	    ensure(r, &r->ubuf, &r->ucap, b.usize))
		return r->state;
	n = read_at(r, r->pos + sizeof(b), r->zbuf, b.zsize);
	if (n < 0)
		return (int)n;
	if ((size_t)n < b.zsize)
		return cut(r, "the file ends inside block %u: need %u bytes, have %zd",
			   r->seq, b.zsize, n);
	if (sp_spool_crc(r->zbuf, b.zsize) != b.data_crc)
		return damage_block(r, "bad checksum");
	tlen = b.tsize;
	zlen = b.zsize;
	if (uncompress2(b.enc == SP_SPOOL_ENC_PLAIN ? r->ubuf : r->tbuf, &tlen,
			r->zbuf, &zlen) != Z_OK || tlen != b.tsize || zlen != b.zsize)
		return damage_block(r, "bad compressed data");
	why = b.enc == SP_SPOOL_ENC_DELTA ?
	      sp_spool_decode(r->tbuf, b.tsize, r->ubuf, b.usize, b.nrec) : NULL;
	if (!why)
		why = check_block(r, &b);
	if (why)
		return damage_block(r, why);
	if (r->indexed && b.seq % r->tr.stride == 0) {
		const struct sp_spool_index_entry *e = &r->idx[b.seq / r->tr.stride];

		if (b.seq / r->tr.stride >= r->tr.nentries || e->offset != r->pos ||
		    e->nrec != b.nrec || e->first_time != b.first_time ||
		    e->last_time != b.last_time)
			return damage_block(r, "index entry does not match");
	}
	r->block_off = r->pos;
	r->pos += sizeof(b) + b.zsize;
	r->seq++;
	r->ulen = b.usize;
	r->upos = 0;
	r->urec = 0;
	return 1;
}

static int note_thread(struct sp_spool *r, uint32_t pid, uint32_t tid)
{
	if (!sp_u64map_get(&r->threads, sp_spool_key(pid, tid), NULL) ||
	    !sp_u64map_get(&r->pids, pid, NULL))
		return -ENOMEM;
	return 0;
}

/* Take in a record handed out: stacks, counts. */
static int absorb(struct sp_spool *r, const struct sp_rec_hdr *rec)
{
	switch (rec->type) {
	case SP_REC_STACK: {
		const struct sp_unw_stack *s = (const void *)rec;
		struct stack_node *node = malloc(sizeof(*node) + rec->size);
		struct sp_u64slot *slot;

		slot = node ? sp_u64map_get(&r->stacks, sp_spool_key(s->pid, s->id),
					    NULL) : NULL;
		if (!slot) {
			free(node);
			return -ENOMEM;
		}
		slot->val = (uint64_t)(uintptr_t)node;
		memcpy(node->rec, rec, rec->size);
		node->next = r->nodes;
		r->nodes = node;
		if (s->id > r->max_id)
			r->max_id = s->id;
		break;
	}
	case SP_REC_SAMPLE: {
		const struct sp_unw_sample *s = (const void *)rec;
		const struct sp_u64slot *slot =
			sp_u64map_find(&r->stacks, sp_spool_key(s->pid, s->stack_id));
		const struct stack_node *node =
			(const void *)(uintptr_t)slot->val;
		const struct sp_unw_stack *st = (const void *)node->rec;

		r->samples++;
		r->ends[st->end]++;
		if (!r->timed || s->time < r->first_time)
			r->first_time = s->time;
		if (!r->timed || s->time > r->last_time)
			r->last_time = s->time;
		r->timed = 1;
		return note_thread(r, s->pid, s->tid);
	}
	case SP_REC_COMM: {
		const struct sp_comm_rec *c = (const void *)rec;

		return note_thread(r, c->pid, c->tid);
	}
	case SP_REC_FORK: {
		const struct sp_task_rec *t = (const void *)rec;

		return note_thread(r, t->pid, t->tid);
	}
	case SP_REC_LOST:
		r->lost += ((const struct sp_lost_rec *)rec)->lost;
		break;
	case SP_REC_SUMMARY:
		memcpy(&r->last_summary, rec, sizeof(r->last_summary));
		r->after_summary = 1;
		break;
	}
	return 0;
}

int sp_spool_next(struct sp_spool *r, const struct sp_rec_hdr **rec)
{
	const struct sp_rec_hdr *h;
	const char *why;
	int ret;

	if (r->state)
		return r->state;
	while (r->upos >= r->ulen) {
		if (r->done)
			return 0;
		ret = load_block(r);
		if (ret <= 0)
			return ret;
	}
	h = (const void *)(r->ubuf + r->upos);
	why = sp_spool_rec_check(&r->stacks, r->after_summary, h);
	if (why)
		return fail(r, -EBADMSG, "%s (record %u) in block %u at byte %llu of '%s'",
			    why, r->urec, r->seq - 1,
			    (unsigned long long)r->block_off, r->name);
	if (absorb(r, h))
		return fail(r, -ENOMEM, "out of memory reading '%s'", r->name);
	r->upos += h->size;
	r->urec++;
	r->records++;
	r->stream_bytes += h->size;
	*rec = h;
	return 1;
}

int sp_spool_next_sample(struct sp_spool *r, struct sp_spool_sample *out)
{
	const struct sp_rec_hdr *rec;
	int ret;

	while ((ret = sp_spool_next(r, &rec)) > 0) {
		const struct sp_unw_sample *s = (const void *)rec;

		if (rec->type != SP_REC_SAMPLE)
			continue;
		out->time = s->time;
		out->pid = s->pid;
		out->tid = s->tid;
		out->cpu = s->cpu;
		out->stack_id = s->stack_id;
		out->weight = s->weight;
		return 1;
	}
	return ret;
}

int sp_spool_stack(const struct sp_spool *r, uint32_t pid, uint32_t id,
		   struct sp_unw_stack_view *out)
{
	const struct sp_u64slot *slot =
		sp_u64map_find(&r->stacks, sp_spool_key(pid, id));
	const struct stack_node *node;

	if (!slot)
		return -ENOENT;
	node = (const void *)(uintptr_t)slot->val;
	sp_unw_stack_parse((const void *)node->rec, out);
	return 0;
}

int sp_spool_summary(const struct sp_spool *r, struct sp_unw_summary *out)
{
	if (!r->indexed || !(r->tr.flags & SP_SPOOL_HAVE_SUMMARY))
		return -ENOENT;
	*out = r->tr.summary;
	return 0;
}

void sp_spool_tally(const struct sp_spool *r, struct sp_unw_summary *out)
{
	uint64_t start = r->hdr.unw.ev.start_time;

	memset(out, 0, sizeof(*out));
	out->hdr.type = SP_REC_SUMMARY;
	out->hdr.size = sizeof(*out);
	out->samples = r->samples;
	out->lost = r->lost;
	out->stacks = r->stacks.n;
	out->threads = r->threads.n;
	out->processes = r->pids.n;
	if (!start || (r->timed && r->first_time < start))
		start = r->first_time;
	out->start_time = start;
	out->end_time = r->timed && r->last_time > start ? r->last_time : start;
	out->duration_ns = out->end_time - out->start_time;
	memcpy(out->ends, r->ends, sizeof(out->ends));
}

void sp_spool_info(const struct sp_spool *r, struct sp_spool_info *out)
{
	memset(out, 0, sizeof(*out));
	out->file_size = r->size;
	if (r->indexed) {
		out->stream_bytes = r->tr.stream_bytes;
		out->records = r->tr.records;
		out->samples = r->tr.samples;
		out->first_time = r->tr.first_time;
		out->last_time = r->tr.last_time;
		out->blocks = r->tr.nblocks;
		out->indexed = 1;
		return;
	}
	out->stream_bytes = r->stream_bytes;
	out->records = r->records;
	out->samples = r->samples;
	out->first_time = r->first_time;
	out->last_time = r->last_time;
	out->blocks = r->seq;
}

uint32_t sp_spool_max_stack_id(const struct sp_spool *r)
{
	return r->max_id;
}

void sp_spool_close(struct sp_spool *r)
{
	struct stack_node *n, *next;

	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (n = r->nodes; n; n = next) {
		next = n->next;
		free(n);
	}
	sp_u64map_release(&r->stacks);
	sp_u64map_release(&r->threads);
	sp_u64map_release(&r->pids);
	free(r->idx);
	free(r->zbuf);
	free(r->tbuf);
	free(r->ubuf);
	free(r->name);
	free(r);
}
