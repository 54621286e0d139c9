/* SPDX-License-Identifier: MIT */
/*
 * missing.c: frames of mappings whose file is not at hand with the recorded
 * build-id, named "[unknown build-id HEX]" and counted against that file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "elf/buildid.h"
#include "source.h"

/* Make room for the counts of missing file i. */
static int room(struct sym_missing *ms, size_t i)
{
	size_t old = ms->cap;

	if (i < ms->cap)
		return 0;
	if (SP_GROW(ms->counts, ms->cap, i + 1))
		return -ENOMEM;
	memset(ms->counts + old, 0, (ms->cap - old) * sizeof(*ms->counts));
	return 0;
}

int sym_missing_note(struct sp_symbolizer *s, const struct sp_map *m)
{
	size_t i = m->missing - 1;

	if (room(&s->missing, i))
		return -ENOMEM;
	s->missing.counts[i].frames++;
	if (!s->missing.stack_file)
		s->missing.stack_file = m->missing;
	return 0;
}

int sym_missing_frame(struct sp_symbolizer *s, const struct sp_map *m,
		      struct sp_frame *f)
{
	char hex[2 * sizeof(m->build_id) + 1];

	sp_build_id_hex(m->build_id, m->build_id_size, hex);
	f->function = sp_sym_internf(s, "[unknown build-id %.*s]",
				     SP_UNKNOWN_BUILDID_DIGITS, hex);
	if (!f->function)
		return -ENOMEM;
	f->kind = SP_FK_NATIVE;
	f->origin = SP_FO_NONE;
	f->flags |= SP_SYMF_NO_BUILDID;
	return 0;
}

void sym_missing_sample(struct sp_symbolizer *s, uint32_t file)
{
	/* file came from sym_missing_note(), which made its room */
	if (file && file - 1 < s->missing.cap)
		s->missing.counts[file - 1].samples++;
}

void sym_missing_release(struct sym_missing *ms)
{
	free(ms->counts);
	memset(ms, 0, sizeof(*ms));
}

const struct sp_missing_file *sp_symbolizer_missing(const struct sp_symbolizer *s,
						    size_t *n)
{
	return sp_procs_missing(s->procs, n);
}

void sp_symbolizer_missing_counts(const struct sp_symbolizer *s, size_t i,
				  uint64_t *frames, uint64_t *samples)
{
	const struct sym_missing *ms = &s->missing;

	*frames = i < ms->cap ? ms->counts[i].frames : 0;
	*samples = i < ms->cap ? ms->counts[i].samples : 0;
}
