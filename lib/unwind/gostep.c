/* SPDX-License-Identifier: MIT */
/* gostep.c: one step out of a Go frame by its pclntab's pcsp table. */
#include <errno.h>

#include "gostep.h"

int sp_go_code(const struct sp_proc *proc, uint64_t pc, int precise,
	       struct sp_go_code *code)
{
	const struct sp_map *m;

	if (!precise) {
		if (!pc)
			return 0;
		pc--;		/* the call, not what follows it */
	}
	m = sp_proc_map(proc, pc);
	if (!m || !m->elf || m->kind != SP_MAP_FILE)
		return 0;
	code->tab = sp_elf_gopclntab(m->elf);
	if (!code->tab ||
	    sp_gopclntab_find(code->tab, pc - m->bias, &code->func))
		return 0;
	code->at = pc;
	code->bias = m->bias;
	return 1;
}

enum sp_go_step sp_go_step(const struct sp_proc *proc,
			   const struct sp_go_code *code,
			   const struct sp_go_stack *st, struct sp_go_regs *r)
{
	const struct sp_gofunc *f = &code->func;
	uint64_t cfa, ra, bp = r->bp;
	const struct sp_map *m;
	int32_t spoff;
	int err;

	if (sp_gofunc_is_top(code->tab, f))
		return SP_GO_TOP;
	if (sp_gofunc_is_switch(code->tab, f))
		return SP_GO_SWITCH;
	if (f->flag & SP_GOFUNC_SPWRITE)
		return SP_GO_SPWRITE;
	err = sp_gopclntab_pcsp(code->tab, f, code->at - code->bias, &spoff);
	if (err)
		return err == -ENOENT ? SP_GO_NOINFO : SP_GO_ERROR;
	if (spoff < 0 || r->sp > UINT64_MAX - (uint64_t)spoff - 8)
		return SP_GO_ERROR;
	cfa = r->sp + (uint64_t)spoff + 8;
	if (st->read(st->arg, cfa - 8, &ra))
		return SP_GO_TRUNCATED;
	/* the frame pointer points at the caller's saved BP */
	if (r->have_bp && spoff >= 8 && r->bp == cfa - 16 &&
	    st->read(st->arg, cfa - 16, &bp))
		return SP_GO_TRUNCATED;
	m = ra ? sp_proc_map(proc, ra - 1) : NULL;
	if (!m)
		return SP_GO_ERROR;
	r->ip = ra;
	r->sp = cfa;
	r->bp = bp;
	return SP_GO_STEPPED;
}
