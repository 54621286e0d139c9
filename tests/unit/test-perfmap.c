/* SPDX-License-Identifier: MIT */
/*
 * test-perfmap.c: the JIT perf map table against a plain reading of its
 * rule: of the entries holding an address, among the 64 that start last at
 * or below it, the latest line wins.  Maps with overlapping code (a JIT
 * that reuses memory), huge and wrapping entries, and the same lines given
 * at once and a few at a time, as PERFMAP records bring them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/perfmap.h"
#include "unit.h"

#define MAXL 600
#define WINDOW 64	/* OVERLAP_SCAN of perfmap.c */

struct line {
	uint64_t start, size;
	uint32_t seq;
};

static struct line lines[MAXL];
static size_t nlines;

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The rule, read plainly from a sorted copy of the lines. */
static const struct line *oracle(const struct line *v, size_t n, uint64_t a)
{
	const struct line *best = NULL;
	size_t lo = 0, i, k;

	while (lo < n && v[lo].start <= a)
		lo++;
	for (i = lo, k = 0; i-- > 0 && k < WINDOW; k++)
		if (a - v[i].start < v[i].size && (!best || v[i].seq > best->seq))
			best = &v[i];
	return best;
}

/* A map of n lines: JIT-like runs, overlaps, a few huge or wrapping ones. */
static void make_lines(size_t n, int kind)
{
	uint64_t at = 0x40000000;
	size_t i;

	for (i = 0; i < n; i++) {
		struct line *l = &lines[i];

		l->seq = (uint32_t)i + 1;
		switch (kind == 0 ? 0 : unit_rand() % 8) {
		case 0: case 1: case 2:	/* the next function of the JIT */
			l->start = at;
			l->size = 0x10 + unit_rand() % 0x200;
			at += l->size + unit_rand() % 0x40;
			break;
		case 3: case 4:		/* memory used again */
			l->start = 0x40000000 + unit_rand() % (at - 0x40000000 + 1);
			l->size = 1 + unit_rand() % 0x400;
			break;
		case 5:			/* one name for a big region */
			l->start = 0x40000000 - unit_rand() % 0x1000;
			l->size = 0x100000 + unit_rand() % 0x1000000;
			break;
		case 6:			/* the same start twice */
			*l = lines[i ? unit_rand() % i : 0];
			l->seq = (uint32_t)i + 1;
			if (!l->size)
				l->size = 1;
			break;
		default:		/* up to the top of the address space */
			l->start = UINT64_MAX - unit_rand() % 0x100;
			l->size = 1 + unit_rand() % 0x200;
			break;
		}
	}
	nlines = n;
}

static char *map_text(size_t from, size_t to, size_t *len)
{
	char *buf = malloc((to - from) * 64 + 1), *p = buf;
	size_t i;

	for (i = from; i < to; i++)
		p += sprintf(p, "%" PRIx64 " %" PRIx64 " f%" PRIu32 "\n",
			     lines[i].start, lines[i].size, lines[i].seq);
	*len = (size_t)(p - buf);
	return buf;
}

/* Every table answers as the oracle at the edges of every line. */
static int agrees(const struct sp_perfmap *m)
{
	struct line sorted[MAXL];
	int bad = 0;
	size_t i;
	int d;

	memcpy(sorted, lines, nlines * sizeof(*lines));
	qsort(sorted, nlines, sizeof(*sorted), line_cmp);
	for (i = 0; i < nlines && !bad; i++) {
		for (d = -1; d <= 1 && !bad; d++) {
			uint64_t probes[] = { lines[i].start + (uint64_t)d,
				lines[i].start + lines[i].size + (uint64_t)d,
				lines[i].start + lines[i].size / 2 };
			size_t k;

			for (k = 0; k < 3; k++) {
				const struct line *want =
					oracle(sorted, nlines, probes[k]);
				const struct sp_pmsym *got =
					sp_perfmap_find(m, probes[k]);

				if (!want != !got ||
				    (got && got->seq != want->seq)) {
					fprintf(stderr, "at %#" PRIx64
						": want line %u, got %u\n",
						probes[k], want ? want->seq : 0,
						got ? got->seq : 0);
					bad = 1;
				}
			}
		}
	}
	return !bad;
}

static void one_map(size_t n, int kind)
{
	struct sp_perfmap *whole = sp_perfmap_new(), *parts = sp_perfmap_new();
	size_t len, from, to;
	char *text;

	make_lines(n, kind);
	text = map_text(0, n, &len);
	CHECK(!sp_perfmap_add(whole, text, len));
	free(text);
	CHECK(sp_perfmap_count(whole) == n);
	CHECK(agrees(whole));

	/* the same lines, a few at a time */
	for (from = 0; from < n; from = to) {
		to = from + 1 + unit_rand() % 40;
		if (to > n)
			to = n;
		text = map_text(from, to, &len);
		CHECK(!sp_perfmap_add(parts, text, len));
		free(text);
	}
	CHECK(sp_perfmap_count(parts) == n);
	CHECK(agrees(parts));
	sp_perfmap_free(whole);
	sp_perfmap_free(parts);
}

int main(void)
{
	struct sp_perfmap *m = sp_perfmap_new();
	const struct sp_pmsym *e;
	static const char later[] = "1000 100 outer\n1040 10 inner\n";
	int round;

	/* a small function inside a big one names its own bytes only */
	CHECK(!sp_perfmap_add(m, later, sizeof(later) - 1));
	e = sp_perfmap_find(m, 0x1045);
	CHECK(e && !strcmp(e->name, "inner"));
	e = sp_perfmap_find(m, 0x1050);
	CHECK(e && !strcmp(e->name, "outer"));
	CHECK(!sp_perfmap_find(m, 0x1100));
	CHECK(!sp_perfmap_find(m, 0xfff));
	sp_perfmap_free(m);

	one_map(MAXL, 0);
	for (round = 0; round < 40; round++)
		one_map(1 + unit_rand() % MAXL, 1);
	return unit_done("test-perfmap");
}
