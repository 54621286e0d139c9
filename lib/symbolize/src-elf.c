/* SPDX-License-Identifier: MIT */
/* src-elf.c: frames of mapped ELF files: symbol tables, debug files, DWARF. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/grow.h"
#include "base/symrule.h"
#include "elf/debuginfo.h"
#include "elf/dwarfinfo.h"
#include "elf/locate.h"
#include "elf/symcache.h"
#include "source.h"

/*
 * What stands behind one ELF file, found on first use: its separate debug
 * file, MiniDebugInfo, DWARF.  The file is the one with the recorded
 * build-id (elf/locate.h), or that build-id's debug file itself.
 */
struct src_module {
	struct sp_elf *elf;
	int loaded;
	int has_symtab;
	int is_debug;		/* elf is a build-id debug file (SP_FROM_DEBUG) */
	struct sp_debugfile *dbg;	/* build-id or debuglink file */
	uint8_t dbg_origin;		/* SP_FO_BUILDID, SP_FO_DEBUGLINK */
	struct sp_debugfile *mini;
	struct sp_dwarf *dwarf;
	uint8_t dwarf_origin;
	const struct sp_gopclntab *go;	/* a Go program's table (src-go.c) */
	/*
	 * Found on first use; opened only for an address the symbol cache
	 * does not answer: MiniDebugInfo, DWARF.
	 */
	int opened;
	int dwarf_tried;		/* sp_dwarf_open() was called */
	Elf *dwarf_elf;			/* the ELF with the module's DWARF */
	/* the symbol cache of the module's build-id (elf/symcache.h) */
	uint32_t key;			/* 0: answers not kept */
	struct sp_symcache *cache;
	uint64_t hits;			/* answers from the cache */
	uint64_t computed;		/* answers not from the cache */
};

void src_elf_release(struct src_elf *e)
{
	size_t i;

	for (i = 0; i < e->nmodules; i++) {
		sp_dwarf_free(e->modules[i]->dwarf);
		sp_symcache_free(e->modules[i]->cache);
		free(e->modules[i]);
	}
	free(e->cache_dir);
	free(e->modules);
	sp_u64map_release(&e->index);
	sp_debug_finder_free(e->finder);
	for (i = 0; i < e->ndebug_dirs; i++)
		free(e->debug_dirs[i]);
	free(e->debug_dirs);
}

int src_elf_add_debug_dir(struct src_elf *e, const char *dir)
{
	char *d;

	if (SP_GROW(e->debug_dirs, e->cap_dirs, e->ndebug_dirs + 1))
		return -ENOMEM;
	d = strdup(dir);
	if (!d)
		return -ENOMEM;
	e->debug_dirs[e->ndebug_dirs++] = d;
	return 0;
}

static struct sp_debug_finder *finder(struct sp_symbolizer *s)
{
	struct src_elf *e = &s->elf;
	size_t i;

	if (e->finder)
		return e->finder;
	e->finder = sp_debug_finder_new(!!(s->flags & SP_SYM_NO_SYSTEM_DEBUG));
	if (e->finder)
		sp_debug_finder_set_debuginfod(e->finder,
			sp_locator_debuginfod(sp_procs_locator(s->procs), NULL));
	for (i = 0; e->finder && i < e->ndebug_dirs; i++)
		if (sp_debug_finder_add_dir(e->finder, e->debug_dirs[i])) {
			sp_debug_finder_free(e->finder);
			e->finder = NULL;
		}
	return e->finder;
}

void src_elf_stats(const struct src_elf *e, struct sp_symbolize_stats *st)
{
	size_t i;

	st->dwarf_units = st->dwarf_inflated = st->dwarf_compressed = 0;
	for (i = 0; i < e->nmodules; i++) {
		size_t done, total;

		if (!e->modules[i]->dwarf)
			continue;
		st->dwarf_units += sp_dwarf_units(e->modules[i]->dwarf);
		sp_dwarf_inflated(e->modules[i]->dwarf, &done, &total);
		st->dwarf_inflated += done;
		st->dwarf_compressed += total;
	}
	st->debug_files = e->finder ? sp_debug_finder_opened(e->finder) : 0;
}

static struct src_module *module_of(struct src_elf *e, struct sp_elf *elf)
{
	struct sp_u64slot *slot;
	struct src_module *m;
	int is_new;

	slot = sp_u64map_get(&e->index, (uint64_t)(uintptr_t)elf, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return e->modules[slot->val];
	if (SP_GROW(e->modules, e->cap_modules, e->nmodules + 1))
		goto nomem;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->elf = elf;
	slot->val = e->nmodules;
	e->modules[e->nmodules++] = m;
	return m;
nomem:
	sp_u64map_del(&e->index, (uint64_t)(uintptr_t)elf);
	return NULL;
}

/*
 * How this code names an address, for the symbol cache's key: one more
 * whenever a change here (or in what it calls: symbol ranking, DWARF,
 * demangling) answers differently for the same file, so that no cache
 * written before is used.
 */
#define ANSWER_GENERATION 2u

/*
 * What the answers of a module depend on besides its build-id, for its
 * symbol cache: this code, the symbolizer's flags and which tables were
 * found.  0 when they are not to be kept: Go code is named partly by
 * src-go.c.
 */
static uint32_t module_key(const struct sp_symbolizer *s,
			   const struct src_module *mod)
{
	uint32_t key = 1 | ANSWER_GENERATION << 16;

	if (mod->go)
		return 0;
	key |= (s->flags & (SP_SYM_NO_LINES | SP_SYM_NO_INLINES |
			    SP_SYM_NO_DEMANGLE)) << 1;
	key |= (uint32_t)mod->is_debug << 4;
	key |= (uint32_t)mod->has_symtab << 5;
	key |= (uint32_t)mod->dbg_origin << 6;
	if (mod->dbg && sp_elf_has_section(sp_debugfile_elf(mod->dbg),
					   ".symtab"))
		key |= 1u << 11;
	if (mod->dwarf_elf)
		key |= (mod->dwarf_elf == sp_elf_handle(mod->elf) ? 1u : 2u) << 12;
	return key;
}

/*
 * The symbol cache's variant of the symbolizer's settings (symcache.h):
 * answers without lines, say, are kept beside the usual ones, so that
 * tools naming frames for outputs that show no lines (sp-fold's folded
 * stacks) and sp-symbolize do not replace each other's files.
 */
static const char *cache_variant(const struct sp_symbolizer *s, char *buf,
				 size_t size)
{
	snprintf(buf, size, "%s%s%s",
		 s->flags & SP_SYM_NO_LINES ? "-nolines" : "",
		 s->flags & SP_SYM_NO_INLINES ? "-noinline" : "",
		 s->flags & SP_SYM_NO_DEMANGLE ? "-nodemangle" : "");
	return *buf ? buf + 1 : NULL;
}

/*
 * Find what stands behind a module (its debug file, where its DWARF is)
 * and open its symbol cache; the costly parts wait for module_open().
 */
static int module_load(struct sp_symbolizer *s, struct src_module *mod,
		       const struct sp_map *m)
{
	struct sp_debug_finder *f = finder(s);
	Elf *e = sp_elf_handle(mod->elf);
	const uint8_t *bid;
	size_t bid_len;
	int want_dwarf = (s->flags & (SP_SYM_NO_LINES | SP_SYM_NO_INLINES)) !=
			 (SP_SYM_NO_LINES | SP_SYM_NO_INLINES);
	Elf *dwarf_elf = NULL;
	char path[4096], variant[64];
	const char *why;
	uint64_t off;
	int r;

	mod->loaded = 1;
	s->st.modules++;
	if (!f)
		return -ENOMEM;
	bid_len = sp_elf_get_build_id(mod->elf, &bid);
	/* the binary was not found, its debug file was: it is all there is */
	mod->is_debug = m->from == SP_FROM_DEBUG;
	if (m->kind == SP_MAP_FILE && !mod->is_debug)
		mod->go = sp_elf_gopclntab(mod->elf);
	mod->has_symtab = sp_elf_has_section(e, ".symtab");
	if (want_dwarf && sp_elf_has_section(e, ".debug_info"))
		dwarf_elf = e;
	if (m->kind == SP_MAP_FILE && !mod->is_debug &&
	    (!mod->has_symtab || (want_dwarf && !dwarf_elf))) {
		mod->dbg = sp_debug_find(f, m->name, e, bid, bid_len);
		if (mod->dbg) {
			/* by build-id, on disk or from debuginfod */
			mod->dbg_origin = sp_debugfile_how(mod->dbg) ==
					  SP_DEBUG_LINK ? SP_FO_DEBUGLINK :
					  SP_FO_BUILDID;
			if (!dwarf_elf && want_dwarf &&
			    sp_elf_has_section(sp_debugfile_elf(mod->dbg),
					       ".debug_info"))
				dwarf_elf = sp_debugfile_elf(mod->dbg);
		}
	}
	mod->dwarf_elf = dwarf_elf;
	if (!s->elf.cache_dir || m->kind != SP_MAP_FILE || !bid_len)
		return 0;
	mod->key = module_key(s, mod);
	if (!mod->key ||
	    sp_symcache_path(s->elf.cache_dir, bid, bid_len,
			     cache_variant(s, variant, sizeof(variant)), path,
			     sizeof(path)))
		return 0;
	r = sp_symcache_open(path, bid, bid_len, mod->key, &mod->cache, &why,
			     &off);
	if (!r)
		s->st.symcache_files++;
	else if (r == -ESTALE)
		s->st.symcache_stale++;
	else if (r == -EILSEQ)
		s->st.symcache_damaged++;
	return r == -ENOMEM ? r : 0;
}

/* Open what module_load() found for the symbol tables: MiniDebugInfo. */
static void module_open(struct sp_symbolizer *s, struct src_module *mod)
{
	struct sp_debug_finder *f = finder(s);
	Elf *e = sp_elf_handle(mod->elf);

	mod->opened = 1;
	if (f && !mod->has_symtab && !(mod->dbg && sp_debugfile_symtab(mod->dbg)))
		mod->mini = sp_debug_mini(f, sp_elf_path(mod->elf), e);
}

/*
 * The module's DWARF, opened when an address first needs it (opening a
 * compressed file inflates its string and range sections whole).
 */
static struct sp_dwarf *module_dwarf(struct sp_symbolizer *s,
				     struct src_module *mod)
{
	Elf *e = sp_elf_handle(mod->elf);

	if (mod->dwarf_tried || !mod->dwarf_elf)
		return mod->dwarf;
	mod->dwarf_tried = 1;
	mod->dwarf = sp_dwarf_open(mod->dwarf_elf);
	mod->dwarf_origin = mod->dwarf_elf != e ? mod->dbg_origin :
			    mod->is_debug ? SP_FO_BUILDID : SP_FO_SYMTAB;
	if (mod->dwarf)
		s->st.dwarf_opens++;
	return mod->dwarf;
}

/*
 * A search of a module's symbol tables, in the order of symbolize.h: its
 * .symtab, its debug file's, MiniDebugInfo (which holds what .dynsym
 * lacks: a sized .dynsym symbol wins over it), its .dynsym.
 */
struct modsearch {
	struct src_module *mod;
	unsigned origin;	/* of the symbol found */
};

static const void *module_find(void *arg, uint64_t vaddr)
{
	struct modsearch *ms = arg;
	struct src_module *mod = ms->mod;
	const struct sp_sym *dyn = NULL, *sym;
	enum sp_frame_origin o;

	sym = sp_symtab_find(sp_elf_symtab(mod->elf, &o), vaddr);
	/* a PLT stub: only the file's own code and relocations know it */
	if (sym && (sym->flags & SP_SYM_SYNTH)) {
		ms->origin = sym->origin;
		return sym;
	}
	if (sym && o == SP_FO_SYMTAB) {
		ms->origin = mod->is_debug ? SP_FO_BUILDID : SP_FO_SYMTAB;
		return sym;
	}
	dyn = sym;
	if (mod->dbg && (sym = sp_symtab_find(sp_debugfile_symtab(mod->dbg),
					      vaddr))) {
		ms->origin = mod->dbg_origin;
		return sym;
	}
	if (mod->mini && !(dyn && dyn->size) &&
	    (sym = sp_symtab_find(sp_debugfile_symtab(mod->mini), vaddr))) {
		ms->origin = SP_FO_MINIDEBUG;
		return sym;
	}
	ms->origin = SP_FO_DYNSYM;
	return dyn;
}

static void *table(struct sp_symbolizer *s, const struct sp_symq *q, int *err)
{
	const struct sp_map *m = q->map;
	struct src_module *mod;

	if (!m || !m->elf || (m->kind != SP_MAP_FILE && m->kind != SP_MAP_IMAGE))
		return NULL;
	mod = module_of(&s->elf, m->elf);
	if (!mod) {
		*err = -ENOMEM;
		return NULL;
	}
	if (!mod->loaded && (*err = module_load(s, mod, m)))
		return NULL;
	return mod;
}

/* The name to show for a symbol of the module. */
static const char *symbol_name(struct sp_symbolizer *s,
			       const struct src_module *mod, const char *raw,
			       const char **symbol)
{
	if (mod->go)
		return src_go_symbol_name(s, raw, symbol);
	return sp_sym_display_name(s, raw, symbol);
}

/*
 * What a frame in sym is called: its name as symbol_name() shows it; a PLT
 * stub's is its target's shown so, then "@plt", as perf writes it.
 * *symbol as symbol_name() sets it.
 */
static const char *sym_name(struct sp_symbolizer *s,
			    const struct src_module *mod,
			    const struct sp_sym *sym, const char **symbol)
{
	size_t len = strlen(sym->name);
	const char *base, *target, *shown;

	if (!(sym->flags & SP_SYM_PLT) || len <= 4)
		return symbol_name(s, mod, sym->name, symbol);
	base = sp_sym_internf(s, "%.*s", (int)(len - 4), sym->name);
	target = base ? symbol_name(s, mod, base, symbol) : NULL;
	shown = target ? sp_sym_internf(s, "%s@plt", target) : NULL;
	/* the file's name of a demangled target: "_Znwm@plt" */
	if (shown && symbol && *symbol &&
	    !(*symbol = sp_sym_intern(s, sym->name)))
		return NULL;
	return shown;
}

/* Whether sym is start-up glue, which SP_SYM_GLUE_NAME_ONLY names alone. */
static int is_glue(struct sp_symbolizer *s, const struct src_module *mod,
		   const struct sp_sym *sym)
{
	const char *name = sym->flags & SP_SYM_PLT ? NULL :
			   symbol_name(s, mod, sym->name, NULL);

	return name && sp_symbol_hidden(name);
}

/*
 * The n frames of a cache entry in out, their strings made the
 * symbolizer's.  A frame the file names nothing at is kept with an empty
 * name: it is named here by the mapping q asks through, as lookup() names
 * it.
 */
static int from_cache(struct sp_symbolizer *s, struct src_module *mod,
		      const struct sp_symq *q, struct sp_frame *out, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (out[i].origin == SP_FO_NONE && !*out[i].function)
			out[i].function = sp_sym_offset_name(s, q->map->name,
							     q->vaddr);
		else
			out[i].function = sp_sym_intern(s, out[i].function);
		if (!out[i].function ||
		    (out[i].symbol &&
		     !(out[i].symbol = sp_sym_intern(s, out[i].symbol))) ||
		    (out[i].file && !(out[i].file = sp_sym_intern(s, out[i].file))))
			return -ENOMEM;
	}
	s->st.resolved++;
	s->st.symcache_hits++;
	mod->hits++;
	return (int)n;
}

/*
 * The inline chain of q->vaddr, innermost first, outermost the function:
 * from DWARF with files and lines, the function's name from the symbol
 * tables when they have it.  Always one frame at least: an address no
 * symbol holds is named by its offset in the file.
 */
static int lookup(struct sp_symbolizer *s, void *table,
		  const struct sp_symq *q, struct sp_frame *out, unsigned max)
{
	struct src_module *mod = table;
	const struct sp_map *m = q->map;
	struct sp_src_frame src[SP_CHAIN_MAX];
	struct modsearch ms = { .mod = mod, .origin = SP_FO_NONE };
	const struct sp_sym *sym;
	unsigned origin, dflags = 0, n = 0, name_only = 0;
	uint64_t at;
	struct sp_frame cf;
	int nsrc = 0, i;

	/* glue named alone answers only who wants no more of it */
	if (mod->cache && (n = sp_symcache_find(mod->cache, q->vaddr,
						q->precise, out, max)) &&
	    (!(out[n - 1].flags & SP_SYMF_NAME_ONLY) ||
	     (s->flags & SP_SYM_GLUE_NAME_ONLY)))
		return from_cache(s, mod, q, out, n);
	n = 0;
	if (!mod->opened)
		module_open(s, mod);
	if (mod->key)
		mod->computed++;
	sym = sp_sym_pick(module_find, &ms, q->vaddr, q->precise, &at);
	/* Go code no symbol names: Go's own table does (src-go.c) */
	if (!sym && mod->go && src_go_names(mod->go, q))
		return 0;
	origin = sym ? ms.origin : SP_FO_NONE;
	if (m->kind == SP_MAP_IMAGE && sym)
		origin = SP_FO_VDSO;
	if (!(s->flags & SP_SYM_NO_INLINES))
		dflags |= SP_DWARF_INLINES;
	if (!(s->flags & SP_SYM_NO_LINES))
		dflags |= SP_DWARF_LINES;
	if (dflags && mod->dwarf_elf && (s->flags & SP_SYM_GLUE_NAME_ONLY) &&
	    sym && is_glue(s, mod, sym)) {
		dflags = 0;
		name_only = SP_SYMF_NAME_ONLY;
	}
	/* room for the symbol tables' frame after DWARF's */
	if (dflags && max > 1 && module_dwarf(s, mod))
		nsrc = sp_dwarf_lookup(mod->dwarf, at, dflags, src,
				       (max < SP_CHAIN_MAX ? max : SP_CHAIN_MAX) - 1);
	if (nsrc < 0)
		return nsrc;
	s->st.resolved++;
	for (i = 0; i < nsrc; i++) {
		int last = i == nsrc - 1 && !src[i].inlined;

		memset(&cf, 0, sizeof(cf));
		if (last && sym) {
			cf.function = sym_name(s, mod, sym, &cf.symbol);
			cf.origin = (uint8_t)origin;
		} else if (src[i].function) {
			cf.function = sp_sym_display_name(s, src[i].function,
							  &cf.symbol);
			cf.origin = mod->dwarf_origin;
		} else if (last) {
			break;	/* lines but no name: the symbol frame below */
		} else {
			cf.function = sp_sym_intern(s, "[inlined]");
			cf.origin = mod->dwarf_origin;
		}
		if (!cf.function)
			return -ENOMEM;
		cf.kind = src[i].inlined ? SP_FK_INLINE : SP_FK_NATIVE;
		if (src[i].file && !(cf.file = sp_sym_intern(s, src[i].file)))
			return -ENOMEM;
		cf.line = src[i].line;
		cf.decl_line = src[i].decl_line;
		out[n++] = cf;
		if (last)
			goto done;
	}
	/* no DWARF frame for the function itself: the symbol tables' name */
	memset(&cf, 0, sizeof(cf));
	cf.kind = SP_FK_NATIVE;
	if (nsrc > 0 && src[nsrc - 1].file && !src[nsrc - 1].inlined &&
	    !src[nsrc - 1].function) {
		cf.file = sp_sym_intern(s, src[nsrc - 1].file);
		cf.line = src[nsrc - 1].line;
	}
	if (sym) {
		cf.function = sym_name(s, mod, sym, &cf.symbol);
		cf.origin = (uint8_t)origin;
		cf.flags = (uint16_t)name_only;
		/* no DWARF line: a Go program's own table has it */
		if (!cf.file && mod->go &&
		    src_go_lines(s, mod->go, q, &cf))
			return -ENOMEM;
	} else {
		cf.function = sp_sym_offset_name(s, m->kind == SP_MAP_IMAGE ?
						 "[vdso]" : m->name, q->vaddr);
		cf.origin = SP_FO_NONE;
	}
	if (!cf.function)
		return -ENOMEM;
	out[n++] = cf;
done:
	return (int)n;
}

const struct sp_source sp_src_elf = {
	.name = "elf",
	.table = table,
	.lookup = lookup,
	.cacheable = 1,
};

/*
 * The answers of mod to keep: those the symbolizer holds, then those of
 * its cache file it did not ask for again.  An address no symbol names is
 * named by its offset in the mapping, whose name is the process's, not
 * the file's: its last frame is kept with an empty name (from_cache()
 * names it again), so that a later run need not open the file to find
 * that it names nothing there.  Into *out, *n of them, their frames in
 * *buf (both malloc'd).
 */
static int module_answers(struct sp_symbolizer *s, struct src_module *mod,
			  struct sp_symcache_answer **out, size_t *n,
			  struct sp_frame **buf)
{
	const struct sp_answers *a = sp_sym_answers(s, mod);
	struct sp_symcache_answer *v = NULL;
	struct sp_frame *fr = NULL, *unnamed;
	size_t cap = 0, nv = 0, i, nfr = 0, old = 0, nun = 0, room;
	unsigned p, j, k;
	uint64_t vaddr;
	int precise;

	/* room for the old entries' frames, then the unnamed answers' */
	room = mod->cache ? sp_symcache_nframes(mod->cache) : 0;
	for (p = 0; a && p < 2; p++)
		for (i = 0; i < a->at[p].nslots; i++) {
			const struct sp_u64slot *slot = &a->at[p].slots[i];

			k = (unsigned)(slot->val & 0xff);
			if (slot->used && k &&
			    s->pool[(slot->val >> 8) + k - 1].origin == SP_FO_NONE)
				room += k;
		}
	fr = malloc((room + 1) * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	unnamed = fr + (mod->cache ? sp_symcache_nframes(mod->cache) : 0);
	for (p = 0; a && p < 2; p++)
		for (i = 0; i < a->at[p].nslots; i++) {
			const struct sp_u64slot *slot = &a->at[p].slots[i];
			const struct sp_frame *f;

			if (!slot->used)
				continue;
			f = s->pool + (slot->val >> 8);
			k = (unsigned)(slot->val & 0xff);
			for (j = 0; j < k && f[j].origin != SP_FO_NONE; j++)
				;
			if (!k || k > SP_SYMCACHE_MAX_CHAIN || j + 1 < k)
				continue;
			if (j < k) {	/* the last names nothing: the mapping's */
				memcpy(unnamed + nun, f, k * sizeof(*f));
				unnamed[nun + k - 1].function = "";
				f = unnamed + nun;
				nun += k;
			}
			if (SP_GROW(v, cap, nv + 1))
				goto nomem;
			v[nv++] = (struct sp_symcache_answer){
				.vaddr = slot->key, .precise = (int)p,
				.frames = f, .n = k,
			};
		}
	if (mod->cache)
		old = sp_symcache_count(mod->cache);
	for (i = 0; i < old; i++) {
		k = sp_symcache_entry(mod->cache, i, &vaddr, &precise,
				      fr + nfr, SP_SYMCACHE_MAX_CHAIN);
		if (a && sp_u64map_find(&a->at[!!precise], vaddr))
			continue;
		if (SP_GROW(v, cap, nv + 1))
			goto nomem;
		v[nv++] = (struct sp_symcache_answer){
			.vaddr = vaddr, .precise = precise,
			.frames = fr + nfr, .n = k,
		};
		nfr += k;
	}
	*out = v;
	*n = nv;
	*buf = fr;
	return 0;
nomem:
	free(v);
	free(fr);
	return -ENOMEM;
}

int src_elf_save(struct sp_symbolizer *s)
{
	struct src_elf *e = &s->elf;
	struct sp_symcache_answer *v;
	struct sp_frame *buf;
	const uint8_t *bid;
	char path[4096], vbuf[64];
	const char *variant = cache_variant(s, vbuf, sizeof(vbuf));
	size_t i, n, bid_len;
	int64_t w;
	int r = 0, err;

	for (i = 0; e->cache_dir && i < e->nmodules; i++) {
		struct src_module *mod = e->modules[i];

		if (!mod->key || (!mod->computed && !mod->hits))
			continue;
		bid_len = sp_elf_get_build_id(mod->elf, &bid);
		if (sp_symcache_path(e->cache_dir, bid, bid_len, variant, path,
				     sizeof(path)))
			continue;
		if (!mod->computed) {
			/* needed: the store's trim evicts the least recently */
			utimensat(AT_FDCWD, path, NULL, 0);
			continue;
		}
		err = module_answers(s, mod, &v, &n, &buf);
		if (err) {
			if (!r)
				r = err;
			continue;
		}
		w = n ? sp_symcache_write(path, bid, bid_len, mod->key, v, n) : 0;
		free(v);
		free(buf);
		if (w < 0 && !r)
			r = (int)w;
		if (w > 0) {
			s->st.symcache_written++;
			s->st.symcache_bytes += (uint64_t)w;
		}
	}
	return r;
}
