/* SPDX-License-Identifier: MIT */
/* symbolize.c: a stack's addresses to frames, by asking the symbol sources. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/symrule.h"
#include "elf/demangle.h"
#include "source.h"

/* Who is asked, in order: the first that has a table and an answer names. */
static const struct sp_source *const kernel_sources[] = {
	&sp_src_kernel,
};

static const struct sp_source *const user_sources[] = {
	&sp_src_elf,		/* mapped files and the [vdso] */
	&sp_src_go,		/* Go code that no symbol names */
	&sp_src_jitdump,	/* JIT code, then */
	&sp_src_perfmap,
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t key2(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}

/* Strings ----------------------------------------------------------------- */

const char *sp_sym_intern(struct sp_symbolizer *s, const char *str)
{
	int64_t i = sp_strtab_intern(&s->strs, str);

	return i < 0 ? NULL : s->strs.strs[i];
}

const char *sp_sym_internf(struct sp_symbolizer *s, const char *fmt, ...)
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
	r = sp_sym_intern(s, str);
	free(str);
	return r;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

const char *sp_sym_offset_name(struct sp_symbolizer *s, const char *module,
			       uint64_t off)
{
	if (module[0] == '[')
		return sp_sym_internf(s, "%s+0x%" PRIx64, module, off);
	return sp_sym_internf(s, "[%s]+0x%" PRIx64, base_name(module), off);
}

const char *sp_sym_display_name(struct sp_symbolizer *s, const char *raw,
				const char **symbol)
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
		name = sp_sym_intern(s, base);
		free(base);
	} else {
		name = sp_sym_intern(s, raw);
	}

	if (symbol)
		*symbol = NULL;
	if (!name || (s->flags & SP_SYM_NO_DEMANGLE) || !sp_is_mangled(name))
		return name;
	slot = sp_u64map_get(&s->demangled, (uint64_t)(uintptr_t)name, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		goto out;
	d = sp_demangle(name);
	slot->val = (uint64_t)(uintptr_t)name;
	if (d) {
		const char *dn = sp_sym_intern(s, d);

		free(d);
		if (!dn)
			return NULL;
		slot->val = (uint64_t)(uintptr_t)dn;
	}
out:
	/* what the file calls it, when that is not what it is shown as */
	if (symbol && (const char *)(uintptr_t)slot->val != name)
		*symbol = name;
	return (const char *)(uintptr_t)slot->val;
}

/* Life -------------------------------------------------------------------- */

/* The IDs of the stacks of a process, in its SP_PROC_STACKS slot. */
struct proc_stacks {
	uint32_t *ids;
	size_t n, cap;
};

static void release_stacks(void *data)
{
	struct proc_stacks *ps = data;

	free(ps->ids);
	free(ps);
}

/* Remember that (pid, id) is a stack of pid, to forget it with pid. */
static int note_stack(struct sp_symbolizer *s, uint32_t pid, uint32_t id)
{
	struct sp_proc *proc = sp_procs_get(s->procs, pid);
	struct proc_stacks *ps;

	if (!proc)
		return -ENOMEM;
	ps = sp_proc_user(proc, SP_PROC_STACKS);
	if (!ps) {
		ps = calloc(1, sizeof(*ps));
		if (!ps)
			return -ENOMEM;
		sp_proc_set_user(proc, SP_PROC_STACKS, ps, release_stacks);
	}
	if (SP_GROW(ps->ids, ps->cap, ps->n + 1))
		return -ENOMEM;
	ps->ids[ps->n++] = id;
	return 0;
}

/*
 * The process table forgets proc: so does the symbolizer, its stacks,
 * thread names, perf map and jitdumps.  A later process with its pid
 * defines its own stacks (docs/streams.md, section 7).
 */
static void forget_proc(void *arg, struct sp_proc *proc)
{
	struct sp_symbolizer *s = arg;
	const struct proc_stacks *ps = sp_proc_user(proc, SP_PROC_STACKS);
	uint32_t pid = sp_proc_pid(proc);
	const uint32_t *tids;
	size_t i, n;

	for (i = 0; ps && i < ps->n; i++)
		sp_u64map_del(&s->stacks, key2(pid, ps->ids[i]));
	tids = sp_alive_threads(sp_procs_alive(s->procs), pid, &n);
	for (i = 0; i < n; i++)
		sp_u64map_del(&s->threads, key2(pid, tids[i]));
	sp_u64map_del(&s->threads, key2(pid, pid));
	src_perfmap_forget(s, pid);
	src_jitdump_forget(s, pid);
	if (s->on_gone)
		s->on_gone(s->gone_arg, pid, 0);
}

void sp_symbolizer_on_gone(struct sp_symbolizer *s,
			   void (*fn)(void *arg, uint32_t pid, uint32_t tid),
			   void *arg)
{
	s->on_gone = fn;
	s->gone_arg = arg;
}

struct sp_procs *sp_symbolizer_procs(const struct sp_symbolizer *s)
{
	return s->procs;
}

struct sp_symbolizer *sp_symbolizer_new(struct sp_procs *procs)
{
	struct sp_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->procs = procs;
	sp_procs_on_forget(procs, forget_proc, s);
	return s;
}

void sp_symbolizer_free(struct sp_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	sp_procs_on_forget(s->procs, NULL, NULL);
	src_kernel_release(&s->kernel);
	src_elf_release(&s->elf);
	src_jitdump_release(&s->jitdump);
	src_perfmap_release(&s->perfmap);
	sym_missing_release(&s->missing);
	for (i = 0; i < s->nanswers; i++) {
		sp_u64map_release(&s->answers[i].at[0]);
		sp_u64map_release(&s->answers[i].at[1]);
	}
	free(s->answers);
	sp_u64map_release(&s->tables);
	free(s->pool);
	free(s->out);
	sp_strtab_release(&s->strs);
	sp_u64map_release(&s->threads);
	sp_u64map_release(&s->stacks);
	sp_u64map_release(&s->demangled);
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
	return set_str(&s->kernel.path, path);
}

int sp_symbolizer_set_perf_map_dir(struct sp_symbolizer *s, const char *dir)
{
	return set_str(&s->perfmap.dir, dir);
}

void sp_symbolizer_set_flags(struct sp_symbolizer *s, unsigned flags)
{
	s->flags = flags;
	/* the files behind the mappings are looked for where debug files are */
	sp_locator_set_system_debug(sp_procs_locator(s->procs),
				    !(flags & SP_SYM_NO_SYSTEM_DEBUG));
}

int sp_symbolizer_set_symbol_cache(struct sp_symbolizer *s, const char *dir)
{
	return set_str(&s->elf.cache_dir, dir);
}

int sp_symbolizer_save_symbol_cache(struct sp_symbolizer *s)
{
	return src_elf_save(s);
}

int sp_symbolizer_add_debug_dir(struct sp_symbolizer *s, const char *dir)
{
	int r = src_elf_add_debug_dir(&s->elf, dir);

	return r ? r : sp_locator_add_debug_root(sp_procs_locator(s->procs), dir);
}

int sp_symbolizer_add_ksym(struct sp_symbolizer *s, uint64_t start,
			   uint64_t size, const char *name)
{
	return src_kernel_add_record(s, start, size, name);
}

int sp_symbolizer_add_perf_map(struct sp_symbolizer *s, uint32_t pid,
			       uint64_t time, const char *text, size_t len,
			       int reset)
{
	return src_perfmap_add_record(s, pid, time, text, len, reset);
}

int sp_symbolizer_add_pycode(struct sp_symbolizer *s,
			     const struct sp_pycode_view *v)
{
	return sym_python_add_code(s, v);
}

void sp_symbolizer_stats(const struct sp_symbolizer *s,
			 struct sp_symbolize_stats *st)
{
	*st = s->st;
	src_elf_stats(&s->elf, st);
}

int sp_symbol_hidden(const char *name)
{
	static const char *const glue[] = {
		"_start", "__libc_start_main", "__libc_start_main_impl",
		"__libc_start_call_main", "start_thread", "clone", "clone3",
	};
	size_t i;

	for (i = 0; i < NELEM(glue); i++)
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

	for (i = 0; i < NELEM(glue); i++)
		if (!strcmp(name, glue[i]))
			return 1;
	return 0;
}

/* Records ----------------------------------------------------------------- */

static int set_thread(struct sp_symbolizer *s, uint32_t pid, uint32_t tid,
		      const char *name)
{
	int64_t i = sp_strtab_intern(&s->strs, name);
	struct sp_u64slot *slot;

	if (i < 0)
		return -ENOMEM;
	slot = sp_u64map_get(&s->threads, key2(pid, tid), NULL);
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

int sp_symbolizer_apply(struct sp_symbolizer *s, const struct sp_rec_hdr *rec,
			struct sp_st_comm *comm)
{
	const struct sp_mmap_rec *m = (const void *)rec;
	const struct sp_comm_rec *c = (const void *)rec;
	const struct sp_task_rec *t = (const void *)rec;
	const char *name;
	int r;

	r = sp_procs_apply(s->procs, rec);
	if (r)
		return r;
	switch (rec->type) {
	case SP_REC_MMAP:
		return src_jitdump_note_mmap(s, m);
	case SP_REC_COMM:
		if (set_thread(s, c->pid, c->tid, c->comm))
			return -ENOMEM;
		if (c->flags & SP_COMM_EXEC)
			src_perfmap_exec(s, c->pid, c->time);
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
		/*
		 * tids are reused: the next one gets its name from its FORK.
		 * A gone line with tid 0 would say the process ended.
		 */
		if (t->tid != t->pid) {
			sp_u64map_del(&s->threads, key2(t->pid, t->tid));
			if (s->on_gone && t->tid)
				s->on_gone(s->gone_arg, t->pid, t->tid);
		}
		return 0;
	default:
		return 0;
	}
}

/* Asking the sources ------------------------------------------------------ */

/* The answer maps of a cacheable table; NULL when out of memory. */
static struct sp_answers *answers_of(struct sp_symbolizer *s, const void *table)
{
	struct sp_u64slot *slot;
	int is_new;

	slot = sp_u64map_get(&s->tables, (uint64_t)(uintptr_t)table, &is_new);
	if (!slot)
		return NULL;
	if (!is_new)
		return &s->answers[slot->val];
	if (SP_GROW(s->answers, s->cap_answers, s->nanswers + 1)) {
		sp_u64map_del(&s->tables, (uint64_t)(uintptr_t)table);
		return NULL;
	}
	slot->val = s->nanswers;
	memset(&s->answers[s->nanswers], 0, sizeof(s->answers[0]));
	return &s->answers[s->nanswers++];
}

const struct sp_answers *sp_sym_answers(const struct sp_symbolizer *s,
					const void *table)
{
	const struct sp_u64slot *slot;

	slot = sp_u64map_find(&s->tables, (uint64_t)(uintptr_t)table);
	return slot ? &s->answers[slot->val] : NULL;
}

/*
 * Ask src about q: the frames of its answer (in the pool for a cacheable
 * source, else in tmp) through *frames and *n; 0 frames when src has no
 * table for q or does not know the address.  0 or -errno.
 */
static int ask(struct sp_symbolizer *s, const struct sp_source *src,
	       const struct sp_symq *q, struct sp_frame *tmp,
	       const struct sp_frame **frames, unsigned *n)
{
	struct sp_answers *a = NULL;
	struct sp_u64slot *slot;
	void *table;
	int r = 0;

	*n = 0;
	table = src->table(s, q, &r);
	if (!table)
		return r;
	if (src->cacheable) {
		a = answers_of(s, table);
		if (!a)
			return -ENOMEM;
		slot = sp_u64map_find(&a->at[!!q->precise], q->vaddr);
		if (slot) {
			*frames = s->pool + (slot->val >> 8);
			*n = (unsigned)(slot->val & 0xff);
			return 0;
		}
	}
	r = src->lookup(s, table, q, tmp, SP_CHAIN_MAX);
	if (r <= 0)
		return r;
	*frames = tmp;
	*n = (unsigned)r;
	if (!a)
		return 0;
	if (SP_GROW(s->pool, s->cap_pool, s->npool + (size_t)r))
		return -ENOMEM;
	memcpy(s->pool + s->npool, tmp, (size_t)r * sizeof(*tmp));
	slot = sp_u64map_get(&a->at[!!q->precise], q->vaddr, NULL);
	if (!slot)
		return -ENOMEM;
	slot->val = (uint64_t)s->npool << 8 | (unsigned)r;
	*frames = s->pool + s->npool;
	s->npool += (size_t)r;
	return 0;
}

/* Ask the sources in order; the first answer wins. */
static int ask_all(struct sp_symbolizer *s, const struct sp_source *const *srcs,
		   size_t nsrcs, const struct sp_symq *q, struct sp_frame *tmp,
		   const struct sp_frame **frames, unsigned *n)
{
	size_t i;
	int r;

	for (i = 0; i < nsrcs; i++) {
		r = ask(s, srcs[i], q, tmp, frames, n);
		if (r || *n)
			return r;
	}
	return 0;
}

int sp_symbolize_kernel(struct sp_symbolizer *s, uint64_t addr, int precise,
			struct sp_frame *f)
{
	struct sp_symq q = { .addr = addr, .vaddr = addr, .precise = !!precise,
			     .kernel = 1 };
	struct sp_frame tmp[SP_CHAIN_MAX];
	const struct sp_frame *ans;
	unsigned n;
	int r;

	s->st.frames++;
	r = ask_all(s, kernel_sources, NELEM(kernel_sources), &q, tmp, &ans, &n);
	if (r)
		return r;
	if (n) {
		*f = ans[n - 1];
		f->addr = addr;
		return 0;
	}
	s->st.unresolved++;
	*f = (struct sp_frame){ .addr = addr, .kind = SP_FK_KERNEL,
		.origin = SP_FO_NONE };
	f->function = f->module = sp_sym_intern(s, "[kernel]");
	return f->function ? 0 : -ENOMEM;
}

static const char *anon_module(const struct sp_map *m)
{
	if (!strncmp(m->name, "[anon:", 6) || !strncmp(m->name, "/memfd:", 7))
		return m->name;
	return "[anon]";
}

/* The mapping of a frame at addr, by the rule of base/symrule.h. */
static const void *find_map(void *proc, uint64_t addr)
{
	return sp_proc_map(proc, addr);
}

static const struct sp_map *frame_map(const struct sp_proc *proc,
				      uint64_t addr, int precise)
{
	return proc ? sp_sym_pick(find_map, (void *)proc, addr, precise, NULL) :
		      NULL;
}

/* One frame's flags, counters and fallback name, once it is resolved. */
static int finish_frame(struct sp_symbolizer *s, struct sp_frame *f)
{
	if (!f->function) {
		f->function = sp_sym_intern(s, "[unknown]");
		if (!f->function)
			return -ENOMEM;
	}
	s->st.frames++;
	if (f->kind == SP_FK_INLINE)
		s->st.inline_frames++;
	if (f->flags & SP_SYMF_NO_BUILDID)
		s->st.no_buildid_frames++;
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
	const struct sp_map *m;
	struct sp_frame base, tmp[SP_CHAIN_MAX];
	const struct sp_frame *ans;
	struct sp_symq q;
	unsigned i, n;
	int r;

	if (!max)
		return -EINVAL;
	precise = !!precise;
	m = frame_map(sp_procs_find(s->procs, pid), addr, precise);
	q = (struct sp_symq){ .pid = pid, .addr = addr, .precise = precise,
		.map = m, .vaddr = m && m->elf ? addr - m->bias : addr };
	base = (struct sp_frame){ .addr = addr, .origin = SP_FO_NONE,
		.kind = !m ? SP_FK_UNKNOWN : m->kind == SP_MAP_ANON ?
			SP_FK_JIT : SP_FK_NATIVE };
	/* the mapping's own name: the frames are used before it can go */
	if (m)
		base.module = m->kind == SP_MAP_ANON ? anon_module(m) : m->name;
	r = ask_all(s, user_sources, NELEM(user_sources), &q, tmp, &ans, &n);
	if (!r && m && m->missing)
		r = sym_missing_note(s, m);	/* missing.c */
	if (r)
		return r;
	if (!n) {
		/* a file of another build-id is no answer: say which is missing */
		if (m && m->kind == SP_MAP_MISSING) {
			if ((r = sym_missing_frame(s, m, &base)))
				return r;
		/* a file we cannot read, [vsyscall]: where in it, at least */
		} else if (m && m->kind != SP_MAP_ANON) {
			base.function = sp_sym_offset_name(s, m->name,
						addr - m->start + m->pgoff);
			if (!base.function)
				return -ENOMEM;
		}
		out[0] = base;
		n = 1;
	} else {
		/* keep the outermost frames when the chain is too deep */
		if (n > max) {
			ans += n - max;
			n = max;
		}
		for (i = 0; i < n; i++) {
			out[i] = ans[i];
			out[i].addr = addr;
			out[i].module = base.module;
		}
	}
	for (i = 0; i < n; i++)
		if ((r = finish_frame(s, &out[i])))
			return r;
	/*
	 * what was inlined into glue is glue, hidden with it: naming glue by
	 * its symbol alone (SP_SYM_GLUE_NAME_ONLY) then changes no output
	 */
	if (out[n - 1].flags & SP_SYMF_HIDDEN)
		for (i = 0; i + 1 < n; i++)
			out[i].flags |= SP_SYMF_HIDDEN;
	return (int)n;
}

int sp_symbolize_user(struct sp_symbolizer *s, uint32_t pid, uint64_t addr,
		      int precise, struct sp_frame *f)
{
	struct sp_frame chain[SP_CHAIN_MAX];
	int n = sp_symbolize_user_chain(s, pid, addr, precise, chain,
					SP_CHAIN_MAX);

	if (n < 0)
		return n;
	*f = chain[n - 1];
	return 0;
}

/* Stacks ------------------------------------------------------------------ */

static int is_py_frame(const struct sp_frame *f)
{
	return f->kind == SP_FK_INTERPRETED ||
	       (f->kind == SP_FK_JIT && !strncmp(f->function, "py::", 4));
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
	const char *cut;
	size_t n = 0;
	unsigned i;
	int r, is_new;

	if (SP_GROW(s->out, s->cap_out, (size_t)st->nr_kernel + st->nr_user))
		return -ENOMEM;
	s->missing.stack_file = 0;
	for (i = 0; i < st->nr_kernel; i++) {
		r = sp_symbolize_kernel(s, v->kernel_ips[i], i == 0, &s->out[n++]);
		if (r)
			return r;
	}
	for (i = 0; i < st->nr_user; i++) {
		/* room for a deep chain, and for the frames still to come */
		if (SP_GROW(s->out, s->cap_out,
			    n + SP_CHAIN_MAX + (st->nr_user - i)))
			return -ENOMEM;
		r = sp_symbolize_user_chain(s, st->pid, v->user_ips[i],
					    v->uflags[i] & SP_FRAME_PRECISE,
					    &s->out[n], SP_CHAIN_MAX);
		if (r < 0)
			return r;
		n += (size_t)r;
	}
	if ((r = sym_python_merge(s, v, st->nr_kernel, &n)))
		return r;
	mark_python_glue(s->out, n);
	/* a cut stack says so under the frames that were found */
	if ((cut = sp_unw_end_frame(st->end, st->flags))) {
		if (SP_GROW(s->out, s->cap_out, n + 1))
			return -ENOMEM;
		s->out[n++] = (struct sp_frame){ .function = cut,
			.kind = SP_FK_SYNTHETIC, .origin = SP_FO_NONE };
		s->st.frames++;	/* a frame line, but not an unresolved one */
	}
	slot = sp_u64map_get(&s->stacks, key2(st->pid, st->id), &is_new);
	if (!slot)
		return -ENOMEM;
	if (is_new) {
		s->st.stacks++;
		if (note_stack(s, st->pid, st->id)) {
			sp_u64map_del(&s->stacks, key2(st->pid, st->id));
			return -ENOMEM;
		}
	}
	slot->val = st->end | (uint64_t)st->flags << 8 |
		    (uint64_t)s->missing.stack_file << 16;
	*frames = s->out;
	*nframes = n;
	return 0;
}

int sp_symbolizer_has_stack(const struct sp_symbolizer *s, uint32_t pid,
			    uint32_t id)
{
	return sp_u64map_find(&s->stacks, key2(pid, id)) != NULL;
}

int sp_symbolizer_stack_end(const struct sp_symbolizer *s, uint32_t pid,
			    uint32_t id, unsigned *flags)
{
	const struct sp_u64slot *slot = sp_u64map_find(&s->stacks,
						       key2(pid, id));

	if (!slot)
		return -1;
	*flags = (unsigned)(slot->val >> 8) & 0xff;
	return (int)(slot->val & 0xff);
}

int sp_symbolizer_sample(struct sp_symbolizer *s, uint32_t pid, uint32_t id)
{
	const struct sp_u64slot *slot = sp_u64map_find(&s->stacks,
						       key2(pid, id));

	if (!slot)
		return -ENOENT;
	/* the index + 1 of the stack's first missing file, 0 for none */
	sym_missing_sample(s, (uint32_t)(slot->val >> 16));
	return 0;
}
