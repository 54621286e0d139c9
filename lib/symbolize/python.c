/* SPDX-License-Identifier: MIT */
/*
 * python.c: CPython's frames, as the recorder read them in a sample, put
 * where the interpreter ran them.
 *
 * PYCODE records name the code objects of a process by ID; a STACK's
 * Python part lists the frames of the sample, innermost first, each naming
 * its code and instruction and marked where one run of the interpreter's C
 * function (_PyEval_EvalFrameDefault) began.  Each such C frame of the
 * native stack, leaf first, stands for the Python frames up to the next
 * mark: it is replaced by them, so that C called from Python and Python
 * called from C keep their order.  The frames look as those of -X perf's
 * perf map do ("py::qualname:file"), with the file and line of the
 * instruction; when a stack has both, the perf map's are left out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "format/python.h"
#include "source.h"

struct pycode {
	const char *name;	/* "py::qualname:file", interned */
	const char *file;	/* interned */
	uint64_t bytecode;
	uint32_t firstlineno;
	uint8_t *linetable;
	size_t linetable_len;
};

/* The code objects of one process, in its SP_PROC_PYCODE slot. */
struct pycodes {
	struct sp_u64map ids;	/* code ID -> index in v */
	struct pycode *v;
	size_t n, cap;
};

static void release_codes(void *data)
{
	struct pycodes *c = data;
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].linetable);
	free(c->v);
	sp_u64map_release(&c->ids);
	free(c);
}

int sym_python_add_code(struct sp_symbolizer *s, const struct sp_pycode_view *v)
{
	struct sp_proc *proc = sp_procs_get(s->procs, v->c->pid);
	struct pycodes *c;
	struct sp_u64slot *slot;
	struct pycode *pc;
	int is_new;

	if (!proc)
		return -ENOMEM;
	c = sp_proc_user(proc, SP_PROC_PYCODE);
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		sp_proc_set_user(proc, SP_PROC_PYCODE, c, release_codes);
	}
	slot = sp_u64map_get(&c->ids, v->c->id, &is_new);
	if (!slot)
		return -ENOMEM;
	if (is_new) {
		if (SP_GROW(c->v, c->cap, c->n + 1)) {
			sp_u64map_del(&c->ids, v->c->id);
			return -ENOMEM;
		}
		slot->val = c->n++;
		memset(&c->v[slot->val], 0, sizeof(*pc));
	}
	/* a later record of the same ID says the same, or better */
	pc = &c->v[slot->val];
	free(pc->linetable);
	pc->linetable = NULL;
	pc->linetable_len = 0;
	pc->name = sp_sym_internf(s, "py::%.*s:%.*s",
				  (int)v->c->qualname_len, v->qualname,
				  (int)v->c->filename_len, v->filename);
	pc->file = sp_sym_internf(s, "%.*s", (int)v->c->filename_len,
				  v->filename);
	if (!pc->name || !pc->file)
		return -ENOMEM;
	pc->bytecode = v->c->bytecode;
	pc->firstlineno = v->c->firstlineno;
	if (v->c->linetable_len) {
		pc->linetable = malloc(v->c->linetable_len);
		if (!pc->linetable)
			return -ENOMEM;
		memcpy(pc->linetable, v->linetable, v->c->linetable_len);
		pc->linetable_len = v->c->linetable_len;
	}
	return 0;
}

/* The frame of Python frame word w of process codes c. */
static struct sp_frame py_frame(const struct pycodes *c, uint64_t w)
{
	const struct sp_u64slot *slot = c ? sp_u64map_find(&c->ids,
						sp_pyf_code(w)) : NULL;
	uint32_t off = (uint32_t)w & SP_PYF_OFFSET;
	struct sp_frame f = { .kind = SP_FK_INTERPRETED, .module = "[python]",
			      .origin = SP_FO_PYCODE };
	const struct pycode *pc;
	int line;

	if (!slot) {
		f.function = "[python code unreadable]";
		f.origin = SP_FO_NONE;
		return f;
	}
	pc = &c->v[slot->val];
	f.function = pc->name;
	f.file = pc->file;
	f.decl_line = pc->firstlineno;
	f.addr = pc->bytecode + (off == SP_PYF_NOOFF ? 0 : off);
	line = off == SP_PYF_NOOFF ? 0 :
	       sp_py_line(pc->linetable, pc->linetable_len, pc->firstlineno, off);
	f.line = line > 0 ? (uint32_t)line : 0;
	return f;
}

/* Where the frames read of a Python stack end, when it goes on. */
static struct sp_frame cut_frame(const struct sp_unw_stack *st, uint64_t addr)
{
	return (struct sp_frame){ .addr = addr, .kind = SP_FK_SYNTHETIC,
		.function = st->flags & SP_STACK_PY_FAULT ?
			    "[python unreadable]" : "[python truncated]" };
}

static int is_eval(const struct sp_frame *f)
{
	return f->kind == SP_FK_NATIVE &&
	       !strcmp(f->function, "_PyEval_EvalFrameDefault");
}

int sym_python_merge(struct sp_symbolizer *s, const struct sp_unw_stack_view *v,
		     size_t first, size_t *np)
{
	const struct sp_unw_stack *st = v->s;
	const struct sp_proc *proc = sp_procs_find(s->procs, st->pid);
	const struct pycodes *c = proc ? sp_proc_user(proc, SP_PROC_PYCODE) : NULL;
	struct sp_frame *in = s->out, *out;
	size_t n = *np, i, k = 0, at = 0, merged = 0, j;
	int entry, cut = st->flags & (SP_STACK_PY_TRUNC | SP_STACK_PY_FAULT);

	if (!st->nr_py && !cut)
		return 0;
	for (i = first; i < n; i++)
		merged += is_eval(&in[i]);
	if (!merged)
		return 0;	/* no symbols for the interpreter: left as it is */
	out = malloc((n + st->nr_py + 2) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	memcpy(out, in, first * sizeof(*out));
	k = first;
	merged = 0;
	for (i = first; i < n; i++) {
		if (!is_eval(&in[i])) {
			out[k++] = in[i];
			continue;
		}
		if (at >= st->nr_py) {
			/* the walk stopped short of this run: said once */
			if (cut) {
				out[k++] = cut_frame(st, in[i].addr);
				cut = 0;
			} else {
				out[k++] = in[i];
			}
			continue;
		}
		/* what the interpreter inlined into this frame goes with it */
		while (k > first && out[k - 1].kind == SP_FK_INLINE &&
		       out[k - 1].addr == in[i].addr)
			k--;
		entry = 0;
		for (; at < st->nr_py && !entry; at++) {
			uint64_t w = v->py[at];

			if (!(w & SP_PYF_SHIM))
				out[k++] = py_frame(c, w);
			entry = !!(w & SP_PYF_ENTRY);
		}
		/* the walk ended inside this run: its outer frames are cut */
		if (!entry && cut) {
			out[k++] = cut_frame(st, in[i].addr);
			cut = 0;
		}
		merged = 1;
	}
	/* with -X perf too: its trampolines' frames say the same again */
	for (j = first; merged && j < k; j++)
		if (out[j].kind == SP_FK_JIT && !strncmp(out[j].function, "py::", 4))
			out[j].flags |= SP_SYMF_HIDDEN;
	if (SP_GROW(s->out, s->cap_out, k)) {
		free(out);
		return -ENOMEM;
	}
	memcpy(s->out, out, k * sizeof(*out));
	free(out);
	*np = k;
	return 0;
}
