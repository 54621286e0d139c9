/* SPDX-License-Identifier: MIT */
/* tail.c: TAIL records checked, and the per-thread tails both ends keep. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashtab.h"
#include "tail.h"

struct sp_tails {
	struct sp_u64map by_tid;	/* tid -> struct sp_tail * */
	uint8_t *scratch;		/* where a decoded tail is built */
	size_t scratch_cap;
	uint64_t bytes;
};

/* A tail and the capacity of its bytes. */
struct held {
	struct sp_tail t;
	size_t cap;
};

const char *sp_tail_check(const struct sp_rec_hdr *rec)
{
	const struct sp_tail_rec *r = (const void *)rec;

	if (rec->size < sizeof(*r))
		return "TAIL record too short";
	if (r->len > SP_TAIL_MAX)
		return "TAIL longer than 16 MiB";
	if (r->kept > r->len)
		return "TAIL keeps more bytes than it has";
	if (r->start + r->len < r->start)
		return "TAIL range wraps";
	if ((uint64_t)r->len - r->kept > rec->size - sizeof(*r))
		return "TAIL bytes exceed its record size";
	return NULL;
}

struct sp_tails *sp_tails_new(void)
{
	return calloc(1, sizeof(struct sp_tails));
}

void sp_tails_free(struct sp_tails *t)
{
	uint32_t i;

	if (!t)
		return;
	for (i = 0; i < t->by_tid.nslots; i++) {
		struct held *h;

		if (!t->by_tid.slots[i].used)
			continue;
		h = (struct held *)(uintptr_t)t->by_tid.slots[i].val;
		free(h->t.bytes);
		free(h);
	}
	sp_u64map_release(&t->by_tid);
	free(t->scratch);
	free(t);
}

static struct held *held_of(const struct sp_tails *t, uint32_t tid)
{
	struct sp_u64slot *s = sp_u64map_find(&t->by_tid, tid);

	return s ? (struct held *)(uintptr_t)s->val : NULL;
}

const struct sp_tail *sp_tails_get(const struct sp_tails *t, uint32_t tid)
{
	struct held *h = held_of(t, tid);

	return h ? &h->t : NULL;
}

void sp_tails_forget(struct sp_tails *t, uint32_t tid)
{
	struct held *h = held_of(t, tid);

	if (!h)
		return;
	t->bytes -= h->t.len;
	free(h->t.bytes);
	free(h);
	sp_u64map_del(&t->by_tid, tid);
}

uint64_t sp_tails_bytes(const struct sp_tails *t)
{
	return t->bytes;
}

/* The held tail of tid, added empty when new; NULL when out of memory. */
static struct held *held_get(struct sp_tails *t, uint32_t tid)
{
	struct sp_u64slot *s;
	struct held *h = held_of(t, tid);
	int is_new;

	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	s = sp_u64map_get(&t->by_tid, tid, &is_new);
	if (!s) {
		free(h);
		return NULL;
	}
	s->val = (uint64_t)(uintptr_t)h;
	h->t.tid = tid;
	return h;
}

static int reserve(uint8_t **p, size_t *cap, size_t need)
{
	uint8_t *q;

	if (need <= *cap)
		return 0;
	q = realloc(*p, need);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = need;
	return 0;
}

/*
 * Where the kept bytes [end - kept, end) of a record lie in the thread's
 * previous tail prev: their offset there, or -1 when prev does not hold
 * them all.
 */
static int64_t kept_at(const struct sp_tail *prev, uint32_t pid,
		       uint64_t end, uint32_t kept)
{
	uint64_t lo = end - kept;

	if (!prev || prev->pid != pid || lo < prev->start ||
	    end > prev->start + prev->len)
		return -1;
	return (int64_t)(lo - prev->start);
}

int sp_tails_decode(struct sp_tails *t, const struct sp_rec_hdr *rec,
		    const char **why)
{
	const struct sp_tail_rec *r = (const void *)rec;
	struct held *h;
	uint32_t n;
	int64_t at = 0;
	uint8_t *swap;
	size_t swap_cap;

	*why = sp_tail_check(rec);
	if (*why)
		return -EINVAL;
	h = held_of(t, r->tid);
	n = r->len - r->kept;
	if (r->kept) {
		at = kept_at(h ? &h->t : NULL, r->pid, r->start + r->len,
			     r->kept);
		if (at < 0) {
			*why = "TAIL keeps bytes its thread's previous tail does not hold";
			return -EINVAL;
		}
	}
	if (reserve(&t->scratch, &t->scratch_cap, r->len ? r->len : 1))
		return -ENOMEM;
	memcpy(t->scratch, r->data, n);
	if (r->kept)
		memcpy(t->scratch + n, h->t.bytes + at, r->kept);
	h = held_get(t, r->tid);
	if (!h)
		return -ENOMEM;
	/* the previous bytes become the next scratch */
	swap = h->t.bytes;
	swap_cap = h->cap;
	h->t.bytes = t->scratch;
	h->cap = t->scratch_cap;
	t->scratch = swap;
	t->scratch_cap = swap_cap;
	t->bytes = t->bytes - h->t.len + r->len;
	h->t.pid = r->pid;
	h->t.time = r->time;
	h->t.start = r->start;
	h->t.len = r->len;
	return 0;
}

/* How many bytes at the ends of a and b (n bytes each) are equal. */
static uint32_t common_suffix(const uint8_t *a, const uint8_t *b, uint32_t n)
{
	uint32_t k = 0;

	while (n - k >= 64 && !memcmp(a + n - k - 64, b + n - k - 64, 64))
		k += 64;
	while (k < n && a[n - k - 1] == b[n - k - 1])
		k++;
	return k;
}

int sp_tails_encode(struct sp_tails *t, struct sp_tail_rec *rec)
{
	struct held *h = held_of(t, rec->tid);
	uint64_t end = rec->start + rec->len;
	uint32_t kept = 0, n;

	if (h && h->t.pid == rec->pid && end <= h->t.start + h->t.len &&
	    end > h->t.start) {
		uint64_t lo = rec->start > h->t.start ? rec->start : h->t.start;
		uint32_t span = (uint32_t)(end - lo);

		kept = common_suffix(rec->data + (lo - rec->start),
				     h->t.bytes + (lo - h->t.start), span);
	}
	h = held_get(t, rec->tid);
	if (!h || reserve(&h->t.bytes, &h->cap, rec->len ? rec->len : 1)) {
		sp_tails_forget(t, rec->tid);
		return -ENOMEM;
	}
	/* over the same range, the kept bytes are there already */
	if (h->t.pid == rec->pid && h->t.start == rec->start &&
	    h->t.len == rec->len)
		memcpy(h->t.bytes, rec->data, rec->len - kept);
	else
		memcpy(h->t.bytes, rec->data, rec->len);
	t->bytes = t->bytes - h->t.len + rec->len;
	h->t.pid = rec->pid;
	h->t.time = rec->time;
	h->t.start = rec->start;
	h->t.len = rec->len;

	n = rec->len - kept;
	rec->kept = kept;
	rec->hdr.size = sp_align8(sizeof(*rec) + n);
	memset(rec->data + n, 0, rec->hdr.size - sizeof(*rec) - n);
	return 0;
}
