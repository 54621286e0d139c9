/* SPDX-License-Identifier: MIT */
/* fold.c: folding symbolized stacks into counted FlameGraph lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "fold.h"
#include "base/hashtab.h"

struct sp_fold {
	unsigned flags;
	struct sp_strtab strs;	/* folded stacks, prefixes, comm names */
	struct sp_u64map comms;	/* pid << 32 | tid -> comm string id */
	struct sp_u64map prefixes;	/* pid << 32 | tid -> first-frame string id */
	struct sp_u64map stacks;	/* pid << 32 | id -> folded string id */
	struct sp_u64map counts;	/* prefix id << 32 | folded id -> count */
	uint64_t total;

	/* the stack whose frame lines are arriving */
	int pending;
	uint32_t pend_pid, pend_id, pend_n, pend_got;
	char **pend;		/* sanitised names, leaf first; NULL: hidden */
	uint32_t pend_cap;

	char err[160];
};

static uint64_t key2(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}

/* Names */

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "[module]+0x1f0" -> "[module]": stackcollapse-perf.pl merges them too */
static void strip_offset(char *s, size_t *len)
{
	char *plus = strrchr(s, '+');
	char *p;

	if (!plus || plus == s || plus[-1] != ']' || s[0] != '[' ||
	    plus[1] != '0' || plus[2] != 'x' || !plus[3])
		return;
	for (p = plus + 3; *p; p++)
		if (!is_digit(*p) && (*p < 'a' || *p > 'f'))
			return;
	*plus = 0;
	*len = (size_t)(plus - s);
}

char *sp_fold_name(const char *name, unsigned kind, unsigned origin)
{
	static const char unknown[] = "[unknown]";
	const char *suffix = "";
	size_t len = name ? strlen(name) : 0, i, j;
	char *s;

	s = malloc((len > sizeof(unknown) ? len : sizeof(unknown)) + 5);
	if (!s)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = ' ';
		s[i] = (char)c;
	}
	s[len] = 0;
	if (origin == SP_FO_NONE)
		strip_offset(s, &len);
	while (len && s[len - 1] == ' ')
		s[--len] = 0;
	/*
	 * flamegraph.pl reads "name 12 5" as a differential line: the frame
	 * must not end in whitespace and a number
	 */
	for (j = len; j && (is_digit(s[j - 1]) || s[j - 1] == '.'); j--)
		;
	if (j < len && j && s[j - 1] == ' ')
		for (; j && s[j - 1] == ' '; j--)
			s[j - 1] = '_';
	if (!len) {
		memcpy(s, unknown, sizeof(unknown));
		len = sizeof(unknown) - 1;
	}
	if (kind == SP_FK_KERNEL)
		suffix = "_[k]";
	else if (kind == SP_FK_JIT)
		suffix = "_[j]";
	else if (kind == SP_FK_INLINE)
		suffix = "_[i]";
	strcpy(s + len, suffix);
	return s;
}

char *sp_fold_comm_name(const char *comm)
{
	size_t len = comm ? strlen(comm) : 0, i;
	char *s;

	if (!len)
		return strdup("[unknown]");
	s = malloc(len + 1);
	if (!s)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)comm[i];

		if (c == ' ' || c < 0x20 || c == 0x7f)
			c = '_';
		else if (c == ';')
			c = ':';
		s[i] = (char)c;
	}
	s[len] = 0;
	return s;
}

/* The fold */

struct sp_fold *sp_fold_new(unsigned flags)
{
	struct sp_fold *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->flags = flags;
	return f;
}

static void pend_clear(struct sp_fold *f)
{
	uint32_t i;

	for (i = 0; i < f->pend_got; i++)
		free(f->pend[i]);
	f->pend_got = 0;
	f->pending = 0;
}

void sp_fold_free(struct sp_fold *f)
{
	if (!f)
		return;
	pend_clear(f);
	free(f->pend);
	sp_strtab_release(&f->strs);
	sp_u64map_release(&f->comms);
	sp_u64map_release(&f->prefixes);
	sp_u64map_release(&f->stacks);
	sp_u64map_release(&f->counts);
	free(f);
}

const char *sp_fold_error(const struct sp_fold *f)
{
	return f->err;
}

uint64_t sp_fold_total(const struct sp_fold *f)
{
	return f->total;
}

static int fail(struct sp_fold *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct sp_fold *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->err, sizeof(f->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The first frame of a thread's samples, interned. */
static int64_t make_prefix(struct sp_fold *f, uint32_t pid, uint32_t tid)
{
	struct sp_u64slot *c = sp_u64map_find(&f->comms, key2(pid, tid));
	const char *comm;
	char *s;
	int64_t id;
	int n;

	if (!c)
		c = sp_u64map_find(&f->comms, key2(pid, pid));
	comm = c ? f->strs.strs[c->val] : "[unknown]";
	if (f->flags & SP_FOLD_TID)
		n = asprintf(&s, "%s-%" PRIu32 "/%" PRIu32, comm, pid, tid);
	else if (f->flags & SP_FOLD_PID)
		n = asprintf(&s, "%s-%" PRIu32, comm, pid);
	else
		n = asprintf(&s, "%s", comm);
	if (n < 0)
		return -ENOMEM;
	id = sp_strtab_intern(&f->strs, s);
	free(s);
	return id;
}

static int apply_comm(struct sp_fold *f, const struct sp_st_comm *c)
{
	struct sp_u64slot *slot, *p;
	char *name = sp_fold_comm_name(c->name);
	int64_t id;

	if (!name)
		return -ENOMEM;
	id = sp_strtab_intern(&f->strs, name);
	free(name);
	if (id < 0)
		return (int)id;
	slot = sp_u64map_get(&f->comms, key2(c->pid, c->tid), NULL);
	if (!slot)
		return -ENOMEM;
	slot->val = (uint64_t)id;
	/* later samples of the thread carry the new name */
	p = sp_u64map_find(&f->prefixes, key2(c->pid, c->tid));
	if (p) {
		id = make_prefix(f, c->pid, c->tid);
		if (id < 0)
			return (int)id;
		p->val = (uint64_t)id;
	}
	return 0;
}

/* All frames are in: join them root first and intern the result. */
static int finish_stack(struct sp_fold *f)
{
	struct sp_u64slot *slot;
	size_t len = 0, at = 0;
	uint32_t i;
	int64_t id;
	char *s;

	for (i = 0; i < f->pend_n; i++)
		if (f->pend[i])
			len += strlen(f->pend[i]) + 1;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	for (i = f->pend_n; i--; ) {
		size_t n;

		if (!f->pend[i])
			continue;
		if (at)
			s[at++] = ';';
		n = strlen(f->pend[i]);
		memcpy(s + at, f->pend[i], n);
		at += n;
	}
	s[at] = 0;
	id = sp_strtab_intern(&f->strs, s);
	free(s);
	if (id < 0)
		return (int)id;
	/* a redefinition (the pid was reused) replaces the old stack */
	slot = sp_u64map_get(&f->stacks, key2(f->pend_pid, f->pend_id), NULL);
	if (!slot)
		return -ENOMEM;
	slot->val = (uint64_t)id;
	pend_clear(f);
	return 0;
}

static int apply_stack(struct sp_fold *f, const struct sp_st_stack *st)
{
	if (st->nframes > (1u << 20))
		return fail(f, "stack %" PRIu32 "/%" PRIu32 " has too many frames (%" PRIu32 ")",
			    st->pid, st->id, st->nframes);
	if (st->nframes > f->pend_cap) {
		char **p = realloc(f->pend, st->nframes * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->pend = p;
		f->pend_cap = st->nframes;
	}
	f->pending = 1;
	f->pend_pid = st->pid;
	f->pend_id = st->id;
	f->pend_n = st->nframes;
	f->pend_got = 0;
	if (!st->nframes)
		return finish_stack(f);
	return 0;
}

static int apply_frame(struct sp_fold *f, const struct sp_st_frame *fr)
{
	char *name = NULL;

	if (!f->pending)
		return fail(f, "frame line without its stack line");
	if (fr->pid != f->pend_pid || fr->id != f->pend_id ||
	    fr->index != f->pend_got)
		return fail(f, "frame %" PRIu32 "/%" PRIu32 " #%" PRIu32 " out of order: expected %" PRIu32 "/%" PRIu32 " #%" PRIu32,
			    fr->pid, fr->id, fr->index, f->pend_pid,
			    f->pend_id, f->pend_got);
	if (!(fr->f.flags & SP_SYMF_HIDDEN) || (f->flags & SP_FOLD_HIDDEN)) {
		name = sp_fold_name(fr->f.function, fr->f.kind, fr->f.origin);
		if (!name)
			return -ENOMEM;
	}
	f->pend[f->pend_got++] = name;
	if (f->pend_got == f->pend_n)
		return finish_stack(f);
	return 0;
}

static int apply_sample(struct sp_fold *f, const struct sp_st_sample *sa)
{
	struct sp_u64slot *st, *pre, *cnt;
	int64_t id;

	st = sp_u64map_find(&f->stacks, key2(sa->pid, sa->id));
	if (!st)
		return fail(f, "sample of undefined stack %" PRIu32 "/%" PRIu32,
			    sa->pid, sa->id);
	pre = sp_u64map_find(&f->prefixes, key2(sa->pid, sa->tid));
	if (!pre) {
		id = make_prefix(f, sa->pid, sa->tid);
		if (id < 0)
			return (int)id;
		pre = sp_u64map_get(&f->prefixes, key2(sa->pid, sa->tid), NULL);
		if (!pre)
			return -ENOMEM;
		pre->val = (uint64_t)id;
	}
	cnt = sp_u64map_get(&f->counts, key2((uint32_t)pre->val,
					  (uint32_t)st->val), NULL);
	if (!cnt)
		return -ENOMEM;
	cnt->val += (f->flags & SP_FOLD_WEIGHT) ? sa->weight : 1;
	f->total += (f->flags & SP_FOLD_WEIGHT) ? sa->weight : 1;
	return 0;
}

int sp_fold_apply(struct sp_fold *f, const struct sp_st_rec *rec)
{
	if (f->pending && rec->type != SP_ST_FRAME &&
	    rec->type != SP_ST_UNKNOWN)
		return fail(f, "stack %" PRIu32 "/%" PRIu32 " ends after %" PRIu32 " of its %" PRIu32 " frames",
			    f->pend_pid, f->pend_id, f->pend_got, f->pend_n);
	switch (rec->type) {
	case SP_ST_COMM:
		return apply_comm(f, &rec->u.comm);
	case SP_ST_STACK:
		return apply_stack(f, &rec->u.stack);
	case SP_ST_FRAME:
		return apply_frame(f, &rec->u.frame);
	case SP_ST_SAMPLE:
		return apply_sample(f, &rec->u.sample);
	default:
		return 0;
	}
}

/* Output */

struct line {
	char *s;
	uint64_t count;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->s, y->s);
}

static void lines_free(struct line *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(l[i].s);
	free(l);
}

/* The counted stacks as "prefix;folded" strings, sorted. */
static int collect(struct sp_fold *f, struct line **out, size_t *nout)
{
	struct line *l = calloc(f->counts.n ? f->counts.n : 1, sizeof(*l));
	size_t n = 0;
	uint32_t i;

	if (!l)
		return -ENOMEM;
	for (i = 0; i < f->counts.nslots; i++) {
		const struct sp_u64slot *c = &f->counts.slots[i];
		const char *pre, *st;

		if (!c->used)
			continue;
		pre = f->strs.strs[c->key >> 32];
		st = f->strs.strs[(uint32_t)c->key];
		if (asprintf(&l[n].s, "%s%s%s", pre, *st ? ";" : "", st) < 0) {
			lines_free(l, n);
			return -ENOMEM;
		}
		l[n++].count = c->val;
	}
	qsort(l, n, sizeof(*l), line_cmp);
	*out = l;
	*nout = n;
	return 0;
}

int sp_fold_write(struct sp_fold *f, struct sp_out *out)
{
	struct line *l;
	size_t n, i;
	int r;

	r = collect(f, &l, &n);
	if (r)
		return r;
	for (i = 0; !r && i < n; i++)
		r = sp_out_printf(out, "%s %" PRIu64 "\n", l[i].s, l[i].count);
	lines_free(l, n);
	return r;
}

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
	qsort(fn, nfn, sizeof(*fn), by_self);
	r = write_table(out, "self", fn, nfn, n, f->total);
	if (!r)
		r = sp_out_write(out, "\n", 1);
	qsort(fn, nfn, sizeof(*fn), by_total);
	if (!r)
		r = write_table(out, "total", fn, nfn, n, f->total);
out:
	free(fn);
	sp_strtab_release(&names);
	return r;
}
