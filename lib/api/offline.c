/* SPDX-License-Identifier: MIT */
/* offline.c: sp-unwind and sp-symbolize in one process (offline.h). */
#include <errno.h>
#include <stdlib.h>

#include "elf/elfcache.h"
#include "elf/procs.h"
#include "offline.h"

struct sp_offline {
	struct sp_elf_cache *cache;
	struct sp_unwstream *unw;	/* NULL: the input is unwound */
	struct sp_procs *procs;
	struct sp_symbolizer *sym;
	struct sp_symstream *ss;
	struct sp_unw_header uh;
	int sym_refused;	/* the symbolizer refused an unwound record */
};

/* An unwound record, from the unwinder: straight to the symbolizer. */
static int to_symbolizer(void *arg, const struct sp_rec_hdr *rec)
{
	struct sp_offline *o = arg;
	int r = sp_symstream_feed(o->ss, rec);

	if (r == -EINVAL)
		o->sym_refused = 1;
	return r;
}

struct sp_offline *sp_offline_new(int raw, const void *hdr,
				  sp_symstream_emit_fn *emit, void *arg)
{
	struct sp_offline *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->cache = sp_elf_cache_new();
	o->procs = o->cache ? sp_procs_new(o->cache) : NULL;
	o->sym = o->procs ? sp_symbolizer_new(o->procs) : NULL;
	o->ss = o->sym ? sp_symstream_new(o->sym, emit, arg) : NULL;
	if (!o->ss)
		goto err;
	if (raw) {
		o->unw = sp_unwstream_new_cached(hdr, o->cache, to_symbolizer,
						 o);
		if (!o->unw)
			goto err;
		sp_unwstream_header(o->unw, &o->uh);
	} else {
		o->uh = *(const struct sp_unw_header *)hdr;
	}
	return o;
err:
	sp_offline_free(o);
	return NULL;
}

void sp_offline_free(struct sp_offline *o)
{
	if (!o)
		return;
	/* the unwinder's processes hold files of the cache */
	sp_unwstream_free(o->unw);
	sp_symstream_free(o->ss);
	sp_symbolizer_free(o->sym);
	sp_procs_free(o->procs);
	sp_elf_cache_free(o->cache);
	free(o);
}

struct sp_symbolizer *sp_offline_symbolizer(struct sp_offline *o)
{
	return o->sym;
}

struct sp_procs *sp_offline_procs(struct sp_offline *o)
{
	return o->procs;
}

struct sp_unwstream *sp_offline_unwinder(struct sp_offline *o)
{
	return o->unw;
}

int sp_offline_start(struct sp_offline *o)
{
	return sp_symstream_header(o->ss, &o->uh);
}

int sp_offline_feed(struct sp_offline *o, const struct sp_rec_hdr *rec)
{
	o->sym_refused = 0;
	if (!o->unw)
		return sp_symstream_feed(o->ss, rec);
	return sp_unwstream_feed(o->unw, rec);
}

int sp_offline_finish(struct sp_offline *o)
{
	int r;

	o->sym_refused = 0;
	if (o->unw && (r = sp_unwstream_finish(o->unw)))
		return r;
	return sp_symstream_finish(o->ss);
}

const char *sp_offline_error(const struct sp_offline *o)
{
	if (!o->unw || o->sym_refused)
		return sp_symstream_error(o->ss);
	return sp_unwstream_error(o->unw);
}
