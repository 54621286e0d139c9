// SPDX-License-Identifier: MIT
/*
 * fuzz-perfmap.c: JIT perf maps (os/perfmap.h) as the symbolizer reads them:
 * the whole file through sp_perfmap_read(), the same text added in two
 * pieces cut at a line end (as PERFMAP records bring it) which must give
 * the same table, then lookups at the addresses the lines name and their
 * neighbours.  Every answer must hold its address and have a name.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/perfmap.h"
#include "fuzz.h"

#define MAX_PROBES 128

/* The entry must hold addr and carry a name the table owns. */
static void check(const struct sp_pmsym *e, uint64_t addr)
{
	if (!e)
		return;
	if (addr - e->start >= e->size || !e->name || !*e->name ||
	    strchr(e->name, '\n'))
		abort();
}

/* A frame's symbol holds addr, or addr - 1 for a return address. */
static void check_pick(const struct sp_pmsym *e, uint64_t addr, int precise)
{
	if (e && !precise && addr && addr - 1 - e->start < e->size)
		check(e, addr - 1);
	else
		check(e, addr);
}

/* The two tables give the same answer at addr. */
static void same(const struct sp_perfmap *a, const struct sp_perfmap *b,
		 uint64_t addr)
{
	const struct sp_pmsym *x = sp_perfmap_find(a, addr);
	const struct sp_pmsym *y = sp_perfmap_find(b, addr);

	check(x, addr);
	if (!x != !y || (x && (x->start != y->start || x->size != y->size ||
			       x->seq != y->seq || strcmp(x->name, y->name))))
		abort();
	check_pick(sp_perfmap_lookup(a, addr, 0), addr, 0);
	check_pick(sp_perfmap_lookup(a, addr, 1), addr, 1);
}

/*
 * Addresses worth asking: what each line's two numbers say, loosely read,
 * their ends and neighbours, and the ends of the address space.
 */
static size_t probes(const char *text, uint64_t *v)
{
	const char *p = text;
	size_t n = 0;

	v[n++] = 0;
	v[n++] = UINT64_MAX;
	while (p && *p && n + 6 <= MAX_PROBES) {
		char *end;
		uint64_t a = strtoull(p, &end, 16), s;

		s = strtoull(end, NULL, 16);
		v[n++] = a;
		v[n++] = a - 1;
		v[n++] = a + 1;
		v[n++] = a + s / 2;
		v[n++] = a + s - 1;
		v[n++] = a + s;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_perfmap *whole = sp_perfmap_new(), *parts = sp_perfmap_new();
	const char *text = (const char *)data, *nl;
	char *str = fz_strdup(data, size);
	uint64_t v[MAX_PROBES];
	size_t cut, n, i;
	int fd;

	if (!whole || !parts)
		abort();
	fd = fz_memfd(data, size);
	if (sp_perfmap_read(whole, fd))
		abort();
	close(fd);

	/* the same lines in two pieces, cut after a newline near the middle */
	nl = size ? memchr(text + size / 2, '\n', size - size / 2) : NULL;
	cut = nl ? (size_t)(nl - text) + 1 : size;
	if (sp_perfmap_add(parts, text, cut) ||
	    sp_perfmap_add(parts, text + cut, size - cut))
		abort();
	if (sp_perfmap_count(whole) != sp_perfmap_count(parts))
		abort();

	n = probes(str, v);
	for (i = 0; i < n; i++)
		same(whole, parts, v[i]);

	/* a table cleared and filled again is the same table */
	sp_perfmap_clear(parts);
	if (sp_perfmap_count(parts) ||
	    sp_perfmap_add(parts, text, size) ||
	    sp_perfmap_count(whole) != sp_perfmap_count(parts))
		abort();
	for (i = 0; i < n && i < 16; i++)
		same(whole, parts, v[i]);

	free(str);
	sp_perfmap_free(whole);
	sp_perfmap_free(parts);
	return 0;
}
