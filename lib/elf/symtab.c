/* SPDX-License-Identifier: MIT */
/* symtab.c: ELF function symbols, ranked once, searched by address. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/search.h"
#include "base/symrule.h"
#include "symtab.h"

struct sp_symtab {
	struct sp_sym *syms;	/* sorted by start, one per start */
	size_t n;
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

/* A symbol's address and where it is, for sorting. */
struct order {
	uint64_t start;
	size_t i;
};

/*
 * Sort v by start: least significant digit first, 11 bits a pass, skipping
 * the digits every key shares.  Stable, so equal starts keep their order.
 * Linear in n: a large symbol table (node's .symtab holds 185,000 function
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
 * Keep the winner of each address (the least by sym_cmp), sorted by
 * address: t->syms holds n candidates.  NULL, with t freed, when there
 * are none or memory ran out.
 */
static struct sp_symtab *rank(struct sp_symtab *t, size_t n)
{
	struct order *ord, *sorted;
	struct sp_sym *out;
	size_t i, j, k = 0;

	if (!n || n > SIZE_MAX / (2 * sizeof(*ord)) ||
	    !(ord = malloc(2 * n * sizeof(*ord)))) {
		sp_symtab_free(t);
		return NULL;
	}
	if (!(out = malloc(n * sizeof(*out)))) {
		free(ord);
		sp_symtab_free(t);
		return NULL;
	}
	for (i = 0; i < n; i++)
		ord[i] = (struct order){ t->syms[i].start, i };
	sorted = radix_sort(ord, ord + n, n);
	for (i = 0; i < n; i = j) {
		const struct sp_sym *best = &t->syms[sorted[i].i];

		for (j = i + 1; j < n && sorted[j].start == sorted[i].start; j++)
			if (sym_cmp(&t->syms[sorted[j].i], best) < 0)
				best = &t->syms[sorted[j].i];
		out[k++] = *best;
	}
	free(ord);
	free(t->syms);
	t->syms = out;
	for (i = 0; i < k; i++)
		if (!t->syms[i].size && (!t->syms[i].span ||
					 t->syms[i].span > SP_SYM_UNSIZED_SPAN))
			t->syms[i].span = SP_SYM_UNSIZED_SPAN;
	t->n = k;
	return t;
}

static int wanted(const struct sp_sym *s)
{
	return s->name && *s->name && !sp_sym_is_padding(s->name);
}

static struct sp_symtab *alloc(size_t n)
{
	struct sp_symtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->syms = calloc(n ? n : 1, sizeof(*t->syms));
	if (!t->syms) {
		free(t);
		return NULL;
	}
	return t;
}

struct sp_symtab *sp_symtab_from(const struct sp_sym *v, size_t n)
{
	struct sp_symtab *t = alloc(n);
	size_t i, got = 0;

	if (!t)
		return NULL;
	for (i = 0; i < n; i++)
		if (wanted(&v[i]))
			t->syms[got++] = v[i];
	return rank(t, got);
}

/*
 * Rank the new candidates alone and merge the two tables: at an address
 * both hold, the better of the two winners wins, as it would have had
 * they all been ranked together.  Adding a binary's PLT stubs costs their
 * own sort, not the symbol table's again.
 */
int sp_symtab_add(struct sp_symtab *t, const struct sp_sym *v, size_t n)
{
	struct sp_symtab *add = alloc(n);
	struct sp_sym *syms, pick;
	size_t i = 0, j = 0, k, got = 0, both = 0;

	if (!add)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (wanted(&v[i]))
			add->syms[got++] = v[i];
	add = rank(add, got);
	if (!add)
		return 0;
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
	 * binary's table (185,000 symbols in node) is not copied again.
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

struct sp_symtab *sp_symtab_read(Elf *e, GElf_Word type)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		struct sp_symtab *t;
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n, i, got = 0;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			return NULL;
		n = sh.sh_size / sh.sh_entsize;
		t = alloc(n);
		if (!t)
			return NULL;
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;
			uint32_t span = 0;
			int st, bind;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			st = GELF_ST_TYPE(s.st_info);
			if ((st != STT_FUNC && st != STT_GNU_IFUNC) ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || !*name || sp_sym_is_padding(name))
				continue;
			if (!s.st_size) {
				span = unsized_span(e, s.st_shndx, s.st_value);
				if (!span)
					continue;	/* holds nothing */
			}
			bind = GELF_ST_BIND(s.st_info);
			t->syms[got++] = (struct sp_sym){ .start = s.st_value,
				.size = s.st_size, .name = name, .span = span,
				.rank = bind == STB_GLOBAL ? 0 :
					bind == STB_WEAK ? 1 : 2 };
		}
		return rank(t, got);
	}
	return NULL;
}

void sp_symtab_free(struct sp_symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t);
}

size_t sp_symtab_count(const struct sp_symtab *t)
{
	return t ? t->n : 0;
}

const struct sp_sym *sp_symtab_find(const struct sp_symtab *t, uint64_t vaddr)
{
	const struct sp_sym *s;
	size_t lo;

	if (!t)
		return NULL;
	lo = SP_COUNT_LE(t->syms, t->n, start, vaddr);
	if (!lo)
		return NULL;
	s = &t->syms[lo - 1];
	if (vaddr - s->start >= (s->size ? s->size : s->span))
		return NULL;
	return s;
}

const struct sp_sym *sp_symtab_at(const struct sp_symtab *t, uint64_t vaddr)
{
	size_t lo;

	if (!t)
		return NULL;
	lo = SP_COUNT_LE(t->syms, t->n, start, vaddr);
	return lo && t->syms[lo - 1].start == vaddr ? &t->syms[lo - 1] : NULL;
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
