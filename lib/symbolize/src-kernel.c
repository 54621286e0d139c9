/* SPDX-License-Identifier: MIT */
/* src-kernel.c: kernel frames, named by the KSYM records or a kallsyms file. */
#include <errno.h>
#include <stdlib.h>

#include "os/kallsyms.h"
#include "source.h"

#define KALLSYMS "/proc/kallsyms"

void src_kernel_release(struct src_kernel *k)
{
	sp_ksyms_free(k->ks);
	free(k->path);
}

/*
 * Symbols the recorder captured: once one came, they are the table and no
 * kallsyms file is read (this may be another machine, or another boot).
 */
int src_kernel_add_record(struct sp_symbolizer *s, uint64_t start,
			  uint64_t size, const char *name)
{
	struct src_kernel *k = &s->kernel;

	if (!k->captured) {
		sp_ksyms_free(k->ks);
		k->ks = sp_ksyms_new();
		if (!k->ks)
			return -ENOMEM;
		k->captured = 1;
	}
	return sp_ksyms_add_record(k->ks, start, size, name);
}

static void *table(struct sp_symbolizer *s, const struct sp_symq *q, int *err)
{
	struct src_kernel *k = &s->kernel;

	if (!q->kernel)
		return NULL;
	if (!k->ks) {
		k->ks = sp_ksyms_new();
		if (!k->ks) {
			*err = -ENOMEM;
			return NULL;
		}
		/* unreadable, or hidden by kptr_restrict: an empty table */
		if (sp_ksyms_load(k->ks, k->path ? k->path : KALLSYMS) == -ENOMEM) {
			*err = -ENOMEM;
			return NULL;
		}
	}
	if (!sp_ksyms_count(k->ks)) {
		s->st.no_kallsyms++;
		return NULL;
	}
	return k->ks;
}

static int lookup(struct sp_symbolizer *s, void *ks, const struct sp_symq *q,
		  struct sp_frame *out, unsigned max)
{
	const struct sp_ksym *k = sp_ksyms_lookup(ks, q->addr, q->precise);

	if (!k)
		return 0;
	out[0] = (struct sp_frame){ .kind = SP_FK_KERNEL,
		.origin = SP_FO_KALLSYMS,
		.function = sp_sym_intern(s, k->name),
		.module = sp_sym_intern(s, k->module ? k->module : "[kernel]") };
	return out[0].function && out[0].module ? 1 : -ENOMEM;
}

const struct sp_source sp_src_kernel = {
	.name = "kernel",
	.table = table,
	.lookup = lookup,
};
