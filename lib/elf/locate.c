/* SPDX-License-Identifier: MIT */
/* locate.c: a recorded file by its build-id: the cache, the path, debug roots. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "bidstore.h"
#include "buildid.h"
#include "debuginfod.h"
#include "locate.h"

#define SYSTEM_DEBUG "/usr/lib/debug"
#define DELETED " (deleted)"

struct sp_locator {
	struct sp_elf_cache *cache;
	char *store;		/* NULL: no build-id cache */
	char **roots;		/* debug roots, before the system's */
	size_t nroots, cap;
	int no_system_debug;
	struct sp_debuginfod *dbgd;	/* NULL: off */
	const char *dbgd_why;		/* why it is off, if not by choice */
};

/* One question: a recorded file. */
struct query {
	const char *path;
	const uint8_t *bid;
	size_t len;
};

/*
 * A source: the file it has for q, or NULL.  The lookup checks the
 * build-id of what it returns, so a source may offer a candidate.
 */
struct source {
	enum sp_elf_from from;
	struct sp_elf *(*find)(struct sp_locator *l, const struct query *q);
};

static int same_id(struct sp_elf *e, const struct query *q)
{
	const uint8_t *bid;
	size_t n = sp_elf_get_build_id(e, &bid);

	return n == q->len && !memcmp(bid, q->bid, n);
}

static struct sp_elf *from_store(struct sp_locator *l, const struct query *q)
{
	char path[4096];

	if (!l->store ||
	    sp_bidstore_path(l->store, q->bid, q->len, path, sizeof(path)))
		return NULL;
	return sp_elf_cache_get(l->cache, path);
}

static struct sp_elf *from_path(struct sp_locator *l, const struct query *q)
{
	size_t n = strlen(q->path), d = strlen(DELETED);
	char path[4096], hex[2 * SP_BUILD_ID_MAX + 1];
	struct sp_elf *e;

	/* what was deleted may be back: its build-id says whether it is */
	if (n > d && n - d < sizeof(path) && !strcmp(q->path + n - d, DELETED)) {
		memcpy(path, q->path, n - d);
		path[n - d] = 0;
	} else if (n < sizeof(path)) {
		memcpy(path, q->path, n + 1);
	} else {
		return NULL;
	}
	e = sp_elf_cache_get(l->cache, path);
	if (!e || same_id(e, q))
		return e;
	/* opened before another build was put there: is that this one? */
	sp_build_id_hex(q->bid, q->len, hex);
	return sp_elf_cache_get_again(l->cache, path, hex);
}

static struct sp_elf *from_debuginfod(struct sp_locator *l,
				      const struct query *q)
{
	const char *path;

	if (!l->dbgd)
		return NULL;
	path = sp_debuginfod_find(l->dbgd, SP_DEBUGINFOD_EXECUTABLE, q->bid,
				  q->len);
	return path ? sp_elf_cache_get(l->cache, path) : NULL;
}

static struct sp_elf *debug_file(struct sp_locator *l, const char *root,
				 const struct query *q)
{
	char hex[2 * SP_BUILD_ID_MAX + 1], path[4096];
	int n;

	sp_build_id_hex(q->bid, q->len, hex);
	n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root,
		     hex, hex + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return NULL;
	return sp_elf_cache_get(l->cache, path);
}

static struct sp_elf *from_debug(struct sp_locator *l, const struct query *q)
{
	struct sp_elf *e;
	size_t i;

	for (i = 0; i < l->nroots; i++)
		if ((e = debug_file(l, l->roots[i], q)) && same_id(e, q))
			return e;
	if (l->no_system_debug)
		return NULL;
	return debug_file(l, SYSTEM_DEBUG, q);
}

/* In order: the first whose file has the recorded build-id wins. */
static const struct source sources[] = {
	{ SP_FROM_STORE, from_store },
	{ SP_FROM_PATH, from_path },
	{ SP_FROM_DEBUGINFOD, from_debuginfod },
	{ SP_FROM_DEBUG, from_debug },
};

const char *sp_elf_from_name(unsigned from)
{
	static const char *const names[SP_FROM_MAX] = {
		"none", "store", "path", "debug", "debuginfod",
	};

	return from < SP_FROM_MAX ? names[from] : "none";
}

struct sp_locator *sp_locator_new(struct sp_elf_cache *cache)
{
	struct sp_locator *l = calloc(1, sizeof(*l));
	char dir[4096];

	if (!l)
		return NULL;
	l->cache = cache;
	l->dbgd = sp_debuginfod_new(&l->dbgd_why);
	if (!sp_bidstore_default_dir(dir, sizeof(dir)) &&
	    !(l->store = strdup(dir))) {
		sp_debuginfod_free(l->dbgd);
		free(l);
		return NULL;
	}
	return l;
}

void sp_locator_free(struct sp_locator *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->nroots; i++)
		free(l->roots[i]);
	free(l->roots);
	free(l->store);
	sp_debuginfod_free(l->dbgd);
	free(l);
}

int sp_locator_set_store(struct sp_locator *l, const char *dir)
{
	char *d = NULL;

	if (dir && !(d = strdup(dir)))
		return -ENOMEM;
	free(l->store);
	l->store = d;
	return 0;
}

const char *sp_locator_store(const struct sp_locator *l)
{
	return l->store;
}

int sp_locator_add_debug_root(struct sp_locator *l, const char *dir)
{
	char *d;

	if (SP_GROW(l->roots, l->cap, l->nroots + 1))
		return -ENOMEM;
	d = strdup(dir);
	if (!d)
		return -ENOMEM;
	l->roots[l->nroots++] = d;
	return 0;
}

struct sp_debuginfod *sp_locator_debuginfod(const struct sp_locator *l,
					    const char **why)
{
	if (why)
		*why = l->dbgd_why;
	return l->dbgd;
}

void sp_locator_set_system_debug(struct sp_locator *l, int on)
{
	l->no_system_debug = !on;
}

struct sp_elf *sp_locate(struct sp_locator *l, const char *path,
			 const uint8_t *bid, size_t bid_len,
			 enum sp_elf_from *from)
{
	struct query q = { path, bid, bid_len > SP_BUILD_ID_MAX ?
			   SP_BUILD_ID_MAX : bid_len };
	struct sp_elf *e = NULL;
	size_t i;

	if (from)
		*from = SP_FROM_NONE;
	if (!q.len) {
		/* nothing to check against: the path is all there is */
		e = sp_elf_cache_get(l->cache, path);
		if (e && from)
			*from = SP_FROM_PATH;
		return e;
	}
	for (i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		e = sources[i].find(l, &q);
		if (e && same_id(e, &q)) {
			if (from)
				*from = sources[i].from;
			return e;
		}
	}
	return NULL;
}
