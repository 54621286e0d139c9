/* SPDX-License-Identifier: MIT */
/*
 * top.c: the --top table: the hottest functions by self and by total
 * samples, and how the stacks of the samples ended, so that a profile whose
 * stacks are cut says so next to its numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "model.h"

struct func {
	const char *name;
	uint64_t self, total;
	size_t stamp;		/* last line that counted its total, + 1 */
};

static int by_self(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

static int write_table(struct sp_out *out, const char *title,
		       const struct func *fn, size_t nfn, unsigned n,
		       uint64_t total)
{
	size_t i;
	int r;

	r = sp_out_printf(out, "# top %u by %s, of %" PRIu64 " samples\n"
			  "%10s %7s %10s %7s  %s\n", n, title, total,
			  "self", "self%", "total", "total%", "function");
	for (i = 0; !r && i < nfn && i < n; i++)
		r = sp_out_printf(out, "%10" PRIu64 " %6.2f%% %10" PRIu64
				  " %6.2f%%  %s\n", fn[i].self,
				  pct(fn[i].self, total), fn[i].total,
				  pct(fn[i].total, total), fn[i].name);
	return r;
}

/* Samples by how their stacks ended, the known ends in enum order. */
static int write_ends(struct sp_out *out, const struct sp_fold *f)
{
	unsigned i;
	int r;

	r = sp_out_printf(out, "# stack ends, of %" PRIu64 " samples\n"
			  "%10s %7s  %s\n", f->total, "samples", "share", "end");
	for (i = 0; !r && i <= SP_END_MAX; i++)
		if (f->ends[i])
			r = sp_out_printf(out, "%10" PRIu64 " %6.2f%%  %s\n",
					  f->ends[i], pct(f->ends[i], f->total),
					  i < SP_END_MAX ? sp_unw_end_name(i) :
					  "unknown");
	return r;
}

int sp_fold_write_top(struct sp_fold *f, struct sp_out *out, unsigned n)
{
	struct sp_strtab names = { 0 };
	struct func *fn = NULL;
	size_t nfn = 0, cap = 0;
	uint32_t i;
	int r = 0;

	/* frames of each counted stack, leaf last; no prefix (not a function) */
	for (i = 0; i < f->counts.nslots; i++) {
		const struct sp_u64slot *c = &f->counts.slots[i];
		const char *p;
		int64_t leaf = -1;

		if (!c->used)
			continue;
		p = f->strs.strs[(uint32_t)c->key];
		while (*p) {
			size_t len = strcspn(p, ";");
			char *name = strndup(p, len);
			int64_t id;

			if (!name) {
				r = -ENOMEM;
				goto out;
			}
			id = sp_strtab_intern(&names, name);
			free(name);
			if (id < 0) {
				r = -ENOMEM;
				goto out;
			}
			if ((size_t)id == nfn) {
				if (SP_GROW(fn, cap, nfn + 1)) {
					r = -ENOMEM;
					goto out;
				}
				memset(&fn[nfn++], 0, sizeof(*fn));
			}
			if (fn[id].stamp != (size_t)i + 1) {
				fn[id].stamp = (size_t)i + 1;
				fn[id].total += c->val;
			}
			leaf = id;
			p += len;
			if (*p)
				p++;
		}
		if (leaf >= 0)
			fn[leaf].self += c->val;
	}
	for (i = 0; i < nfn; i++)
		fn[i].name = names.strs[i];
	/* no samples: no function, and fn is NULL, which qsort must not get */
	if (nfn)
		qsort(fn, nfn, sizeof(*fn), by_self);
	r = write_table(out, "self", fn, nfn, n, f->total);
	if (!r)
		r = sp_out_write(out, "\n", 1);
	if (nfn)
		qsort(fn, nfn, sizeof(*fn), by_total);
	if (!r)
		r = write_table(out, "total", fn, nfn, n, f->total);
	if (!r)
		r = sp_out_write(out, "\n", 1);
	if (!r)
		r = write_ends(out, f);
out:
	free(fn);
	sp_strtab_release(&names);
	return r;
}
