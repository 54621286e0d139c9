/* SPDX-License-Identifier: MIT */
/* debuginfod.c: files by build-id from debuginfod servers, asked once each. */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "buildid.h"
#include "debuginfod.h"

#define LIBDEBUGINFOD "libdebuginfod.so.1"

typedef debuginfod_client *begin_fn(void);
typedef void end_fn(debuginfod_client *);
typedef int find_fn(debuginfod_client *, const unsigned char *, int, char **);

struct sp_debuginfod {
	debuginfod_client *client;
	end_fn *end;
	find_fn *find[2];	/* by enum sp_debuginfod_kind */
	struct sp_strtab keys;	/* "K HEX": its index in paths */
	char **paths;		/* NULL: asked, not found */
	size_t npaths, cap;
	struct sp_debuginfod_stats st;
};

struct sp_debuginfod *sp_debuginfod_new(const char **why)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct sp_debuginfod *d;
	begin_fn *begin;
	void *lib;

	if (why)
		*why = NULL;
	if (!urls || !urls[strspn(urls, " \t")])
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d) {
		if (why)
			*why = "out of memory";
		return NULL;
	}
	lib = dlopen(LIBDEBUGINFOD, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		if (why)
			*why = "cannot load " LIBDEBUGINFOD " (Debian: libdebuginfod1)";
		free(d);
		return NULL;
	}
	begin = (begin_fn *)dlsym(lib, "debuginfod_begin");
	d->end = (end_fn *)dlsym(lib, "debuginfod_end");
	d->find[SP_DEBUGINFOD_EXECUTABLE] =
		(find_fn *)dlsym(lib, "debuginfod_find_executable");
	d->find[SP_DEBUGINFOD_DEBUGINFO] =
		(find_fn *)dlsym(lib, "debuginfod_find_debuginfo");
	/* once loaded, never unloaded: libcurl's and TLS's set-up is not
	   undone, as with libdw's own use of libdebuginfod */
	if (!begin || !d->end || !d->find[0] || !d->find[1] ||
	    !(d->client = begin())) {
		if (why)
			*why = LIBDEBUGINFOD " has no usable client";
		dlclose(lib);
		free(d);
		return NULL;
	}
	return d;
}

void sp_debuginfod_free(struct sp_debuginfod *d)
{
	size_t i;

	if (!d)
		return;
	d->end(d->client);
	for (i = 0; i < d->npaths; i++)
		free(d->paths[i]);
	free(d->paths);
	sp_strtab_release(&d->keys);
	free(d);
}

const char *sp_debuginfod_find(struct sp_debuginfod *d,
			       enum sp_debuginfod_kind kind,
			       const uint8_t *bid, size_t len)
{
	char key[2 + 2 * SP_BUILD_ID_MAX + 1], *path = NULL;
	int64_t i;
	int fd;

	if (!len || len > SP_BUILD_ID_MAX ||
	    (kind != SP_DEBUGINFOD_EXECUTABLE && kind != SP_DEBUGINFOD_DEBUGINFO))
		return NULL;
	key[0] = kind == SP_DEBUGINFOD_EXECUTABLE ? 'x' : 'd';
	key[1] = ' ';
	sp_build_id_hex(bid, len, key + 2);
	/* room first: a new key has the next index, and takes it */
	if (SP_GROW(d->paths, d->cap, d->npaths + 1))
		return NULL;
	i = sp_strtab_intern(&d->keys, key);
	if (i < 0)
		return NULL;
	if ((size_t)i < d->npaths)
		return d->paths[i];
	d->st.asked++;
	fd = d->find[kind](d->client, bid, (int)len, &path);
	if (fd >= 0) {
		close(fd);
		d->st.found++;
	} else {
		free(path);
		path = NULL;
	}
	d->paths[d->npaths++] = path;
	return path;
}

const struct sp_debuginfod_stats *
sp_debuginfod_stats(const struct sp_debuginfod *d)
{
	return &d->st;
}
