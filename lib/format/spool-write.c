/* SPDX-License-Identifier: MIT */
/* spool-write.c: the unwound stream into a spool file, block by block. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/grow.h"
#include "alive.h"
#include "spool-codec.h"

/* The IDs of the stacks of one process, to forget with it. */
struct pid_stacks {
	uint32_t *ids;
	size_t n, cap;
};

struct sp_spool_writer {
	int fd;
	int regular;
	int err;		/* first failed write, sticky */
	struct sp_spool_opts o;
	uint8_t *ubuf, *tbuf, *zbuf;	/* records, encoded, block */
	size_t ulen, ucap, tcap, zcap;
	uint32_t unrec;
	uint64_t ufirst, ulast;	/* sample times of the pending block */
	int utimed;
	uint64_t first_time, last_time;
	int timed;
	struct sp_u64map stacks;	/* defined: sp_spool_key() */
	struct sp_u64map pid_stacks;	/* pid -> struct pid_stacks */
	struct sp_alive *alive;		/* when to forget a pid's stacks */
	int have_summary;
	struct sp_unw_summary summary;
	struct sp_spool_index_entry *idx;
	uint32_t nidx, stride;
	struct sp_spool_stats st;
	char why[128];
};

void sp_spool_opts_init(struct sp_spool_opts *opts)
{
	opts->level = SP_SPOOL_LEVEL;
	opts->block_size = SP_SPOOL_BLOCK_SIZE;
	opts->enc = SP_SPOOL_ENC_DELTA;
}

static int write_all(struct sp_spool_writer *w, const void *data, size_t n)
{
	const uint8_t *p = data;

	if (w->err)
		return w->err;
	while (n) {
		ssize_t k = write(w->fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			w->err = k < 0 ? -errno : -EIO;
			return w->err;
		}
		p += k;
		n -= (size_t)k;
		w->st.file_bytes += (uint64_t)k;
	}
	return 0;
}

/*
 * A process is gone (alive.h): a sample can no longer refer to its stacks,
 * which need not be remembered any more.
 */
static void forget(void *arg, uint32_t pid)
{
	struct sp_spool_writer *w = arg;
	struct sp_u64slot *slot = sp_u64map_find(&w->pid_stacks, pid);
	struct pid_stacks *ps;
	size_t i;

	if (!slot)
		return;
	ps = (struct pid_stacks *)(uintptr_t)slot->val;
	sp_u64map_del(&w->pid_stacks, pid);
	for (i = 0; i < ps->n; i++)
		sp_u64map_del(&w->stacks, sp_spool_key(pid, ps->ids[i]));
	free(ps->ids);
	free(ps);
}

/* Stack (pid, id) is defined, for as long as its process is. */
static int define(struct sp_spool_writer *w, uint32_t pid, uint32_t id)
{
	struct sp_u64slot *slot;
	struct pid_stacks *ps;
	int is_new;

	if (sp_alive_see(w->alive, pid))
		return -ENOMEM;
	slot = sp_u64map_get(&w->pid_stacks, pid, &is_new);
	if (!slot)
		return -ENOMEM;
	if (is_new) {
		ps = calloc(1, sizeof(*ps));
		if (!ps) {
			sp_u64map_del(&w->pid_stacks, pid);
			return -ENOMEM;
		}
		slot->val = (uint64_t)(uintptr_t)ps;
	}
	ps = (struct pid_stacks *)(uintptr_t)slot->val;
	if (!sp_u64map_get(&w->stacks, sp_spool_key(pid, id), &is_new))
		return -ENOMEM;
	if (!is_new)
		return 0;
	if (SP_GROW(ps->ids, ps->cap, ps->n + 1)) {
		sp_u64map_del(&w->stacks, sp_spool_key(pid, id));
		return -ENOMEM;
	}
	ps->ids[ps->n++] = id;
	return 0;
}

struct sp_spool_writer *sp_spool_writer_open(const char *path,
					     const struct sp_unw_header *uh,
					     const struct sp_spool_opts *opts)
{
	struct sp_spool_header h = { { SP_SPOOL_MAGIC, SP_SPOOL_VERSION, sizeof(h) } };
	struct sp_spool_writer *w;
	struct stat sb;
	int e;

	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->fd = -1;
	if (opts)
		w->o = *opts;
	else
		sp_spool_opts_init(&w->o);
	if (w->o.level < 0 || w->o.level > 9 || w->o.enc > SP_SPOOL_ENC_DELTA ||
	    w->o.block_size < SP_SPOOL_BLOCK_MIN ||
	    w->o.block_size > SP_SPOOL_BLOCK_LIMIT) {
		e = EINVAL;
		goto err;
	}
	w->stride = 1;
	w->idx = malloc(SP_SPOOL_INDEX_MAX * sizeof(*w->idx));
	w->alive = sp_alive_new(forget, w);
	if (!w->idx || !w->alive) {
		e = ENOMEM;
		goto err;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		e = errno;
		goto err;
	}
	w->regular = !fstat(w->fd, &sb) && S_ISREG(sb.st_mode);
	h.block_size = w->o.block_size;
	h.unw = *uh;
	memcpy(h.unw.h.magic, SP_UNW_MAGIC, SP_MAGIC_LEN);
	h.unw.h.header_size = sizeof(h.unw);
	h.crc = sp_spool_crc(&h, sizeof(h));
	w->st.stream_bytes = sizeof(h.unw);
	if (write_all(w, &h, sizeof(h))) {
		e = -w->err;
		goto err;
	}
	return w;
err:
	if (w->fd >= 0)
		close(w->fd);
	free(w->idx);
	sp_alive_free(w->alive);
	free(w);
	errno = e;
	return NULL;
}

static void index_block(struct sp_spool_writer *w, const struct sp_spool_block *b,
			uint64_t offset)
{
	struct sp_spool_index_entry *e;
	uint32_t i;

	if (b->seq % w->stride)
		return;
	if (w->nidx == SP_SPOOL_INDEX_MAX) {
		/* keep every other entry: a sparser index, never a larger one */
		for (i = 0; i < w->nidx / 2; i++)
			w->idx[i] = w->idx[2 * i];
		w->nidx /= 2;
		w->stride *= 2;
		if (b->seq % w->stride)
			return;
	}
	e = &w->idx[w->nidx++];
	e->offset = offset;
	e->first_time = b->first_time;
	e->last_time = b->last_time;
	e->seq = b->seq;
	e->nrec = b->nrec;
}

int sp_spool_writer_flush(struct sp_spool_writer *w)
{
	struct sp_spool_block b = { SP_SPOOL_BLOCK_MAGIC };
	const uint8_t *src = w->ubuf;
	size_t tlen = w->ulen;
	uLongf zlen;

	if (w->err || !w->unrec)
		return w->err;
	if (w->o.enc == SP_SPOOL_ENC_DELTA) {
		if (SP_GROW(w->tbuf, w->tcap, 2 * w->ulen))
			return w->err = -ENOMEM;
		tlen = sp_spool_encode(w->ubuf, w->ulen, w->tbuf);
		src = w->tbuf;
	}
	zlen = compressBound((uLong)tlen);
	if (SP_GROW(w->zbuf, w->zcap, sizeof(b) + zlen))
		return w->err = -ENOMEM;
	if (compress2(w->zbuf + sizeof(b), &zlen, src, (uLong)tlen,
		      w->o.level) != Z_OK)
		return w->err = -ENOMEM;
	b.seq = (uint32_t)w->st.blocks;
	b.enc = w->o.enc;
	b.nrec = w->unrec;
	b.usize = (uint32_t)w->ulen;
	b.tsize = (uint32_t)tlen;
	b.zsize = (uint32_t)zlen;
	if (w->utimed) {
		b.first_time = w->ufirst;
		b.last_time = w->ulast;
	}
	b.data_crc = sp_spool_crc(w->zbuf + sizeof(b), zlen);
	b.hdr_crc = sp_spool_crc(&b, SP_SPOOL_HDR_CRC_LEN);
	memcpy(w->zbuf, &b, sizeof(b));
	index_block(w, &b, w->st.file_bytes);
	if (write_all(w, w->zbuf, sizeof(b) + zlen))
		return w->err;
	w->st.blocks++;
	w->ulen = 0;
	w->unrec = 0;
	w->utimed = 0;
	return 0;
}

int sp_spool_writer_add(struct sp_spool_writer *w, const struct sp_rec_hdr *rec)
{
	const char *why;
	int r;

	if (w->err)
		return w->err;
	why = sp_spool_rec_framing(rec, rec->size);
	if (!why)
		why = sp_spool_rec_check(&w->stacks, w->have_summary, rec);
	if (why) {
		snprintf(w->why, sizeof(w->why), "%s", why);
		return -EINVAL;
	}
	if (w->ulen && w->ulen + rec->size > w->o.block_size) {
		r = sp_spool_writer_flush(w);
		if (r)
			return r;
	}
	if (SP_GROW(w->ubuf, w->ucap, w->ulen + rec->size))
		return w->err = -ENOMEM;
	/* alive.c knows which records begin and end processes */
	if (sp_alive_apply(w->alive, rec))
		return w->err = -ENOMEM;
	if (rec->type == SP_REC_STACK) {
		const struct sp_unw_stack *s = (const void *)rec;

		if (define(w, s->pid, s->id))
			return w->err = -ENOMEM;
		w->st.stacks++;
	} else if (rec->type == SP_REC_SAMPLE) {
		const struct sp_unw_sample *s = (const void *)rec;

		if (!w->utimed || s->time < w->ufirst)
			w->ufirst = s->time;
		if (!w->utimed || s->time > w->ulast)
			w->ulast = s->time;
		if (!w->timed || s->time < w->first_time)
			w->first_time = s->time;
		if (!w->timed || s->time > w->last_time)
			w->last_time = s->time;
		w->utimed = w->timed = 1;
		w->st.samples++;
	} else if (rec->type == SP_REC_SUMMARY) {
		memcpy(&w->summary, rec, sizeof(w->summary));
		w->have_summary = 1;
	}
	memcpy(w->ubuf + w->ulen, rec, rec->size);
	w->ulen += rec->size;
	w->unrec++;
	w->st.records++;
	w->st.stream_bytes += rec->size;
	if (w->ulen >= w->o.block_size)
		return sp_spool_writer_flush(w);
	return 0;
}

uint32_t sp_spool_writer_pending(const struct sp_spool_writer *w)
{
	return w->unrec;
}

const char *sp_spool_writer_error(const struct sp_spool_writer *w)
{
	return w->why;
}

void sp_spool_writer_stats(const struct sp_spool_writer *w,
			   struct sp_spool_stats *st)
{
	*st = w->st;
}

static int write_trailer(struct sp_spool_writer *w)
{
	struct sp_spool_trailer t = { SP_SPOOL_INDEX_MAGIC };
	struct sp_spool_footer f = { 0 };
	size_t elen = w->nidx * sizeof(*w->idx);
	uint32_t c;

	t.nblocks = (uint32_t)w->st.blocks;
	t.nentries = w->nidx;
	t.stride = w->stride;
	t.flags = SP_SPOOL_HAVE_SUMMARY;
	t.records = w->st.records;
	t.samples = w->st.samples;
	t.stream_bytes = w->st.stream_bytes;
	t.first_time = w->first_time;
	t.last_time = w->last_time;
	t.summary = w->summary;
	f.trailer_offset = w->st.file_bytes;
	f.trailer_size = (uint32_t)(sizeof(t) + elen + sizeof(f));
	memcpy(f.magic, SP_SPOOL_END_MAGIC, SP_MAGIC_LEN);
	c = sp_spool_crc(&t, sizeof(t));
	c = (uint32_t)crc32(c, (const void *)w->idx, (uInt)elen);
	c = (uint32_t)crc32(c, (const void *)&f, SP_SPOOL_FOOTER_CRC_LEN);
	f.crc = c;
	if (write_all(w, &t, sizeof(t)) || write_all(w, w->idx, elen))
		return w->err;
	return write_all(w, &f, sizeof(f));
}

int sp_spool_writer_close(struct sp_spool_writer *w)
{
	uint32_t i;
	int r;

	if (!w)
		return 0;
	r = sp_spool_writer_flush(w);
	if (!r && w->have_summary)
		r = write_trailer(w);
	if (!r && w->regular && fsync(w->fd))
		r = -errno;
	if (close(w->fd) && !r)
		r = -errno;
	free(w->ubuf);
	free(w->tbuf);
	free(w->zbuf);
	free(w->idx);
	for (i = 0; i < w->pid_stacks.nslots; i++) {
		struct pid_stacks *ps;

		if (!w->pid_stacks.slots[i].used)
			continue;
		ps = (struct pid_stacks *)(uintptr_t)w->pid_stacks.slots[i].val;
		free(ps->ids);
		free(ps);
	}
	sp_u64map_release(&w->pid_stacks);
	sp_u64map_release(&w->stacks);
	sp_alive_free(w->alive);
	free(w);
	return r;
}
