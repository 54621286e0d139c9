/* SPDX-License-Identifier: MIT */
/* symbolize.c: addresses to frames through ELF, DWARF, JIT maps, kallsyms. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/debuginfo.h"
#include "elf/demangle.h"
#include "elf/dwarfinfo.h"
#include "elf/jitdump.h"
#include "base/hashtab.h"
#include "symbolize.h"

#define CHAIN_MAX 64		/* inline depth kept per address */

/* A resolved ELF address: key (elf, vaddr, precise), frames in the pool. */
struct symslot {
	const struct sp_elf *elf;
	uint64_t vaddr;
	uint32_t first, n;	/* of s->pool */
	uint8_t precise;
	uint8_t used;
};

/* A cached frame of an inline chain: everything but the address. */
struct cframe {
	const char *function, *file;
	uint32_t line;
	uint8_t kind, origin;
	uint16_t flags;
};

/* What the symbolizer knows about one ELF file, found on first use. */
struct module {
	const struct sp_elf *elf;
	int loaded;
	int has_symtab;
	int stale;		/* replaced, and no debug file of the recorded ID */
	uint8_t rec_bid[SP_BUILD_ID_MAX];
	size_t rec_len;		/* 0: no build-id was recorded */
	struct sp_debugfile *dbg;	/* build-id or debuglink file */
	uint8_t dbg_origin;		/* SP_FO_BUILDID, SP_FO_DEBUGLINK */
	struct sp_debugfile *mini;
	struct sp_dwarf *dwarf;
	uint8_t dwarf_origin;
	size_t mismatch;	/* index + 1 in s->mismatches, 0 none */
};

struct jitdump_ref {
	uint32_t pid;
	char *path;
	off_t size;		/* when loaded, -1 not yet */
	struct sp_jitdump *j;
};

struct ksym {
	uint64_t start;
	uint64_t size;		/* 0: up to the next symbol */
	const char *name;	/* interned */
	const char *module;	/* interned: "[kernel]", "[ext4]" */
};

struct pmsym {
	uint64_t start, size;
	uint32_t seq;		/* line number: later lines win */
	char *name;
};

struct perfmap {
	uint32_t pid;
	int loaded;
	int snapshot;		/* from the recorder: never reread */
	off_t size;		/* of the file when loaded, -1 absent */
	struct timespec mtime;
	struct pmsym *syms;
	size_t n, cap;
	uint32_t seq;		/* lines read so far */
};

struct sp_symbolizer {
	struct sp_procs *procs;
	char *kallsyms_path;
	char *perf_map_dir;
	struct sp_strtab strs;
	struct sp_u64map threads;	/* pid << 32 | tid -> name string index */
	struct sp_u64map stacks;	/* pid << 32 | id */
	struct sp_u64map pmindex;	/* pid -> perfmaps index */
	struct symslot *syms;
	uint32_t nsyms, nsymslots;
	struct cframe *pool;
	uint32_t npool, cappool;
	unsigned flags;		/* SP_SYM_* */
	struct sp_debug_finder *finder;	/* created on first use */
	char **debug_dirs;
	size_t ndebug_dirs;
	struct sp_u64map modindex;	/* sp_elf pointer -> modules index */
	struct module **modules;
	size_t nmodules, capmodules;
	struct sp_u64map demangled;	/* interned name pointer -> demangled */
	struct sp_mismatch *mismatches;
	size_t nmismatches;
	struct jitdump_ref *jds;
	size_t njds;
	struct sp_frame *out;	/* frames of the last stack */
	size_t capout;
	int kloaded;		/* the table is loaded or was captured */
	int kcaptured;		/* from KSYM records, not a file */
	int ksorted;
	struct ksym *ksyms;
	size_t nksyms, kcap;
	struct perfmap *pms;
	size_t npms, cappms;
	struct sp_symbolize_stats st;
};

/* Hash tables */

static const char *intern(struct sp_symbolizer *s, const char *str)
{
	int64_t i = sp_strtab_intern(&s->strs, str);

	return i < 0 ? NULL : s->strs.strs[i];
}

static const char *internf(struct sp_symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *internf(struct sp_symbolizer *s, const char *fmt, ...)
{
	const char *r;
	va_list ap;
	char *str;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&str, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	r = intern(s, str);
	free(str);
	return r;
}

static uint64_t key2(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}

static uint64_t sym_hash(const struct sp_elf *elf, uint64_t vaddr, int precise)
{
	return sp_hash_u64((uint64_t)(uintptr_t)elf * 31 + vaddr * 2 + (unsigned)precise);
}

static struct symslot *sym_find(struct sp_symbolizer *s,
				const struct sp_elf *elf, uint64_t vaddr,
				int precise)
{
	uint32_t j;

	if (!s->nsymslots)
		return NULL;
	j = (uint32_t)sym_hash(elf, vaddr, precise) & (s->nsymslots - 1);
	while (s->syms[j].used) {
		if (s->syms[j].elf == elf && s->syms[j].vaddr == vaddr &&
		    s->syms[j].precise == precise)
			return &s->syms[j];
		j = (j + 1) & (s->nsymslots - 1);
	}
	return NULL;
}

static int sym_add(struct sp_symbolizer *s, const struct sp_elf *elf,
		   uint64_t vaddr, int precise, uint32_t first, uint32_t n)
{
	uint32_t j;

	if ((s->nsyms + 1) * 2 > s->nsymslots) {
		uint32_t nslots = s->nsymslots ? s->nsymslots * 2 : 1024, i;
		struct symslot *slots = calloc(nslots, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (i = 0; i < s->nsymslots; i++) {
			const struct symslot *e = &s->syms[i];

			if (!e->used)
				continue;
			j = (uint32_t)sym_hash(e->elf, e->vaddr, e->precise) &
			    (nslots - 1);
			while (slots[j].used)
				j = (j + 1) & (nslots - 1);
			slots[j] = *e;
		}
		free(s->syms);
		s->syms = slots;
		s->nsymslots = nslots;
	}
	j = (uint32_t)sym_hash(elf, vaddr, precise) & (s->nsymslots - 1);
	while (s->syms[j].used)
		j = (j + 1) & (s->nsymslots - 1);
	s->syms[j] = (struct symslot){ .elf = elf, .vaddr = vaddr,
		.first = first, .n = n, .precise = (uint8_t)precise,
		.used = 1 };
	s->nsyms++;
	return 0;
}

/* Life */

struct sp_symbolizer *sp_symbolizer_new(struct sp_procs *procs)
{
	struct sp_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->procs = procs;
	s->kallsyms_path = strdup("/proc/kallsyms");
	s->perf_map_dir = strdup("/tmp");
	if (!s->kallsyms_path || !s->perf_map_dir)
		goto err;

	return s;
err:
	sp_symbolizer_free(s);
	return NULL;
}

static void perfmap_clear(struct perfmap *pm)
{
	size_t i;

	for (i = 0; i < pm->n; i++)
		free(pm->syms[i].name);
	free(pm->syms);
	pm->syms = NULL;
	pm->n = pm->cap = 0;
	pm->seq = 0;
	pm->loaded = 0;
}

void sp_symbolizer_free(struct sp_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->npms; i++)
		perfmap_clear(&s->pms[i]);
	free(s->pms);
	for (i = 0; i < s->nmodules; i++) {
		sp_dwarf_free(s->modules[i]->dwarf);
		free(s->modules[i]);
	}
	free(s->modules);
	sp_u64map_release(&s->modindex);
	sp_u64map_release(&s->demangled);
	free(s->mismatches);
	for (i = 0; i < s->njds; i++) {
		free(s->jds[i].path);
		sp_jitdump_free(s->jds[i].j);
	}
	free(s->jds);
	free(s->out);
	free(s->pool);
	sp_debug_finder_free(s->finder);
	for (i = 0; i < s->ndebug_dirs; i++)
		free(s->debug_dirs[i]);
	free(s->debug_dirs);
	free(s->ksyms);
	free(s->syms);
	sp_strtab_release(&s->strs);
	sp_u64map_release(&s->threads);
	sp_u64map_release(&s->stacks);
	sp_u64map_release(&s->pmindex);
	free(s->kallsyms_path);
	free(s->perf_map_dir);
	free(s);
}

static int set_str(char **dst, const char *src)
{
	char *c = strdup(src);

	if (!c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

int sp_symbolizer_set_kallsyms(struct sp_symbolizer *s, const char *path)
{
	return set_str(&s->kallsyms_path, path);
}

int sp_symbolizer_set_perf_map_dir(struct sp_symbolizer *s, const char *dir)
{
	return set_str(&s->perf_map_dir, dir);
}

void sp_symbolizer_set_flags(struct sp_symbolizer *s, unsigned flags)
{
	s->flags = flags;
}

int sp_symbolizer_add_debug_dir(struct sp_symbolizer *s, const char *dir)
{
	char **d = realloc(s->debug_dirs, (s->ndebug_dirs + 1) * sizeof(*d));

	if (!d)
		return -ENOMEM;
	s->debug_dirs = d;
	d[s->ndebug_dirs] = strdup(dir);
	if (!d[s->ndebug_dirs])
		return -ENOMEM;
	s->ndebug_dirs++;
	return 0;
}

static struct sp_debug_finder *finder(struct sp_symbolizer *s)
{
	size_t i;

	if (s->finder)
		return s->finder;
	s->finder = sp_debug_finder_new(!!(s->flags & SP_SYM_NO_SYSTEM_DEBUG));
	for (i = 0; s->finder && i < s->ndebug_dirs; i++)
		if (sp_debug_finder_add_dir(s->finder, s->debug_dirs[i])) {
			sp_debug_finder_free(s->finder);
			s->finder = NULL;
		}
	return s->finder;
}

void sp_symbolizer_stats(const struct sp_symbolizer *s,
			 struct sp_symbolize_stats *st)
{
	size_t i;

	*st = s->st;
	st->dwarf_units = 0;
	for (i = 0; i < s->nmodules; i++)
		if (s->modules[i]->dwarf)
			st->dwarf_units += sp_dwarf_units(s->modules[i]->dwarf);
	st->debug_files = s->finder ? sp_debug_finder_opened(s->finder) : 0;
}

const struct sp_mismatch *sp_symbolizer_mismatches(const struct sp_symbolizer *s,
						   size_t *n)
{
	*n = s->nmismatches;
	return s->mismatches;
}

int sp_symbol_hidden(const char *name)
{
	static const char *const glue[] = {
		"_start", "__libc_start_main", "__libc_start_main_impl",
		"__libc_start_call_main", "start_thread", "clone", "clone3",
	};
	size_t i;

	for (i = 0; i < sizeof(glue) / sizeof(glue[0]); i++)
		if (!strcmp(name, glue[i]))
			return 1;
	return 0;
}

int sp_symbol_python_glue(const char *name)
{
	/* what CPython 3.12/3.13 runs from one Python call to the next */
	static const char *const glue[] = {
		"_PyEval_EvalFrameDefault", "_PyEval_EvalFrame",
		"_PyEval_Vector", "PyEval_EvalCode", "PyEval_EvalCodeEx",
		"py_trampoline_evaluator", "_PyFunction_Vectorcall",
		"PyObject_Vectorcall", "_PyObject_VectorcallTstate",
		"_PyObject_Call", "PyObject_Call", "_PyObject_CallNoArgs",
		"_PyObject_Call_Prepend", "_PyObject_FastCallDictTstate",
		"_PyObject_MakeTpCall", "_PyVectorcall_Call",
		"PyVectorcall_Call", "method_vectorcall", "slot_tp_call",
		"_PyEval_EvalFrameDefault.cold", "_PyInterpreterFrame_GetLine",
	};
	size_t i;

	for (i = 0; i < sizeof(glue) / sizeof(glue[0]); i++)
		if (!strcmp(name, glue[i]))
			return 1;
	return 0;
}

/* Threads */

static struct perfmap *perfmap_of(struct sp_symbolizer *s, uint32_t pid,
				  int create);

static int set_thread(struct sp_symbolizer *s, uint32_t pid, uint32_t tid,
		      const char *name)
{
	int64_t i = sp_strtab_intern(&s->strs, name);
	struct sp_u64slot *slot;
	int is_new;

	if (i < 0)
		return -ENOMEM;
	slot = sp_u64map_get(&s->threads, key2(pid, tid), &is_new);
	if (!slot)
		return -ENOMEM;
	slot->val = (uint64_t)i;
	return 0;
}

static const char *thread_name(const struct sp_symbolizer *s, uint32_t pid,
			       uint32_t tid)
{
	const struct sp_u64slot *slot = sp_u64map_find(&s->threads, key2(pid, tid));

	return slot ? s->strs.strs[slot->val] : NULL;
}

/* Modules */

static struct module *module_of(struct sp_symbolizer *s,
				const struct sp_elf *elf)
{
	struct sp_u64slot *slot;
	struct module *m;
	int is_new;

	slot = sp_u64map_get(&s->modindex, (uint64_t)(uintptr_t)elf, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return s->modules[slot->val];
	if (s->nmodules == s->capmodules) {
		size_t cap = s->capmodules ? s->capmodules * 2 : 64;
		struct module **mm = realloc(s->modules, cap * sizeof(*mm));

		if (!mm)
			goto nomem;
		s->modules = mm;
		s->capmodules = cap;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->elf = elf;
	slot->val = s->nmodules;
	s->modules[s->nmodules++] = m;
	return m;
nomem:
	sp_u64map_del(&s->modindex, (uint64_t)(uintptr_t)elf);
	return NULL;
}

static int note_jitdump(struct sp_symbolizer *s, uint32_t pid,
			const char *path)
{
	struct jitdump_ref *j;
	size_t i;

	for (i = 0; i < s->njds; i++)
		if (s->jds[i].pid == pid && !strcmp(s->jds[i].path, path))
			return 0;
	j = realloc(s->jds, (s->njds + 1) * sizeof(*j));
	if (!j)
		return -ENOMEM;
	s->jds = j;
	j = &s->jds[s->njds];
	*j = (struct jitdump_ref){ .pid = pid, .size = -1 };
	j->path = strdup(path);
	if (!j->path)
		return -ENOMEM;
	s->njds++;
	return 0;
}

/* What an MMAP record says beyond the mapping: its build-id, a jitdump. */
static int apply_mmap(struct sp_symbolizer *s, const struct sp_mmap_rec *m)
{
	const struct sp_proc *proc;
	const struct sp_map *map;
	struct module *mod;

	if (sp_jitdump_is_path(m->filename))
		return note_jitdump(s, m->pid, m->filename);
	if (!m->build_id_size)
		return 0;
	proc = sp_procs_find(s->procs, m->pid);
	map = proc ? sp_proc_map(proc, m->start) : NULL;
	if (!map || !map->elf || map->kind != SP_MAP_FILE)
		return 0;
	mod = module_of(s, map->elf);
	if (!mod)
		return -ENOMEM;
	/* the first recorded ID of a path wins; the file is opened once */
	if (!mod->rec_len && !mod->loaded) {
		mod->rec_len = m->build_id_size > SP_BUILD_ID_MAX ?
			       SP_BUILD_ID_MAX : m->build_id_size;
		memcpy(mod->rec_bid, m->build_id, mod->rec_len);
	}
	return 0;
}

int sp_symbolizer_apply(struct sp_symbolizer *s, const struct sp_rec_hdr *rec,
			struct sp_st_comm *comm)
{
	const struct sp_comm_rec *c = (const void *)rec;
	const struct sp_task_rec *t = (const void *)rec;
	const char *name;
	int r;

	r = sp_procs_apply(s->procs, rec);
	if (r)
		return r;
	switch (rec->type) {
	case SP_REC_MMAP:
		return apply_mmap(s, (const struct sp_mmap_rec *)rec);
	case SP_REC_COMM:
		if (set_thread(s, c->pid, c->tid, c->comm))
			return -ENOMEM;
		if (c->flags & SP_COMM_EXEC) {
			/* a new program: its JIT writes a new perf map */
			struct perfmap *pm = perfmap_of(s, c->pid, 0);

			if (pm)
				perfmap_clear(pm);
		}
		*comm = (struct sp_st_comm){ .time = c->time, .pid = c->pid,
			.tid = c->tid, .name = thread_name(s, c->pid, c->tid),
			.exec = !!(c->flags & SP_COMM_EXEC) };
		return 1;
	case SP_REC_FORK:
		name = thread_name(s, t->ppid, t->ptid);
		if (!name) {
			const struct sp_proc *p = sp_procs_find(s->procs, t->ppid);

			name = p && *sp_proc_comm(p) ? sp_proc_comm(p) : NULL;
		}
		if (!name)
			return 0;
		if (set_thread(s, t->pid, t->tid, name))
			return -ENOMEM;
		*comm = (struct sp_st_comm){ .time = t->time, .pid = t->pid,
			.tid = t->tid, .name = thread_name(s, t->pid, t->tid) };
		return 1;
	case SP_REC_EXIT:
		/* tids are reused: the next one gets its name from its FORK */
		if (t->tid != t->pid)
			sp_u64map_del(&s->threads, key2(t->pid, t->tid));
		return 0;
	default:
		return 0;
	}
}

/* Kernel symbols */

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Read kallsyms once; no table (unreadable, or all addresses hidden) is kept as none. */
static int load_kallsyms(struct sp_symbolizer *s)
{
	size_t cap = 0, i, n;
	char *line = NULL;
	size_t linecap = 0;
	const char *kernel;
	int any_nonzero = 0;
	FILE *fp;

	s->kloaded = 1;
	s->ksorted = 1;
	kernel = intern(s, "[kernel]");
	if (!kernel)
		return -ENOMEM;
	fp = fopen(s->kallsyms_path, "re");
	if (!fp)
		return 0;
	while (getline(&line, &linecap, fp) > 0) {
		char type, *name, *mod, *end;
		unsigned long long addr;
		size_t nl;

		errno = 0;
		addr = strtoull(line, &end, 16);
		if (end == line || *end != ' ' || errno)
			continue;
		type = end[1];
		if (!type || end[2] != ' ')
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = end + 3;
		nl = strcspn(name, "\t\n");
		mod = NULL;
		if (name[nl] == '\t') {
			mod = name + nl + 1;
			mod[strcspn(mod, "\n")] = 0;
		}
		name[nl] = 0;
		if (!*name)
			continue;
		if (addr)
			any_nonzero = 1;
		if (s->nksyms == cap) {
			struct ksym *k;

			cap = cap ? cap * 2 : 65536;
			k = realloc(s->ksyms, cap * sizeof(*k));
			if (!k)
				goto nomem;
			s->ksyms = k;
		}
		s->ksyms[s->nksyms].start = addr;
		s->ksyms[s->nksyms].size = 0;
		s->ksyms[s->nksyms].name = intern(s, name);
		s->ksyms[s->nksyms].module = mod && *mod ? intern(s, mod) : kernel;
		if (!s->ksyms[s->nksyms].name || !s->ksyms[s->nksyms].module)
			goto nomem;
		s->nksyms++;
	}
	free(line);
	fclose(fp);
	if (!any_nonzero) {
		/* kptr_restrict: every address reads as zero */
		free(s->ksyms);
		s->ksyms = NULL;
		s->nksyms = 0;
		return 0;
	}
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), ksym_cmp);
	for (i = n = 0; i < s->nksyms; i++)
		if (!n || s->ksyms[n - 1].start != s->ksyms[i].start)
			s->ksyms[n++] = s->ksyms[i];
	s->nksyms = n;
	return 0;
nomem:
	free(line);
	fclose(fp);
	return -ENOMEM;
}

static void ksyms_sort(struct sp_symbolizer *s)
{
	size_t i, n;

	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), ksym_cmp);
	for (i = n = 0; i < s->nksyms; i++)
		if (!n || s->ksyms[n - 1].start != s->ksyms[i].start)
			s->ksyms[n++] = s->ksyms[i];
	s->nksyms = n;
	s->ksorted = 1;
}

int sp_symbolizer_add_ksym(struct sp_symbolizer *s, uint64_t start,
			   uint64_t size, const char *name)
{
	const char *mod = "[kernel]", *bra;
	size_t len = strlen(name);
	char *copy = NULL;
	struct ksym *k;

	if (!s->kcaptured) {
		/* a table loaded from a file gives way to the captured one */
		free(s->ksyms);
		s->ksyms = NULL;
		s->nksyms = s->kcap = 0;
		s->kcaptured = s->kloaded = 1;
	}
	if (s->nksyms == s->kcap) {
		size_t cap = s->kcap ? s->kcap * 2 : 256;

		k = realloc(s->ksyms, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		s->ksyms = k;
		s->kcap = cap;
	}
	/* "nvme_irq [nvme]": the module in brackets after the name */
	bra = strstr(name, " [");
	if (bra && len && name[len - 1] == ']') {
		copy = strndup(name, (size_t)(bra - name));
		if (!copy)
			return -ENOMEM;
		mod = bra + 1;
		name = copy;
	}
	k = &s->ksyms[s->nksyms];
	k->start = start;
	k->size = size;
	k->name = intern(s, name);
	k->module = intern(s, mod);
	free(copy);
	if (!k->name || !k->module)
		return -ENOMEM;
	s->nksyms++;
	s->ksorted = 0;
	return 0;
}

int sp_symbolize_kernel(struct sp_symbolizer *s, uint64_t addr, int precise,
			struct sp_frame *f)
{
	uint64_t look = precise || !addr ? addr : addr - 1;
	size_t lo = 0, hi;
	int r;

	if (!s->kloaded && (r = load_kallsyms(s)))
		return r;
	if (!s->ksorted)
		ksyms_sort(s);
	*f = (struct sp_frame){ .addr = addr, .kind = SP_FK_KERNEL,
		.origin = SP_FO_NONE };
	s->st.frames++;
	hi = s->nksyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ksyms[mid].start <= look)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || (s->ksyms[lo - 1].size &&
		    look - s->ksyms[lo - 1].start >= s->ksyms[lo - 1].size)) {
		if (!s->nksyms)
			s->st.no_kallsyms++;
		s->st.unresolved++;
		f->function = f->module = intern(s, "[kernel]");
		return f->function ? 0 : -ENOMEM;
	}
	f->function = s->ksyms[lo - 1].name;
	f->module = s->ksyms[lo - 1].module;
	f->origin = SP_FO_KALLSYMS;
	return 0;
}

/* Perf maps */

static struct perfmap *perfmap_of(struct sp_symbolizer *s, uint32_t pid,
				  int create)
{
	struct sp_u64slot *slot;
	int is_new;

	if (!create) {
		slot = sp_u64map_find(&s->pmindex, pid);
		return slot ? &s->pms[slot->val] : NULL;
	}
	slot = sp_u64map_get(&s->pmindex, pid, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return &s->pms[slot->val];
	if (s->npms == s->cappms) {
		size_t cap = s->cappms ? s->cappms * 2 : 16;
		struct perfmap *p = realloc(s->pms, cap * sizeof(*p));

		if (!p) {
			sp_u64map_del(&s->pmindex, pid);
			return NULL;
		}
		s->pms = p;
		s->cappms = cap;
	}
	slot->val = s->npms;
	memset(&s->pms[s->npms], 0, sizeof(s->pms[0]));
	s->pms[s->npms].pid = pid;
	s->pms[s->npms].size = -1;
	return &s->pms[s->npms++];
}

static int pmsym_cmp(const void *a, const void *b)
{
	const struct pmsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Parse "START SIZE name": hex without 0x (tolerated), name to the end. */
static int parse_pm_line(char *line, struct pmsym *sym)
{
	char *end, *name;

	errno = 0;
	sym->start = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno)
		return -1;
	line = end + 1;
	sym->size = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno || !sym->size)
		return -1;
	name = end + 1;
	name[strcspn(name, "\r\n")] = 0;
	if (!*name)
		return -1;
	sym->name = name;
	return 0;
}

static int perfmap_read(struct sp_symbolizer *s, struct perfmap *pm,
			FILE *fp);

static int perfmap_load(struct sp_symbolizer *s, struct perfmap *pm)
{
	char path[4096];
	struct stat sb;
	FILE *fp;
	int fd;

	perfmap_clear(pm);
	pm->loaded = 1;
	pm->size = -1;
	snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map",
		 s->perf_map_dir, pm->pid);
	/* O_NONBLOCK: a fifo planted in /tmp must not hang us */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return 0;
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return 0;
	}
	pm->size = sb.st_size;
	pm->mtime = sb.st_mtim;
	return perfmap_read(s, pm, fp);
}

/* Read the lines of fp (closed here) into pm. */
static int perfmap_read(struct sp_symbolizer *s, struct perfmap *pm, FILE *fp)
{
	char *line = NULL;
	size_t linecap = 0;

	s->st.perf_map_loads++;
	while (getline(&line, &linecap, fp) > 0) {
		struct pmsym sym;

		pm->seq++;
		if (parse_pm_line(line, &sym))
			continue;
		if (pm->n == pm->cap) {
			size_t cap = pm->cap ? pm->cap * 2 : 1024;
			struct pmsym *p = realloc(pm->syms, cap * sizeof(*p));

			if (!p)
				goto nomem;
			pm->syms = p;
			pm->cap = cap;
		}
		sym.seq = pm->seq;
		sym.name = strdup(sym.name);
		if (!sym.name)
			goto nomem;
		pm->syms[pm->n++] = sym;
	}
	free(line);
	fclose(fp);
	qsort(pm->syms, pm->n, sizeof(*pm->syms), pmsym_cmp);
	return 0;
nomem:
	free(line);
	fclose(fp);
	return -ENOMEM;
}

/* The entry holding addr; of overlapping ones (reused JIT memory) the last written. */
static const struct pmsym *perfmap_find(const struct perfmap *pm, uint64_t addr)
{
	const struct pmsym *best = NULL;
	size_t lo = 0, hi = pm->n, i, scanned;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, scanned = 0; i-- > 0 && scanned < 64; scanned++) {
		const struct pmsym *e = &pm->syms[i];

		if (addr - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

static int perfmap_lookup(struct sp_symbolizer *s, uint32_t pid,
			  uint64_t addr, const char **name)
{
	struct perfmap *pm = perfmap_of(s, pid, 1);
	const struct pmsym *e;
	char path[4096];
	struct stat sb;
	int r;

	*name = NULL;
	if (!pm)
		return -ENOMEM;
	if (!pm->loaded && (r = perfmap_load(s, pm)))
		return r;
	e = perfmap_find(pm, addr);
	if (!e && !pm->snapshot) {
		/* the JIT may have written more since we read it */
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map",
			 s->perf_map_dir, pid);
		if (stat(path, &sb) || !S_ISREG(sb.st_mode) ||
		    (sb.st_size == pm->size &&
		     sb.st_mtim.tv_sec == pm->mtime.tv_sec &&
		     sb.st_mtim.tv_nsec == pm->mtime.tv_nsec))
			return 0;
		if ((r = perfmap_load(s, pm)))
			return r;
		e = perfmap_find(pm, addr);
	}
	if (!e)
		return 0;
	*name = intern(s, e->name);
	return *name ? 0 : -ENOMEM;
}

int sp_symbolizer_add_perf_map(struct sp_symbolizer *s, uint32_t pid,
			       const char *text, size_t len, int reset)
{
	struct perfmap *pm = perfmap_of(s, pid, 1);
	FILE *fp;

	if (!pm)
		return -ENOMEM;
	if (reset || !pm->snapshot)
		perfmap_clear(pm);
	pm->loaded = 1;
	pm->snapshot = 1;
	if (!len)
		return 0;
	fp = fmemopen((void *)text, len, "r");
	if (!fp)
		return -ENOMEM;
	return perfmap_read(s, pm, fp);
}

/* Jitdump files */

static struct jitdump_ref *jitdump_of(struct sp_symbolizer *s, uint32_t pid)
{
	size_t i;

	for (i = s->njds; i-- > 0; )
		if (s->jds[i].pid == pid)
			return &s->jds[i];
	return NULL;
}

/* (Re)read the dump when it is new or has grown; a JIT appends to it. */
static int jitdump_refresh(struct sp_symbolizer *s, struct jitdump_ref *jr)
{
	struct sp_jitdump *j;
	struct stat sb;
	int err;

	if (stat(jr->path, &sb) || !S_ISREG(sb.st_mode) || sb.st_size == jr->size)
		return 0;
	j = sp_jitdump_load(jr->path, &err);
	if (!j)
		return err == -ENOMEM ? -ENOMEM : 0;
	sp_jitdump_free(jr->j);
	jr->j = j;
	jr->size = sb.st_size;
	s->st.jitdump_loads++;
	return 0;
}

static int jitdump_lookup(struct sp_symbolizer *s, uint32_t pid,
			  uint64_t addr, struct sp_frame *f)
{
	struct jitdump_ref *jr = jitdump_of(s, pid);
	const struct sp_jit_code *c = NULL;
	const struct sp_jit_line *l;
	int r;

	if (!jr)
		return 0;
	if (!jr->j && (r = jitdump_refresh(s, jr)))
		return r;
	if (jr->j)
		c = sp_jitdump_find(jr->j, addr);
	if (!c) {
		if ((r = jitdump_refresh(s, jr)))
			return r;
		if (jr->j)
			c = sp_jitdump_find(jr->j, addr);
	}
	if (!c)
		return 0;
	f->function = intern(s, c->name);
	if (!f->function)
		return -ENOMEM;
	f->kind = SP_FK_JIT;
	f->origin = SP_FO_JITDUMP;
	l = (s->flags & SP_SYM_NO_LINES) ? NULL : sp_jit_code_line(c, addr);
	if (l && l->file) {
		f->file = intern(s, l->file);
		if (!f->file)
			return -ENOMEM;
		f->line = l->line;
	}
	return 0;
}

/* User frames */

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

/* "[libc.so.6]+0x1f0", or "[vsyscall]+0x0" for names already in brackets */
static const char *offset_name(struct sp_symbolizer *s, const char *module,
			       uint64_t off)
{
	if (module[0] == '[')
		return internf(s, "%s+0x%" PRIx64, module, off);
	return internf(s, "[%s]+0x%" PRIx64, base_name(module), off);
}

/* The name to show for a symbol: demangled once per distinct name. */
static const char *display_name(struct sp_symbolizer *s, const char *raw)
{
	const char *at = strchr(raw, '@'), *name;
	struct sp_u64slot *slot;
	char *d;
	int is_new;

	/* symbol versions: __libc_start_main@@GLIBC_2.34 */
	if (at && at != raw) {
		char *base = strndup(raw, (size_t)(at - raw));

		if (!base)
			return NULL;
		name = intern(s, base);
		free(base);
	} else {
		name = intern(s, raw);
	}

	if (!name || (s->flags & SP_SYM_NO_DEMANGLE) || !sp_is_mangled(name))
		return name;
	slot = sp_u64map_get(&s->demangled, (uint64_t)(uintptr_t)name, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return (const char *)(uintptr_t)slot->val;
	d = sp_demangle(name);
	slot->val = (uint64_t)(uintptr_t)name;
	if (d) {
		const char *dn = intern(s, d);

		free(d);
		if (!dn)
			return NULL;
		slot->val = (uint64_t)(uintptr_t)dn;
	}
	return (const char *)(uintptr_t)slot->val;
}

static int add_mismatch(struct sp_symbolizer *s, struct module *mod,
			const uint8_t *disk, size_t disk_len)
{
	struct sp_mismatch *mm = realloc(s->mismatches,
				(s->nmismatches + 1) * sizeof(*mm));

	if (!mm)
		return -ENOMEM;
	s->mismatches = mm;
	mm = &s->mismatches[s->nmismatches++];
	memset(mm, 0, sizeof(*mm));
	mm->path = intern(s, sp_elf_path(mod->elf));
	if (!mm->path)
		return -ENOMEM;
	sp_build_id_hex(mod->rec_bid, mod->rec_len, mm->recorded);
	sp_build_id_hex(disk, disk_len, mm->on_disk);
	mm->recovered = !mod->stale;
	mod->mismatch = s->nmismatches;
	return 0;
}

/* Find what stands behind a module: build-id check, debug files, DWARF. */
static int module_load(struct sp_symbolizer *s, struct module *mod,
		       const struct sp_map *m)
{
	struct sp_debug_finder *f = finder(s);
	Elf *e = sp_elf_handle(mod->elf);
	uint8_t bid[SP_BUILD_ID_MAX];
	size_t bid_len;
	int want_dwarf = (s->flags & (SP_SYM_NO_LINES | SP_SYM_NO_INLINES)) !=
			 (SP_SYM_NO_LINES | SP_SYM_NO_INLINES);
	Elf *dwarf_elf = NULL;

	mod->loaded = 1;
	s->st.modules++;
	if (!f)
		return -ENOMEM;
	bid_len = sp_elf_build_id(e, bid);
	if (mod->rec_len && (bid_len != mod->rec_len ||
			     memcmp(bid, mod->rec_bid, bid_len))) {
		/* replaced since the recording: only the recorded ID counts */
		mod->dbg = sp_debug_find_build_id(f, mod->rec_bid, mod->rec_len);
		mod->dbg_origin = SP_FO_BUILDID;
		mod->stale = !mod->dbg;
		if (mod->dbg && sp_elf_has_section(sp_debugfile_elf(mod->dbg),
						   ".debug_info"))
			dwarf_elf = sp_debugfile_elf(mod->dbg);
		if (add_mismatch(s, mod, bid, bid_len))
			return -ENOMEM;
		goto dwarf;
	}
	mod->has_symtab = sp_elf_has_section(e, ".symtab");
	if (want_dwarf && sp_elf_has_section(e, ".debug_info"))
		dwarf_elf = e;
	if (m->kind == SP_MAP_FILE && (!mod->has_symtab || (want_dwarf && !dwarf_elf))) {
		mod->dbg = sp_debug_find(f, sp_elf_path(mod->elf), e,
					 mod->rec_len ? mod->rec_bid : bid,
					 mod->rec_len ? mod->rec_len : bid_len);
		if (mod->dbg) {
			mod->dbg_origin = sp_debugfile_how(mod->dbg) ==
					  SP_DEBUG_BUILDID ? SP_FO_BUILDID :
					  SP_FO_DEBUGLINK;
			if (!dwarf_elf && want_dwarf &&
			    sp_elf_has_section(sp_debugfile_elf(mod->dbg),
					       ".debug_info"))
				dwarf_elf = sp_debugfile_elf(mod->dbg);
		}
	}
	if (!mod->has_symtab && !(mod->dbg && sp_debugfile_symtab(mod->dbg)))
		mod->mini = sp_debug_mini(f, sp_elf_path(mod->elf), e);
dwarf:
	if (dwarf_elf) {
		mod->dwarf = sp_dwarf_open(dwarf_elf);
		mod->dwarf_origin = dwarf_elf == e ? SP_FO_SYMTAB : mod->dbg_origin;
		if (mod->dwarf)
			s->st.dwarf_opens++;
	}
	return 0;
}

/* The function symbol of vaddr in a module, by the order in symbolize.h. */
static const char *module_symbol(struct module *mod, uint64_t vaddr,
				 unsigned *origin)
{
	const struct sp_sym *dyn = NULL, *sym;
	const struct sp_sym_entry *e;
	enum sp_sym_origin o;

	*origin = SP_FO_NONE;
	if (!mod->mismatch) {
		sym = sp_elf_symbol((struct sp_elf *)mod->elf, vaddr, &o);
		if (sym && sym->name && *sym->name && o == SP_ORIGIN_SYMTAB) {
			*origin = SP_FO_SYMTAB;
			return sym->name;
		}
		if (sym && sym->name && *sym->name)
			dyn = sym;
	}
	if (mod->dbg && (e = sp_symtab_lookup(sp_debugfile_symtab(mod->dbg),
					      vaddr))) {
		*origin = mod->dbg_origin;
		return e->name;
	}
	/* MiniDebugInfo holds what .dynsym lacks: a sized dynsym hit wins */
	if (mod->mini && !(dyn && dyn->size) &&
	    (e = sp_symtab_lookup(sp_debugfile_symtab(mod->mini), vaddr))) {
		*origin = SP_FO_MINIDEBUG;
		return e->name;
	}
	if (dyn) {
		*origin = SP_FO_DYNSYM;
		return dyn->name;
	}
	return NULL;
}

static int pool_add(struct sp_symbolizer *s, const struct cframe *cf)
{
	if (s->npool == s->cappool) {
		uint32_t cap = s->cappool ? s->cappool * 2 : 1024;
		struct cframe *p = realloc(s->pool, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pool = p;
		s->cappool = cap;
	}
	s->pool[s->npool++] = *cf;
	return 0;
}

/* Resolve (module, vaddr) into the pool: its inline chain, outermost last. */
static int resolve_chain(struct sp_symbolizer *s, const struct sp_map *m,
			 struct module *mod, uint64_t vaddr, int precise,
			 uint32_t *first, uint32_t *n)
{
	struct sp_src_frame src[CHAIN_MAX];
	uint64_t look = precise ? vaddr : vaddr - 1;
	const char *raw;
	unsigned origin, dflags = 0;
	struct cframe cf;
	int nsrc = 0, i, r;

	*first = s->npool;
	raw = module_symbol(mod, look, &origin);
	if (m->kind == SP_MAP_IMAGE && raw)
		origin = SP_FO_VDSO;
	if (!(s->flags & SP_SYM_NO_INLINES))
		dflags |= SP_DWARF_INLINES;
	if (!(s->flags & SP_SYM_NO_LINES))
		dflags |= SP_DWARF_LINES;
	if (mod->dwarf && dflags)
		nsrc = sp_dwarf_lookup(mod->dwarf, look, dflags, src, CHAIN_MAX);
	s->st.resolved++;
	for (i = 0; i < nsrc; i++) {
		int last = i == nsrc - 1 && !src[i].inlined;

		memset(&cf, 0, sizeof(cf));
		if (last && raw) {
			cf.function = display_name(s, raw);
			cf.origin = (uint8_t)origin;
		} else if (src[i].function) {
			cf.function = display_name(s, src[i].function);
			cf.origin = mod->dwarf_origin;
		} else if (last) {
			break;	/* lines but no name: the symbol frame below */
		} else {
			cf.function = intern(s, "[inlined]");
			cf.origin = mod->dwarf_origin;
		}
		if (!cf.function)
			return -ENOMEM;
		cf.kind = src[i].inlined ? SP_FK_INLINE : SP_FK_NATIVE;
		if (src[i].file && !(cf.file = intern(s, src[i].file)))
			return -ENOMEM;
		cf.line = src[i].line;
		if ((r = pool_add(s, &cf)))
			return r;
		if (last)
			goto done;
	}
	/* no DWARF frame for the function itself: the symbol tables' name */
	memset(&cf, 0, sizeof(cf));
	cf.kind = SP_FK_NATIVE;
	if (nsrc > 0 && src[nsrc - 1].file && !src[nsrc - 1].inlined &&
	    !src[nsrc - 1].function) {
		cf.file = intern(s, src[nsrc - 1].file);
		cf.line = src[nsrc - 1].line;
	}
	if (raw) {
		cf.function = display_name(s, raw);
		cf.origin = (uint8_t)origin;
	} else {
		cf.function = offset_name(s, m->kind == SP_MAP_IMAGE ? "[vdso]" :
					  m->name, vaddr);
		cf.origin = SP_FO_NONE;
		if (mod->stale)
			cf.flags |= SP_SYMF_STALE;
	}
	if (!cf.function)
		return -ENOMEM;
	if ((r = pool_add(s, &cf)))
		return r;
done:
	*n = s->npool - *first;
	return 0;
}

static const char *anon_module(const struct sp_map *m)
{
	if (!strncmp(m->name, "[anon:", 6) || !strncmp(m->name, "/memfd:", 7))
		return m->name;
	return "[anon]";
}

/* One frame's flags, counters and fallback name, once it is resolved. */
static int finish_frame(struct sp_symbolizer *s, struct sp_frame *f)
{
	if (!f->function) {
		f->function = intern(s, "[unknown]");
		if (!f->function)
			return -ENOMEM;
	}
	s->st.frames++;
	if (f->kind == SP_FK_INLINE)
		s->st.inline_frames++;
	if (f->flags & SP_SYMF_STALE)
		s->st.stale_frames++;
	if (f->origin == SP_FO_NONE)
		s->st.unresolved++;
	else if (f->kind != SP_FK_INLINE && sp_symbol_hidden(f->function))
		f->flags |= SP_SYMF_HIDDEN;
	return 0;
}

int sp_symbolize_user_chain(struct sp_symbolizer *s, uint32_t pid,
			    uint64_t addr, int precise, struct sp_frame *out,
			    unsigned max)
{
	const struct sp_proc *proc = sp_procs_find(s->procs, pid);
	uint64_t look = precise || !addr ? addr : addr - 1;
	const struct sp_map *m = proc ? sp_proc_map(proc, look) : NULL;
	struct sp_frame *f = out;
	const char *name = NULL;
	unsigned i, n = 1;
	int r = 0;

	if (!max)
		return -EINVAL;
	precise = !!precise;
	*f = (struct sp_frame){ .addr = addr, .kind = SP_FK_NATIVE,
		.origin = SP_FO_NONE };
	if (!m || m->kind == SP_MAP_ANON) {
		f->kind = m ? SP_FK_JIT : SP_FK_UNKNOWN;
		f->module = m ? intern(s, anon_module(m)) : NULL;
		if (m && !f->module)
			return -ENOMEM;
		r = jitdump_lookup(s, pid, look, f);
		if (!r && f->origin == SP_FO_NONE) {
			r = perfmap_lookup(s, pid, look, &name);
			if (!r && name) {
				f->kind = SP_FK_JIT;
				f->function = name;
				f->origin = SP_FO_PERFMAP;
			}
		}
		if (r)
			return r;
	} else {
		f->module = intern(s, m->name);
		if (!f->module)
			return -ENOMEM;
		if (m->elf && (m->kind == SP_MAP_FILE || m->kind == SP_MAP_IMAGE)) {
			uint64_t vaddr = addr - m->bias;
			const struct symslot *hit;
			struct module *mod;
			uint32_t first, cnt;

			hit = sym_find(s, m->elf, vaddr, precise);
			if (hit) {
				first = hit->first;
				cnt = hit->n;
			} else {
				mod = module_of(s, m->elf);
				if (!mod)
					return -ENOMEM;
				if (!mod->loaded && (r = module_load(s, mod, m)))
					return r;
				if ((r = resolve_chain(s, m, mod, vaddr, precise,
						       &first, &cnt)))
					return r;
				if ((r = sym_add(s, m->elf, vaddr, precise, first,
						 cnt)))
					return r;
				if (mod->stale)
					s->mismatches[mod->mismatch - 1].frames++;
			}
			/* keep the outermost frames when the chain is too deep */
			if (cnt > max) {
				first += cnt - max;
				cnt = max;
			}
			n = cnt;
			for (i = 0; i < n; i++) {
				const struct cframe *cf = &s->pool[first + i];

				out[i] = (struct sp_frame){ .addr = addr,
					.function = cf->function,
					.module = f->module, .file = cf->file,
					.line = cf->line, .kind = cf->kind,
					.origin = cf->origin, .flags = cf->flags };
			}
		} else {
			f->function = offset_name(s, m->name,
						  addr - m->start + m->pgoff);
			if (!f->function)
				return -ENOMEM;
		}
	}
	for (i = 0; i < n; i++)
		if ((r = finish_frame(s, &out[i])))
			return r;
	return (int)n;
}

int sp_symbolize_user(struct sp_symbolizer *s, uint32_t pid, uint64_t addr,
		      int precise, struct sp_frame *f)
{
	struct sp_frame chain[CHAIN_MAX];
	int n = sp_symbolize_user_chain(s, pid, addr, precise, chain, CHAIN_MAX);

	if (n < 0)
		return n;
	*f = chain[n - 1];
	return 0;
}

static int out_reserve(struct sp_symbolizer *s, size_t n)
{
	struct sp_frame *f;
	size_t cap;

	if (n <= s->capout)
		return 0;
	cap = s->capout ? s->capout : 64;
	while (cap < n)
		cap *= 2;
	f = realloc(s->out, cap * sizeof(*f));
	if (!f)
		return -ENOMEM;
	s->out = f;
	s->capout = cap;
	return 0;
}

static int is_py_frame(const struct sp_frame *f)
{
	return (f->kind == SP_FK_JIT) && !strncmp(f->function, "py::", 4);
}

/*
 * CPython's -X perf trampolines make every Python call a py:: frame with the
 * interpreter's C frames between two of them; that glue is the same in every
 * stack and buries the Python call chain, so it is marked interp and
 * hidden.  Native frames outside the Python frames (the interpreter's start
 * above, C extensions and builtins below) stay.
 */
static void mark_python_glue(struct sp_frame *f, size_t n)
{
	size_t lo = n, hi = 0, i, j;

	for (i = 0; i < n; i++)
		if (is_py_frame(&f[i])) {
			if (lo == n)
				lo = i;
			hi = i;
		}
	if (lo == n || lo == hi)
		return;
	for (i = lo + 1; i < hi; i++) {
		if (f[i].kind != SP_FK_NATIVE || !sp_symbol_python_glue(f[i].function))
			continue;
		f[i].kind = SP_FK_INTERP;
		f[i].flags |= SP_SYMF_HIDDEN;
		/* and what was inlined into it */
		for (j = i; j-- > lo + 1 && f[j].kind == SP_FK_INLINE &&
		     f[j].addr == f[i].addr; )
			f[j].flags |= SP_SYMF_HIDDEN;
	}
}

int sp_symbolize_stack(struct sp_symbolizer *s,
		       const struct sp_unw_stack_view *v,
		       const struct sp_frame **frames, size_t *nframes)
{
	const struct sp_unw_stack *st = v->s;
	struct sp_u64slot *slot;
	size_t n = 0;
	unsigned i;
	int r, is_new;

	if ((r = out_reserve(s, (size_t)st->nr_kernel + st->nr_user)))
		return r;
	for (i = 0; i < st->nr_kernel; i++) {
		r = sp_symbolize_kernel(s, v->kernel_ips[i], i == 0, &s->out[n++]);
		if (r)
			return r;
	}
	for (i = 0; i < st->nr_user; i++) {
		/* room for a deep chain, and for the frames still to come */
		if ((r = out_reserve(s, n + CHAIN_MAX + (st->nr_user - i))))
			return r;
		r = sp_symbolize_user_chain(s, st->pid, v->user_ips[i],
					    v->uflags[i] & SP_FRAME_PRECISE,
					    &s->out[n], CHAIN_MAX);
		if (r < 0)
			return r;
		n += (size_t)r;
	}
	mark_python_glue(s->out, n);
	slot = sp_u64map_get(&s->stacks, key2(st->pid, st->id), &is_new);
	if (!slot)
		return -ENOMEM;
	if (is_new)
		s->st.stacks++;
	*frames = s->out;
	*nframes = n;
	return 0;
}

int sp_symbolizer_has_stack(const struct sp_symbolizer *s, uint32_t pid,
			    uint32_t id)
{
	return sp_u64map_find(&s->stacks, key2(pid, id)) != NULL;
}
