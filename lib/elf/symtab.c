/* SPDX-License-Identifier: MIT */
/* symtab.c: ELF function symbols, ranked where looked up, by address. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/search.h"
#include "base/symrule.h"
#include "symtab.h"

struct lazy;

struct sp_symtab {
	struct sp_sym *syms;	/* sorted by start, one per start; lazy:
				   bucket b's from syms[first[b]] on */
	size_t n;		/* winners; lazy: candidates */
	struct lazy *lz;	/* NULL: ranked whole */
	struct sp_symtab *more;	/* lazy: symbols added since (PLT stubs) */
};

/* Leading underscores: a library's internal aliases have more of them. */
static size_t underscores(const char *name)
{
	return strspn(name, "_");
}

/*
 * Of the symbols at one address the first wins: global over weak over
 * local, sized over unsized, then (as perf chooses) the fewest leading
 * underscores, so that glibc's clone3 stands for its aliases __clone3 and
 * __GI___clone3; then the largest, then by name, so the choice is stable.
 */
static int sym_cmp(const void *a, const void *b)
{
	const struct sp_sym *x = a, *y = b;
	size_t ux, uy;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	ux = underscores(x->name);
	uy = underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * A candidate for sorting, packed so that ranking need not read its
 * symbol again: in address order those reads would go all over a large
 * table, a cache miss each.  ref is its name's offset in the string
 * table; with O_INDEX (a symbol from an array, or one whose size does not
 * fit) the index of the symbol in its source, read again when ranked.
 */
struct order {
	uint64_t start;
	uint32_t ref;
	uint32_t w;		/* O_* flags, rank, and size (span unsized) */
};

#define O_SIZE		0x0fffffffu	/* the size, or unsized the span */
#define O_UNSIZED	0x10000000u
#define O_INDEX		0x20000000u	/* ref is an index: read it again */
#define O_RANK_SHIFT	30

/*
 * Sort v by start: least significant digit first, 11 bits a pass, skipping
 * the digits every key shares.  Stable, so equal starts keep their order.
 * Linear in n: a large symbol table (node's .symtab holds 78,000 function
 * symbols) costs a few passes over it instead of n log n comparisons.
 * Returns the sorted array (v or tmp).
 */
static struct order *radix_sort(struct order *v, struct order *tmp, size_t n)
{
	uint64_t differ = 0;
	unsigned shift;
	size_t i;

	for (i = 1; i < n; i++)
		differ |= v[i].start ^ v[0].start;
	for (shift = 0; shift < 64; shift += 11) {
		size_t count[2048] = { 0 }, pos = 0, c;
		struct order *swap;

		if (!((differ >> shift) & 0x7ff))
			continue;
		for (i = 0; i < n; i++)
			count[(v[i].start >> shift) & 0x7ff]++;
		for (i = 0; i < 2048; i++) {
			c = count[i];
			count[i] = pos;
			pos += c;
		}
		for (i = 0; i < n; i++)
			tmp[count[(v[i].start >> shift) & 0x7ff]++] = v[i];
		swap = v;
		v = tmp;
		tmp = swap;
	}
	return v;
}

/*
 * Where the candidates come from: an array of symbols, or an ELF symbol
 * table read in place, so that only the winners are ever copied.
 */
struct source {
	const struct sp_sym *v;		/* an array, or NULL: ... */
	Elf *e;				/* ... the ELF symbol table syms */
	Elf_Data *syms;
	int native;			/* syms is an Elf64_Sym array */
	const char *str;		/* its string table, NUL-terminated, */
	size_t strsz;			/* NULL: ask elf_strptr() */
	size_t strndx;
};

/*
 * A table read from an ELF file is ranked where it is looked up: its
 * candidates are grouped by address into buckets of about BUCKET_FILL,
 * and a bucket is sorted and ranked when a lookup first needs it.  A
 * recording asks for a few dozen addresses of a binary of 100,000
 * functions (node): it pays for one pass over the symbol table and for
 * the buckets it uses, not for sorting all of it.
 */
#define BUCKET_FILL	16
#define BUCKET_BITS	20		/* at most 2^20 buckets */
#define NOT_RANKED	UINT32_MAX

struct lazy {
	struct source src;
	struct order *ord;	/* the candidates, bucket by bucket */
	uint32_t *first;	/* [nb + 1]: b's are ord[first[b]..first[b + 1]) */
	uint32_t *won;		/* [nb]: b's winners; NOT_RANKED: not yet */
	uint64_t lo;		/* the least start */
	unsigned shift;		/* a's bucket: (a - lo) >> shift */
	uint32_t nb;
};

static const char *elf_name(const struct source *src, size_t off)
{
	if (!src->str)
		return elf_strptr(src->e, src->strndx, off);
	return off < src->strsz ? src->str + off : NULL;
}

/*
 * How far an unsized symbol at vaddr of section shndx reaches: to the end
 * of that section, at most SP_SYM_UNSIZED_SPAN; 0 when it is at the end.
 * A section index that says nothing (absolute, escaped, not allocated, not
 * holding vaddr) leaves it SP_SYM_UNSIZED_SPAN.
 */
static uint32_t unsized_span(Elf *e, size_t shndx, uint64_t vaddr)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	uint64_t left;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE ||
	    !(scn = elf_getscn(e, shndx)) || !gelf_getshdr(scn, &sh) ||
	    !(sh.sh_flags & SHF_ALLOC) || vaddr < sh.sh_addr ||
	    vaddr - sh.sh_addr > sh.sh_size)
		return SP_SYM_UNSIZED_SPAN;
	left = sh.sh_size - (vaddr - sh.sh_addr);
	return left < SP_SYM_UNSIZED_SPAN ? (uint32_t)left :
	       SP_SYM_UNSIZED_SPAN;
}

/*
 * Symbol i of an ELF table as a candidate: 1, or 0 when it is not one (not
 * a defined function, no name, padding, an unsized one at its section's
 * very end).  Without check, i is known to be one: its name is not read.
 * *name_off, unless NULL, gets the offset of its name.
 */
static int elf_candidate(const struct source *src, uint32_t i,
			 struct sp_sym *out, int check, uint32_t *name_off)
{
	const char *name;
	uint32_t span = 0;
	GElf_Sym s;
	int st, bind;

	if (src->native) {
		if (i >= src->syms->d_size / sizeof(Elf64_Sym))
			return 0;
		s = ((const Elf64_Sym *)src->syms->d_buf)[i];
	} else if (i > INT_MAX || !gelf_getsym(src->syms, (int)i, &s)) {
		return 0;
	}
	st = GELF_ST_TYPE(s.st_info);
	if ((st != STT_FUNC && st != STT_GNU_IFUNC) ||
	    s.st_shndx == SHN_UNDEF || !s.st_value)
		return 0;
	name = elf_name(src, s.st_name);
	if (check && (!name || !*name || sp_sym_is_padding(name)))
		return 0;
	if (!s.st_size) {
		span = unsized_span(src->e, s.st_shndx, s.st_value);
		if (!span)
			return 0;	/* holds nothing */
	}
	bind = GELF_ST_BIND(s.st_info);
	*out = (struct sp_sym){ .start = s.st_value, .size = s.st_size,
		.name = name, .span = span,
		.rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2 };
	if (name_off)
		*name_off = s.st_name;
	return 1;
}

static int wanted(const struct sp_sym *s)
{
	return s->name && *s->name && !sp_sym_is_padding(s->name);
}

/* Candidate i of src, its name at offset name, as an order entry. */
static struct order pack(const struct sp_sym *c, uint32_t i, uint32_t name)
{
	uint32_t size = c->size ? (uint32_t)c->size : c->span;

	if (c->size > O_SIZE || (!c->size && c->span > O_SIZE) ||
	    c->rank > 2 || c->flags || c->origin)
		return (struct order){ c->start, (uint32_t)i, O_INDEX };
	return (struct order){ c->start, name,
		size | (c->size ? 0 : O_UNSIZED) |
		(uint32_t)c->rank << O_RANK_SHIFT };
}

/* The candidate o of src, which its table's reading found to be one. */
static void candidate(const struct source *src, const struct order *o,
		      struct sp_sym *out)
{
	if (src->v) {
		*out = src->v[o->ref];
	} else if (o->w & O_INDEX) {
		if (!elf_candidate(src, o->ref, out, 0, NULL))
			out->name = NULL;	/* cannot be: not wanted */
	} else {
		*out = (struct sp_sym){ .start = o->start,
			.name = elf_name(src, o->ref),
			.rank = (uint8_t)(o->w >> O_RANK_SHIFT) };
		if (o->w & O_UNSIZED)
			out->span = o->w & O_SIZE;
		else
			out->size = o->w & O_SIZE;
	}
}

/*
 * The best of the m candidates of g, all at one start, into *best: the
 * least by sym_cmp of those wanted.  0 when none is.
 */
static int best_of(const struct source *src, const struct order *g, size_t m,
		   struct sp_sym *best)
{
	struct sp_sym c;
	size_t i;
	int any = 0;

	for (i = 0; i < m; i++) {
		candidate(src, &g[i], &c);
		if (!wanted(&c) || (any && sym_cmp(&c, best) >= 0))
			continue;
		*best = c;
		any = 1;
	}
	if (any && !best->size &&
	    (!best->span || best->span > SP_SYM_UNSIZED_SPAN))
		best->span = SP_SYM_UNSIZED_SPAN;
	return any;
}

/*
 * The table of the winners among n candidates of src (the least of each
 * address by sym_cmp), sorted by address.  ord holds room for 2 * n,
 * its first n the candidates; it is freed.  NULL when there are none or
 * memory ran out.
 */
static struct sp_symtab *rank(const struct source *src, struct order *ord,
			      size_t n)
{
	struct order *sorted;
	struct sp_symtab *t;
	size_t i, j, k = 0, starts = 0;

	if (!n || !(t = calloc(1, sizeof(*t)))) {
		free(ord);
		return NULL;
	}
	sorted = radix_sort(ord, ord + n, n);
	for (i = 0; i < n; i++)
		if (!i || sorted[i].start != sorted[i - 1].start)
			starts++;
	if (!(t->syms = malloc(starts * sizeof(*t->syms)))) {
		free(ord);
		free(t);
		return NULL;
	}
	sp_prefault(t->syms, starts * sizeof(*t->syms));
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && sorted[j].start == sorted[i].start; j++)
			;
		if (best_of(src, sorted + i, j - i, &t->syms[k]))
			k++;
	}
	free(ord);
	t->n = k;
	if (!k) {
		sp_symtab_free(t);
		return NULL;
	}
	return t;
}

/* Sort the m candidates of g by start, in place. */
static void sort_starts(struct order *g, size_t m)
{
	struct order *tmp, *sorted, x;
	size_t i, j;

	if (m <= 32 || !(tmp = malloc(m * sizeof(*tmp)))) {
		/* few (or no memory for more): by insertion */
		for (i = 1; i < m; i++) {
			x = g[i];
			for (j = i; j > 0 && g[j - 1].start > x.start; j--)
				g[j] = g[j - 1];
			g[j] = x;
		}
		return;
	}
	sorted = radix_sort(g, tmp, m);
	if (sorted != g)
		memcpy(g, sorted, m * sizeof(*g));
	free(tmp);
}

/* Rank bucket b of lazy t, once: its winners from syms[first[b]] on. */
static void rank_bucket(struct sp_symtab *t, uint32_t b)
{
	struct lazy *lz = t->lz;
	struct order *g = lz->ord + lz->first[b];
	size_t m = lz->first[b + 1] - lz->first[b], i, j;
	uint32_t k = 0;

	if (lz->won[b] != NOT_RANKED)
		return;
	sort_starts(g, m);
	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && g[j].start == g[i].start; j++)
			;
		if (best_of(&lz->src, g + i, j - i,
			    &t->syms[lz->first[b] + k]))
			k++;
	}
	lz->won[b] = k;
}

/*
 * The lazy table of the n candidates of src at ord (which it takes and
 * frees): bucketed by address, none ranked yet.  NULL when out of memory.
 */
static struct sp_symtab *lazy_new(const struct source *src, struct order *ord,
				  size_t n)
{
	struct sp_symtab *t = calloc(1, sizeof(*t));
	struct lazy *lz = calloc(1, sizeof(*lz));
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned bits = 0, nbits = 0;
	uint32_t b;
	size_t i;

	if (!t || !lz)
		goto fail;
	for (i = 0; i < n; i++) {
		lo = ord[i].start < lo ? ord[i].start : lo;
		hi = ord[i].start > hi ? ord[i].start : hi;
	}
	while (nbits < BUCKET_BITS && ((size_t)BUCKET_FILL << nbits) < n)
		nbits++;
	if (hi > lo)
		bits = 64 - (unsigned)__builtin_clzll(hi - lo);
	lz->src = *src;
	lz->lo = lo;
	lz->shift = bits > nbits ? bits - nbits : 0;
	if (lz->shift > 63)
		lz->shift = 63;	/* nbits 0: two buckets at most */
	lz->nb = (uint32_t)((hi - lo) >> lz->shift) + 1;	/* <= 2^nbits, or 2 */
	lz->first = calloc((size_t)lz->nb + 1, sizeof(*lz->first));
	lz->won = malloc((size_t)lz->nb * sizeof(*lz->won));
	lz->ord = malloc(n * sizeof(*lz->ord));
	t->syms = malloc(n * sizeof(*t->syms));
	if (!lz->first || !lz->won || !lz->ord || !t->syms)
		goto fail;
	/* counts, then where each bucket starts, then each in its place */
	for (i = 0; i < n; i++)
		lz->first[((ord[i].start - lo) >> lz->shift) + 1]++;
	for (b = 0; b < lz->nb; b++) {
		lz->first[b + 1] += lz->first[b];
		lz->won[b] = lz->first[b];
	}
	for (i = 0; i < n; i++)
		lz->ord[lz->won[(ord[i].start - lo) >> lz->shift]++] = ord[i];
	for (b = 0; b < lz->nb; b++)
		lz->won[b] = NOT_RANKED;
	free(ord);
	t->n = n;
	t->lz = lz;
	return t;
fail:
	if (lz) {
		free(lz->first);
		free(lz->won);
		free(lz->ord);
	}
	if (t)
		free(t->syms);
	free(lz);
	free(t);
	free(ord);
	return NULL;
}

/* Room for the sort of n candidates, NULL when out of memory. */
static struct order *order_alloc(size_t n)
{
	struct order *ord;

	if (n > SIZE_MAX / (2 * sizeof(struct order)) ||
	    !(ord = malloc((n ? 2 * n : 1) * sizeof(struct order))))
		return NULL;
	sp_prefault(ord, (n ? 2 * n : 1) * sizeof(struct order));
	return ord;
}

struct sp_symtab *sp_symtab_from(const struct sp_sym *v, size_t n)
{
	struct source src = { .v = v };
	struct order *ord;
	size_t i, got = 0;

	if (n > UINT32_MAX || !(ord = order_alloc(n)))
		return NULL;
	for (i = 0; i < n; i++)
		if (wanted(&v[i]))
			ord[got++] = (struct order){ v[i].start, (uint32_t)i,
						     O_INDEX };
	return rank(&src, ord, got);
}

/*
 * Rank the new candidates alone and merge the two tables: at an address
 * both hold, the better of the two winners wins, as it would have had
 * they all been ranked together.  Adding a binary's PLT stubs costs their
 * own sort, not the symbol table's again.
 */
int sp_symtab_add(struct sp_symtab *t, const struct sp_sym *v, size_t n)
{
	struct sp_symtab *add;
	struct sp_sym *syms, pick;
	size_t i, j = 0, k, both = 0;

	if (!n)
		return 0;
	if (t->lz && t->more)
		return sp_symtab_add(t->more, v, n);
	if (!(add = sp_symtab_from(v, n))) {
		/* none wanted, or out of memory: tell the two apart */
		for (i = 0; i < n; i++)
			if (wanted(&v[i]))
				return -ENOMEM;
		return 0;
	}
	if (t->lz) {
		/* searched beside the table, which stays as it was read */
		t->more = add;
		return 0;
	}
	/* addresses both tables hold, which the merge makes one */
	for (i = 0; i < t->n && j < add->n; ) {
		if (t->syms[i].start < add->syms[j].start) {
			i++;
		} else if (add->syms[j].start < t->syms[i].start) {
			j++;
		} else {
			both++;
			i++;
			j++;
		}
	}
	/*
	 * Room at the end of the table and a merge from the back: a large
	 * binary's table (78,000 functions in node) is not copied again.
	 */
	if (add->n > SIZE_MAX / sizeof(*syms) - t->n ||
	    !(syms = realloc(t->syms, (t->n + add->n - both) * sizeof(*syms)))) {
		sp_symtab_free(add);
		return -ENOMEM;
	}
	t->syms = syms;
	i = t->n;
	j = add->n;
	k = t->n + add->n - both;
	while (j > 0) {
		const struct sp_sym *a = i ? &syms[i - 1] : NULL;
		const struct sp_sym *b = &add->syms[j - 1];

		if (!a || b->start > a->start) {
			pick = *b;
			j--;
		} else if (a->start > b->start) {
			pick = *a;
			i--;
		} else {
			pick = sym_cmp(a, b) <= 0 ? *a : *b;
			i--;
			j--;
		}
		syms[--k] = pick;
	}
	t->n = t->n + add->n - both;
	sp_symtab_free(add);
	return 0;
}

/*
 * The string table of symbol section sh, for reading names in place when
 * it can be trusted whole (a string table, not compressed, ending in a
 * NUL); else src->str stays NULL and elf_strptr() checks each name.
 */
static void string_table(struct source *src, const GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_getscn(src->e, sh->sh_link);
	Elf_Data *d;
	GElf_Shdr ssh;

	src->strndx = sh->sh_link;
	if (!scn || !gelf_getshdr(scn, &ssh) || ssh.sh_type != SHT_STRTAB ||
	    (ssh.sh_flags & SHF_COMPRESSED) || !(d = elf_getdata(scn, NULL)) ||
	    !d->d_buf || !d->d_size || d->d_size != ssh.sh_size ||
	    ((const char *)d->d_buf)[d->d_size - 1])
		return;
	src->str = d->d_buf;
	src->strsz = d->d_size;
}

struct sp_symtab *sp_symtab_read(Elf *e, GElf_Word type)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		struct source src = { .e = e };
		struct order *ord;
		struct sp_sym s;
		GElf_Shdr sh;
		size_t n, i, got = 0;
		uint32_t name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    !sh.sh_entsize)
			continue;
		src.syms = elf_getdata(scn, NULL);
		if (!src.syms)
			return NULL;
		string_table(&src, &sh);
		src.native = src.syms->d_type == ELF_T_SYM &&
			     gelf_getclass(e) == ELFCLASS64;
		n = sh.sh_size / sh.sh_entsize;
		if (n > UINT32_MAX || !(ord = malloc((n ? n : 1) * sizeof(*ord))))
			return NULL;
		sp_prefault(ord, (n ? n : 1) * sizeof(*ord));
		/*
		 * Names are read when a bucket is ranked, but the first
		 * candidate must be wanted: a table is never empty.
		 */
		for (i = 0; i < n; i++)
			if (elf_candidate(&src, (uint32_t)i, &s, !got, &name))
				ord[got++] = pack(&s, (uint32_t)i, name);
		if (!got) {
			free(ord);
			return NULL;
		}
		return lazy_new(&src, ord, got);
	}
	return NULL;
}

void sp_symtab_free(struct sp_symtab *t)
{
	if (!t)
		return;
	if (t->lz) {
		free(t->lz->ord);
		free(t->lz->first);
		free(t->lz->won);
		free(t->lz);
	}
	sp_symtab_free(t->more);
	free(t->syms);
	free(t);
}

/* The winner of a table ranked whole with the last start <= vaddr. */
static const struct sp_sym *whole_last(const struct sp_symtab *t,
				       uint64_t vaddr)
{
	size_t k = SP_COUNT_LE(t->syms, t->n, start, vaddr);

	return k ? &t->syms[k - 1] : NULL;
}

/*
 * The same of a lazy table, ranking the buckets it looks into: vaddr's,
 * and below it while they hold no winner.  A lookup fills the table in,
 * which is why it is not const here.
 */
static const struct sp_sym *lazy_last(struct sp_symtab *t, uint64_t vaddr)
{
	struct lazy *lz = t->lz;
	uint64_t b;

	if (vaddr < lz->lo)
		return NULL;
	b = (vaddr - lz->lo) >> lz->shift;
	if (b >= lz->nb)
		b = lz->nb - 1;
	for (;; b--) {
		const struct sp_sym *w = t->syms + lz->first[b];
		size_t k;

		rank_bucket(t, (uint32_t)b);
		k = SP_COUNT_LE(w, lz->won[b], start, vaddr);
		if (k)
			return &w[k - 1];
		if (!b)
			return NULL;
	}
}

/* The winner with the last start <= vaddr, of the table and its additions. */
static const struct sp_sym *last(const struct sp_symtab *t, uint64_t vaddr)
{
	const struct sp_sym *s, *m;

	if (!t->lz)
		return whole_last(t, vaddr);
	s = lazy_last((struct sp_symtab *)t, vaddr);
	if (!t->more || !(m = whole_last(t->more, vaddr)))
		return s;
	if (!s || m->start > s->start)
		return m;
	/* at one address, the better of the two, the table's on a tie */
	return m->start == s->start && sym_cmp(m, s) < 0 ? m : s;
}

size_t sp_symtab_count(const struct sp_symtab *t)
{
	size_t n = 0, i;
	uint32_t b;

	if (!t || !t->lz)
		return t ? t->n : 0;
	for (b = 0; b < t->lz->nb; b++) {
		rank_bucket((struct sp_symtab *)t, b);
		n += t->lz->won[b];
	}
	for (i = 0; t->more && i < t->more->n; i++) {
		const struct sp_sym *s = lazy_last((struct sp_symtab *)t,
						   t->more->syms[i].start);

		if (!s || s->start != t->more->syms[i].start)
			n++;	/* not an address both hold */
	}
	return n;
}

const struct sp_sym *sp_symtab_find(const struct sp_symtab *t, uint64_t vaddr)
{
	const struct sp_sym *s = t ? last(t, vaddr) : NULL;

	if (!s || vaddr - s->start >= (s->size ? s->size : s->span))
		return NULL;
	return s;
}

const struct sp_sym *sp_symtab_at(const struct sp_symtab *t, uint64_t vaddr)
{
	const struct sp_sym *s = t ? last(t, vaddr) : NULL;

	return s && s->start == vaddr ? s : NULL;
}

static const void *find(void *t, uint64_t vaddr)
{
	return sp_symtab_find(t, vaddr);
}

const struct sp_sym *sp_symtab_lookup(const struct sp_symtab *t,
				      uint64_t vaddr, int precise,
				      uint64_t *at)
{
	return sp_sym_pick(find, (void *)t, vaddr, precise, at);
}
