/* SPDX-License-Identifier: MIT */
/*
 * src-go.c: frames of Go code by Go's own function table (.gopclntab),
 * which a stripped Go binary keeps: names, files and lines.
 *
 * It is asked after src-elf, which leaves it the addresses of a Go file
 * that its symbol tables do not name (src_go_names()); src-elf itself
 * takes file and line from the table when the file has no DWARF, and shows
 * Go's names of its symbols (src_go_symbol_name()).
 */
#include <errno.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "source.h"

/* The address to look up: return addresses by their call instruction. */
static uint64_t lookup_at(const struct sp_symq *q)
{
	return q->precise || !q->vaddr ? q->vaddr : q->vaddr - 1;
}

int src_go_names(const struct sp_gopclntab *t, const struct sp_symq *q)
{
	struct sp_gofunc f;

	return sp_gopclntab_find(t, lookup_at(q), &f) == 0;
}

int src_go_lines(struct sp_symbolizer *s, const struct sp_gopclntab *t,
		 const struct sp_symq *q, struct sp_frame *out)
{
	uint64_t at = lookup_at(q);
	struct sp_gofunc f;
	const char *file;
	uint32_t line;

	if (s->flags & SP_SYM_NO_LINES || sp_gopclntab_find(t, at, &f) ||
	    sp_gopclntab_line(t, &f, at, &file, &line))
		return 0;
	out->file = sp_sym_intern(s, file);
	if (!out->file)
		return -ENOMEM;
	out->line = line;
	return 0;
}

const char *src_go_symbol_name(struct sp_symbolizer *s, const char *raw,
			       const char **symbol)
{
	static const char *const abi[] = { ".abi0", ".abiinternal" };
	size_t n = strlen(raw), i;

	for (i = 0; i < 2; i++) {
		size_t k = strlen(abi[i]);
		const char *name;

		if (n <= k || strcmp(raw + n - k, abi[i]))
			continue;
		name = sp_sym_internf(s, "%.*s", (int)(n - k), raw);
		*symbol = sp_sym_intern(s, raw);
		return name && *symbol ? name : NULL;
	}
	return sp_sym_display_name(s, raw, symbol);
}

static void *table(struct sp_symbolizer *s, const struct sp_symq *q, int *err)
{
	const struct sp_map *m = q->map;

	if (!m || !m->elf || m->kind != SP_MAP_FILE)
		return NULL;
	return (void *)sp_elf_gopclntab(m->elf);
}

static int lookup(struct sp_symbolizer *s, void *table,
		  const struct sp_symq *q, struct sp_frame *out, unsigned max)
{
	const struct sp_gopclntab *t = table;
	struct sp_gofunc f;
	int r;

	if (sp_gopclntab_find(t, lookup_at(q), &f))
		return 0;
	memset(out, 0, sizeof(*out));
	out->kind = SP_FK_NATIVE;
	out->origin = SP_FO_GOPCLNTAB;
	out->function = sp_sym_intern(s, f.name);
	if (!out->function)
		return -ENOMEM;
	r = src_go_lines(s, t, q, out);
	if (r)
		return r;
	s->st.resolved++;
	return 1;
}

const struct sp_source sp_src_go = {
	.name = "go",
	.table = table,
	.lookup = lookup,
	.cacheable = 1,
};
