/* SPDX-License-Identifier: MIT */
/*
 * histogram: the third tutorial.  Count how often each stack of a spool
 * appears and print the top 20, most frequent first: the kernel of any
 * flame graph or top-functions report.
 *
 *	histogram SPOOL
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stackpulse.h>

struct row {
	char *stack;
	unsigned long count;
};

struct line {
	char buf[8192];
	size_t len;
};

/* Frames come leaf first: put each in front, so the line reads root first. */
static int prepend(void *arg, const struct sp_perf_frame *f)
{
	struct line *l = arg;
	size_t n = strlen(f->func_name) + (l->len ? 1 : 0);

	if (f->flags & SP_FRAME_HIDDEN_DEFAULT || l->len + n >= sizeof(l->buf))
		return 0;
	memmove(l->buf + n, l->buf, l->len + 1);
	memcpy(l->buf, f->func_name, strlen(f->func_name));
	if (l->len)
		l->buf[n - 1] = ';';
	l->len += n;
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->stack, y->stack);
}

int main(int argc, char **argv)
{
	struct sp_perf_symbolizer *sym;
	struct sp_spool_sample s;
	struct sp_spool *spool;
	struct row *rows = NULL;
	size_t nrows = 0, cap = 0, i;
	int e;

	if (argc != 2) {
		fprintf(stderr, "usage: histogram SPOOL\n");
		return 64;
	}
	if (sp_spool_open(argv[1], &spool) ||
	    sp_perf_symbolizer_for_spool(argv[1], &sym)) {
		fprintf(stderr, "histogram: cannot read '%s'\n", argv[1]);
		return 2;
	}
	while ((e = sp_spool_next_sample(spool, &s)) == 1) {
		struct line l = { "", 0 };

		sp_perf_symbolizer_for_each_frame(sym, s.pid, s.stack_id,
						  prepend, &l);
		/* a linear search keeps the example short; use a hash table */
		for (i = 0; i < nrows && strcmp(rows[i].stack, l.buf); i++)
			;
		if (i == nrows) {
			if (nrows == cap) {
				cap = cap ? cap * 2 : 64;
				rows = realloc(rows, cap * sizeof(*rows));
				if (!rows)
					return 2;
			}
			rows[nrows].stack = strdup(l.buf);
			rows[nrows++].count = 0;
		}
		rows[i].count++;
	}
	if (e < 0)
		fprintf(stderr, "histogram: %s\n", sp_spool_error(spool));
	qsort(rows, nrows, sizeof(*rows), by_count);
	for (i = 0; i < nrows && i < 20; i++)
		printf("%8lu %s\n", rows[i].count, rows[i].stack);
	for (i = 0; i < nrows; i++)
		free(rows[i].stack);
	free(rows);
	sp_perf_symbolizer_free(sym);
	sp_spool_close(spool);
	return e < 0 ? 1 : 0;
}
