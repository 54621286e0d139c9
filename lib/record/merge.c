/* SPDX-License-Identifier: MIT */
/* merge.c: the records of every CPU's buffer, written in time order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/io.h"
#include "recorder.h"

/*
 * Each consume pass reads every buffer into the queue, sorts it, and writes
 * what is older than a horizon a little before the pass began (record.c
 * chooses it); the rest waits for the next pass, and finish writes all.
 */

static void *queue_add(struct rec_queue *q, uint64_t time, uint64_t seq,
		       size_t size)
{
	uint8_t *p;

	if (SP_GROW(q->buf, q->cap, q->len + size) ||
	    SP_GROW(q->v, q->vcap, q->n + 1))
		return NULL;
	p = q->buf + q->len;
	memset(p + size - 8, 0, 8);
	q->v[q->n].time = time;
	q->v[q->n].seq = seq;
	q->v[q->n].off = q->len;
	q->n++;
	q->len += size;
	return p;
}

void *rec_enqueue(struct sp_recorder *r, uint64_t time, size_t size)
{
	return queue_add(&r->mg.q, time, r->mg.seq++, size);
}

static void queue_release(struct rec_queue *q)
{
	free(q->buf);
	free(q->v);
	memset(q, 0, sizeof(*q));
}

void rec_merge_release(struct rec_merge *m)
{
	queue_release(&m->q);
	queue_release(&m->spare);
}

static int cmp_queued(const void *a, const void *b)
{
	const struct rec_queued *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int rec_write_until(struct sp_recorder *r, uint64_t horizon)
{
	struct rec_merge *m = &r->mg;
	struct rec_queue *q = &m->q, *sp = &m->spare, tmp;
	uint8_t *drop = NULL;
	size_t i, j;
	int e;

	if (!q->n)
		return 0;
	qsort(q->v, q->n, sizeof(*q->v), cmp_queued);
	if (r->ev.sw_on + r->ev.sw_main && r->o.off_cpu_min) {
		drop = calloc(q->n, 1);
		if (!drop || rec_offcpu_short(r, drop, horizon)) {
			free(drop);
			return sp_err_set(&r->err, -ENOMEM, "out of memory");
		}
	}
	for (i = 0; i < q->n && q->v[i].time <= horizon; i++) {
		const struct sp_rec_hdr *h = (const void *)(q->buf + q->v[i].off);

		if (drop && drop[i]) {
			r->ev.offcpu_short++;
			continue;
		}

		/* the whole host's filters, in time order */
		if (r->host.on && (e = rec_host_write(r, h)) <= 0) {
			if (e) {
				free(drop);
				return sp_err_set(&r->err, e, "out of memory");
			}
			continue;
		}

		if (q->v[i].time < m->last_written)
			m->late++;
		else
			m->last_written = q->v[i].time;
		/* a TAIL shrinks in place: the queue is ours */
		if (h->type == SP_REC_TAIL || h->type == SP_REC_EXIT)
			rec_tail_write(r, (struct sp_rec_hdr *)(q->buf +
								 q->v[i].off));
		/* every record of the thread came before, in time order */
		if (h->type == SP_REC_EXIT)
			rec_thread_gone(r, ((const struct sp_task_rec *)h)->tid);
		e = 0;
		if (h->type == SP_REC_SAMPLE || h->type == SP_REC_OFFCPU)
			e = rec_capture_ksyms(r, (const struct sp_raw_sample *)h);
		if (!e)
			e = sp_out_write(r->out, h, h->size);
		if (e) {
			free(drop);
			return sp_err_set(&r->err, e, "cannot write the raw stream: %s",
					  strerror(-e));
		}
		r->samples += h->type == SP_REC_SAMPLE;
		r->ev.offcpu += h->type == SP_REC_OFFCPU;
		r->ev.switches += h->type == SP_REC_SWITCH;
	}
	free(drop);
	/* what waits for the next pass moves to the spare queue */
	sp->len = 0;
	sp->n = 0;
	for (j = i; j < q->n; j++) {
		const struct sp_rec_hdr *h = (const void *)(q->buf + q->v[j].off);
		void *p = queue_add(sp, q->v[j].time, q->v[j].seq, h->size);

		if (!p)
			return sp_err_set(&r->err, -ENOMEM, "out of memory queueing records");
		memcpy(p, h, h->size);
	}
	tmp = *q;
	*q = *sp;
	*sp = tmp;
	return 0;
}
