/* SPDX-License-Identifier: MIT */
/* dwarfinfo.c: addresses to inline chains with files and lines, via libdw. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "base/search.h"
#include "base/grow.h"
#include "dwarfinfo.h"
#include "dwline.h"
#include "dwslice.h"
#include "base/hashtab.h"

struct cu_range {
	uint64_t lo, hi;	/* [lo, hi) */
	Dwarf_Off off;		/* of the CU DIE */
};

/*
 * What is kept of one CU looked into: its out-of-line functions (off is
 * the function's DIE) and, once a line is asked for, its line table.
 */
struct cu_fns {
	struct cu_range *fns;
	size_t n, cap;
	struct sp_dwline *lines;
	int lines_read;		/* lines is what reading it gave */
};

/*
 * The inlined instances and lexical blocks of a function, read once into a
 * tree when the function has been asked about often enough: an
 * interpreter's main loop, thousands of DIEs, is then walked once and not
 * again for each of its addresses.  Siblings keep the order of their DIEs.
 */
struct inl_node {
	Dwarf_Off off;		/* its DIE */
	uint32_t child, next;	/* nodes; NO_NODE for none */
	uint32_t r0, nr;	/* its ranges: rng[r0, r0 + nr) */
	int inlined;		/* an inlined instance, else a lexical block */
};

struct inl_tree {
	struct inl_node *v;
	size_t n, cap;
	uint64_t (*rng)[2];	/* [lo, hi) */
	size_t nrng, caprng;
};

#define NO_NODE		UINT32_MAX
#define TREE_AFTER	8		/* lookups of a function before its tree */
#define TREE_MAX	(1u << 22)	/* nodes or ranges: past it, no tree */

struct sp_dwarf {
	Dwarf *dw;
	struct sp_dwslice *slice;	/* compressed DWARF read in part */
	int indexed;
	Dwarf_Aranges *ar;		/* libdw's .debug_aranges, owned by dw */
	int aranges;			/* 1: ar answers; -1: it did not */
	struct cu_range *ranges;	/* CUs, sorted */
	size_t n, cap;
	struct sp_u64map cuindex;	/* CU DIE offset -> cus[] */
	struct cu_fns *cus;		/* function indexes of CUs looked into */
	size_t ncus, capcus;
	unsigned units;
	struct sp_dwline_secs secs;	/* what line tables are read from */
	int secs_found;			/* 1: secs; -1: libdw reads lines */
	struct sp_u64map fnseen;	/* function DIE -> lookups, or its tree */
	struct inl_tree *trees;
	size_t ntrees, captrees;
};

/* sp_dwarf.fnseen values: how often asked, or which tree */
#define SEEN_TREE	(1ull << 63)	/* the rest: trees[] */
#define SEEN_NEVER	(1ull << 62)	/* too large, or out of memory */

struct sp_dwarf *sp_dwarf_open(Elf *e)
{
	struct sp_dwarf *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->slice = sp_dwslice_open(e);
	d->dw = d->slice ? sp_dwslice_dwarf(d->slice)
			 : dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!d->dw) {
		free(d);
		return NULL;
	}
	return d;
}

void sp_dwarf_free(struct sp_dwarf *d)
{
	if (!d)
		return;
	if (d->slice)
		sp_dwslice_free(d->slice);
	else
		dwarf_end(d->dw);
	free(d->ranges);
	while (d->ncus--) {
		free(d->cus[d->ncus].fns);
		sp_dwline_free(d->cus[d->ncus].lines);
	}
	free(d->cus);
	sp_u64map_release(&d->cuindex);
	while (d->ntrees--) {
		free(d->trees[d->ntrees].v);
		free(d->trees[d->ntrees].rng);
	}
	free(d->trees);
	sp_u64map_release(&d->fnseen);
	free(d);
}

unsigned sp_dwarf_units(const struct sp_dwarf *d)
{
	/* by .debug_aranges, only the CUs looked into were read */
	if (!d->slice && !d->indexed)
		return (unsigned)d->ncus;
	return d->units;
}

void sp_dwarf_inflated(const struct sp_dwarf *d, size_t *done, size_t *total)
{
	*done = *total = 0;
	if (d->slice)
		sp_dwslice_size(d->slice, done, total);
}

static int range_push(struct cu_range **v, size_t *n, size_t *cap,
		      uint64_t lo, uint64_t hi, Dwarf_Off off)
{
	if (lo >= hi)
		return 0;
	if (sp_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = (struct cu_range){ lo, hi, off };
	return 0;
}

/*
 * Whether the CU of die is C, whose types hold no functions: a C++ class
 * may hold a function's code (a compiler may put the definition there),
 * a C struct only members, thousands of them under a large header.
 */
static int c_unit(Dwarf_Die *cu)
{
	switch (dwarf_srclang(cu)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case 0x2c:		/* DW_LANG_C17, DWARF 6 */
		return 1;
	default:
		return 0;
	}
}

/*
 * The functions with code under die (a CU, a namespace, a class): their
 * ranges, not their bodies, so indexing reads a small part of the DIEs.
 * types: whether a type may hold functions (not in C).
 */
static int index_functions(struct cu_fns *c, Dwarf_Die *parent, int depth,
			   int types)
{
	Dwarf_Die child;

	if (depth > 16 || dwarf_child(parent, &child))
		return 0;
	do {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;
		int r;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			while ((it = dwarf_ranges(&child, it, &base, &lo, &hi)) > 0)
				if ((r = range_push(&c->fns, &c->n, &c->cap,
						    lo, hi, dwarf_dieoffset(&child))))
					return r;
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (!types)
				break;
			/* fall through */
		case DW_TAG_namespace:
		case DW_TAG_module:
			if ((r = index_functions(c, &child, depth + 1, types)))
				return r;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/*
 * Every CU's ranges, once, from the CU DIEs alone (CUs without .debug_aranges
 * entries too); the functions of a CU are indexed when an address first
 * falls into it, so a large debug file costs only what is looked up.
 */
static void build_index(struct sp_dwarf *d)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	d->indexed = 1;
	while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		if (dwarf_offdie(d->dw, off + hsize, &cu)) {
			d->units++;
			while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0)
				if (range_push(&d->ranges, &d->n, &d->cap, lo, hi,
					       off + hsize))
					return;
		}
		off = next;
	}
	if (d->n > 1)
		qsort(d->ranges, d->n, sizeof(*d->ranges), range_cmp);
}

/* The entry of v (sorted by lo) holding pc, innermost of nested ones. */
static const struct cu_range *range_find(const struct cu_range *v, size_t n,
					 uint64_t pc)
{
	const struct cu_range *best = NULL;
	size_t end = SP_COUNT_LE(v, n, lo, pc), i, k;

	/* ranges rarely overlap; look back a few for the tightest */
	for (i = end, k = 0; i-- > 0 && k < 16; k++)
		if (pc < v[i].hi && (!best || v[i].hi - v[i].lo < best->hi - best->lo))
			best = &v[i];
	return best;
}

/* Is vaddr in the PLT, which the linker makes and no CU describes? */
static int in_plt(Elf *e, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!e || elf_getshdrstrndx(e, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		return name && !strncmp(name, ".plt", 4);
	}
	return 0;
}

/*
 * The CU holding pc: from .debug_aranges (a slice's own reading, or
 * libdw's of a file read whole) while every address so far had an entry
 * there, else from the index of every CU's ranges (which needs all of a
 * slice inflated).  A slice inflates the CU's line table only when lines
 * are asked for.
 */
static int find_cu(struct sp_dwarf *d, uint64_t pc, int lines, Dwarf_Die *cu)
{
	const struct cu_range *r;

	if (d->slice && !d->indexed) {
		Dwarf_Off off;
		int n = sp_dwslice_unit(d->slice, pc, lines, &off);

		if (n >= 0) {
			d->units += n;
			return dwarf_offdie(d->dw, off, cu) ? 0 : -1;
		}
		if (n != -ENOENT || sp_dwslice_whole(d->slice))
			return -1;
		d->units = 0;
	}
	/* the same of a file read whole, through libdw's .debug_aranges */
	if (!d->slice && !d->indexed && d->aranges >= 0) {
		Dwarf_Arange *a;
		Dwarf_Off off;

		if (!d->aranges && !d->ar)
			d->aranges = dwarf_getaranges(d->dw, &d->ar, &(size_t){ 0 }) ||
				     !d->ar ? -1 : 1;
		if (d->aranges > 0 && (a = dwarf_getarange_addr(d->ar, pc)) &&
		    dwarf_getarangeinfo(a, NULL, NULL, &off) == 0)
			return dwarf_offdie(d->dw, off, cu) ? 0 : -1;
		/* the linker's stubs belong to no CU */
		if (d->aranges > 0 && in_plt(dwarf_getelf(d->dw), pc))
			return -1;
		d->aranges = -1;	/* an address it lacks: all CUs from now */
	}
	if (!d->indexed)
		build_index(d);
	r = range_find(d->ranges, d->n, pc);
	return r && dwarf_offdie(d->dw, r->off, cu) ? 0 : -1;
}

/* The function index of cu, built on first use; NULL when out of memory. */
static struct cu_fns *cu_functions(struct sp_dwarf *d, Dwarf_Die *cu)
{
	struct sp_u64slot *slot;
	struct cu_fns *c;
	int is_new;

	slot = sp_u64map_get(&d->cuindex, dwarf_dieoffset(cu), &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return &d->cus[slot->val];
	if (SP_GROW(d->cus, d->capcus, d->ncus + 1)) {
		sp_u64map_del(&d->cuindex, dwarf_dieoffset(cu));
		return NULL;
	}
	slot->val = d->ncus;
	c = &d->cus[d->ncus++];
	memset(c, 0, sizeof(*c));
	index_functions(c, cu, 0, !c_unit(cu));
	if (c->n > 1)
		qsort(c->fns, c->n, sizeof(*c->fns), range_cmp);
	return c;
}

/*
 * The line table of cu, read on first use; NULL when libdw is to answer
 * (it reads what is not read here) or the CU has none.
 */
static const struct sp_dwline *cu_lines(struct sp_dwarf *d, struct cu_fns *c,
					Dwarf_Die *cu)
{
	Dwarf_Attribute a;
	Dwarf_Word off;
	uint8_t addr_size, off_size;
	const char *err;

	if (c->lines_read)
		return c->lines;
	if (!d->secs_found)
		d->secs_found = sp_dwline_sections(dwarf_getelf(d->dw),
						   &d->secs) ? -1 : 1;
	if (d->secs_found < 0 ||
	    dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &a), &off) ||
	    !dwarf_diecu(cu, &(Dwarf_Die){ 0 }, &addr_size, &off_size))
		return NULL;	/* libdw answers (or finds no lines) */
	c->lines = sp_dwline_read(&d->secs, off, addr_size,
				  dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)),
				  &err);
	c->lines_read = c->lines || err;	/* out of memory: try again */
	return c->lines;
}

/*
 * The inlined instances holding pc inside the function DIE fn, outermost
 * first, into chain (at most max).  Returns how many.  At each level the
 * first inlined instance or lexical block holding pc is followed.
 */
static int inline_walk(Dwarf_Die *fn, uint64_t pc, Dwarf_Die *chain, int max)
{
	Dwarf_Die die = *fn, child;
	int n = 0, depth = 0;

	while (depth++ < 256 && dwarf_child(&die, &child) == 0) {
		int found = 0;

		do {
			int tag = dwarf_tag(&child);

			if (tag != DW_TAG_inlined_subroutine &&
			    tag != DW_TAG_lexical_block)
				continue;
			if (dwarf_haspc(&child, pc) != 1)
				continue;
			if (tag == DW_TAG_inlined_subroutine && n < max)
				chain[n++] = child;
			die = child;
			found = 1;
			break;
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return n;
}

/*
 * Add the inlined instances and lexical blocks under parent to t, and
 * under them, levels deep at most; *first gets the first of them.
 * Returns 0, or -1 when t would grow past TREE_MAX or memory ran out.
 */
static int tree_add(struct inl_tree *t, Dwarf_Die *parent, int levels,
		    uint32_t *first)
{
	Dwarf_Die child;
	uint32_t prev = NO_NODE, k, under;

	*first = NO_NODE;
	if (levels <= 0 || dwarf_child(parent, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_lexical_block)
			continue;
		if (t->n >= TREE_MAX || SP_GROW(t->v, t->cap, t->n + 1))
			return -1;
		k = (uint32_t)t->n++;
		t->v[k] = (struct inl_node){ .off = dwarf_dieoffset(&child),
			.child = NO_NODE, .next = NO_NODE,
			.r0 = (uint32_t)t->nrng,
			.inlined = tag == DW_TAG_inlined_subroutine };
		/* the ranges dwarf_haspc() tries, up to an error */
		while ((it = dwarf_ranges(&child, it, &base, &lo, &hi)) > 0) {
			if (t->nrng >= TREE_MAX ||
			    SP_GROW(t->rng, t->caprng, t->nrng + 1))
				return -1;
			t->rng[t->nrng][0] = lo;
			t->rng[t->nrng++][1] = hi;
		}
		t->v[k].nr = (uint32_t)(t->nrng - t->v[k].r0);
		if (prev == NO_NODE)
			*first = k;
		else
			t->v[prev].next = k;
		prev = k;
		if (tree_add(t, &child, levels - 1, &under))
			return -1;
		t->v[k].child = under;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* inline_walk() through tree t of a function, its first node at k. */
static int inline_tree(Dwarf *dw, const struct inl_tree *t, uint32_t k,
		       uint64_t pc, Dwarf_Die *chain, int max)
{
	int n = 0;

	while (k != NO_NODE) {
		const struct inl_node *v = &t->v[k];
		uint32_t r;

		for (r = v->r0; r < v->r0 + v->nr; r++)
			if (pc >= t->rng[r][0] && pc < t->rng[r][1])
				break;
		if (r == v->r0 + v->nr) {
			k = v->next;
			continue;
		}
		if (v->inlined && n < max && dwarf_offdie(dw, v->off, &chain[n]))
			n++;
		k = v->child;
	}
	return n;
}

/*
 * inline_walk() of function fn, through its tree once it has been asked
 * about TREE_AFTER times.
 */
static int inline_path(struct sp_dwarf *d, Dwarf_Die *fn, uint64_t pc,
		       Dwarf_Die *chain, int max)
{
	struct sp_u64slot *slot;
	struct inl_tree t = { 0 };
	uint32_t first;
	int is_new;

	slot = sp_u64map_get(&d->fnseen, dwarf_dieoffset(fn), &is_new);
	if (slot && is_new)
		slot->val = 0;
	if (slot && (slot->val & SEEN_TREE)) {
		/* the first node added is the first under fn */
		const struct inl_tree *have = &d->trees[slot->val & ~SEEN_TREE];

		return inline_tree(d->dw, have, have->n ? 0 : NO_NODE, pc,
				   chain, max);
	}
	if (!slot || (slot->val & SEEN_NEVER) || ++slot->val < TREE_AFTER)
		return inline_walk(fn, pc, chain, max);
	if (SP_GROW(d->trees, d->captrees, d->ntrees + 1) ||
	    tree_add(&t, fn, 256, &first)) {
		free(t.v);
		free(t.rng);
		slot->val = SEEN_NEVER;
		return inline_walk(fn, pc, chain, max);
	}
	d->trees[d->ntrees] = t;
	slot->val = SEEN_TREE | d->ntrees++;
	return inline_tree(d->dw, &t, first, pc, chain, max);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s;

	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die,
						DW_AT_MIPS_linkage_name, &a));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return s;
}

/* The line the function of die is declared at (its abstract origin's). */
static uint32_t decl_line(Dwarf_Die *die)
{
	int ln;

	return dwarf_decl_line(die, &ln) || ln <= 0 ? 0 : (uint32_t)ln;
}

static const char *call_file(const struct sp_dwline *lines, Dwarf_Die *cu,
			     Dwarf_Die *inl)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;

	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &idx))
		return NULL;
	if (lines)
		return sp_dwline_file(lines, idx);
	if (dwarf_getsrcfiles(cu, &files, &nfiles) || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static uint32_t call_line(Dwarf_Die *inl)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &v) ||
	    v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

int sp_dwarf_lookup(struct sp_dwarf *d, uint64_t pc, unsigned flags,
		    struct sp_src_frame *out, unsigned max)
{
	Dwarf_Die cu, fn, chain[64];
	const struct sp_dwline *lines = NULL;
	struct cu_fns *fns;
	const struct cu_range *r;
	const char *file = NULL;
	uint32_t line = 0;
	unsigned n = 0;
	int nchain = 0, i, have_fn = 0;

	if (!max)
		return 0;
	if (find_cu(d, pc, !!(flags & SP_DWARF_LINES), &cu))
		return 0;
	fns = cu_functions(d, &cu);
	if (!fns)
		return -ENOMEM;
	r = range_find(fns->fns, fns->n, pc);
	if (r && dwarf_offdie(d->dw, r->off, &fn))
		have_fn = 1;
	if ((flags & SP_DWARF_LINES) && (lines = cu_lines(d, fns, &cu))) {
		if (sp_dwline_find(lines, pc, &file, &line))
			file = NULL, line = 0;
	} else if (flags & SP_DWARF_LINES) {
		Dwarf_Line *l = dwarf_getsrc_die(&cu, pc);
		int ln;

		if (l) {
			file = dwarf_linesrc(l, NULL, NULL);
			if (!dwarf_lineno(l, &ln) && ln > 0)
				line = (uint32_t)ln;
		}
	}
	if (have_fn)
		nchain = inline_path(d, &fn, pc, chain, 64);
	/* innermost first; each caller executes the call site of its callee */
	for (i = nchain; i-- > 0 && n < max; ) {
		if (flags & SP_DWARF_INLINES)
			out[n++] = (struct sp_src_frame){
				.function = die_name(&chain[i]),
				.file = file, .line = line,
				.decl_line = flags & SP_DWARF_LINES ?
					     decl_line(&chain[i]) : 0,
				.inlined = 1 };
		if (flags & SP_DWARF_LINES) {
			file = call_file(lines, &cu, &chain[i]);
			line = call_line(&chain[i]);
		}
	}
	if (have_fn && n < max) {
		out[n++] = (struct sp_src_frame){ .function = die_name(&fn),
			.file = file, .line = line,
			.decl_line = flags & SP_DWARF_LINES ? decl_line(&fn) : 0 };
	} else if (!have_fn && (file || line)) {
		/* lines, but no function DIE (assembly): the position alone */
		out[n++] = (struct sp_src_frame){ .file = file, .line = line };
	}
	return (int)n;
}
