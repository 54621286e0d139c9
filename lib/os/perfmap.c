/* SPDX-License-Identifier: MIT */
/* perfmap.c: perf-PID.map files, opened safely, parsed into a lookup table. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/search.h"
#include "base/grow.h"
#include "base/symrule.h"
#include "perfmap.h"

#define OVERLAP_SCAN 64		/* entries looked back for overlapping code */

struct sp_perfmap {
	struct sp_pmsym *syms;	/* sorted by start, then seq */
	size_t n, cap;
	uint64_t *reach;	/* [i]: the last byte syms[0..i] cover */
	size_t reach_cap;
	uint32_t seq;		/* lines read so far */
};

int sp_perfmap_path(char *buf, size_t n, const char *dir, uint32_t pid)
{
	int len = snprintf(buf, n, "%s/perf-%" PRIu32 ".map",
			   dir ? dir : SP_PERFMAP_DIR, pid);

	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

/* Whether uid may have written pid's map when its owner is not known. */
static int trusted(uid_t uid, uint32_t pid)
{
	char proc[32];
	struct stat ps;

	if (uid == 0 || uid == geteuid())
		return 1;
	snprintf(proc, sizeof(proc), "/proc/%" PRIu32, pid);
	return !stat(proc, &ps) && ps.st_uid == uid;
}

int sp_perfmap_open(const char *dir, uint32_t pid, uid_t owner,
		    struct stat *st)
{
	char path[4096];
	struct stat sb;
	int fd, e;

	if ((e = sp_perfmap_path(path, sizeof(path), dir, pid)))
		return e;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) ||
	    (owner == SP_PERFMAP_ANY_OWNER ? !trusted(sb.st_uid, pid) :
	     sb.st_uid != owner)) {
		close(fd);
		return -EPERM;
	}
	if (st)
		*st = sb;
	return fd;
}

struct sp_perfmap *sp_perfmap_new(void)
{
	return calloc(1, sizeof(struct sp_perfmap));
}

void sp_perfmap_clear(struct sp_perfmap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free((char *)m->syms[i].name);
	m->n = 0;
	m->seq = 0;
}

void sp_perfmap_free(struct sp_perfmap *m)
{
	if (!m)
		return;
	sp_perfmap_clear(m);
	free(m->syms);
	free(m->reach);
	free(m);
}

size_t sp_perfmap_count(const struct sp_perfmap *m)
{
	return m->n;
}

static int pmsym_cmp(const void *a, const void *b)
{
	const struct sp_pmsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "START SIZE name" of len bytes (no newline): hex, 0x tolerated.  0 or -1. */
static int parse_line(const char *line, size_t len, struct sp_pmsym *sym,
		      size_t *name_len)
{
	char buf[40], *end;
	size_t i, f = 0, k;
	uint64_t v[2];

	/* two hex fields, each followed by one space */
	for (i = 0; f < 2; f++) {
		for (k = 0; i < len && line[i] != ' ' && k < sizeof(buf) - 1; )
			buf[k++] = line[i++];
		if (!k || i >= len || line[i] != ' ')
			return -1;
		buf[k] = 0;
		errno = 0;
		v[f] = strtoull(buf, &end, 16);
		if (*end || errno)
			return -1;
		i++;
	}
	sym->start = v[0];
	sym->size = v[1];
	*name_len = len - i;
	while (*name_len && line[i + *name_len - 1] == '\r')
		(*name_len)--;
	if (!sym->size || !*name_len || memchr(line + i, 0, *name_len))
		return -1;
	sym->name = line + i;
	return 0;
}

/*
 * Sort the entries from before on and merge them into the sorted ones ahead
 * of them (all older, so an equal start keeps them first), then bring reach
 * up to date from the first place that changed.  A JIT's map grows by a few
 * lines at a time: each addition costs the new lines' sort and one pass.
 */
static int merge_new(struct sp_perfmap *m, size_t before)
{
	size_t i = 0, j = before, k = 0, from;
	struct sp_pmsym *v;

	qsort(m->syms + before, m->n - before, sizeof(*m->syms), pmsym_cmp);
	if (SP_GROW(m->reach, m->reach_cap, m->n))
		return -ENOMEM;
	from = before ? SP_COUNT_LE(m->syms, before, start,
				    m->syms[before].start) : 0;
	if (from < before) {
		v = malloc((m->n - from) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = from; i < before || j < m->n; )
			v[k++] = j >= m->n || (i < before &&
				pmsym_cmp(&m->syms[i], &m->syms[j]) <= 0) ?
				m->syms[i++] : m->syms[j++];
		memcpy(m->syms + from, v, k * sizeof(*v));
		free(v);
	}
	SP_REACH_FILL(m->reach, m->syms, m->n, start, size, from);
	return 0;
}

int sp_perfmap_add(struct sp_perfmap *m, const char *text, size_t len)
{
	size_t off = 0, before = m->n, lines = 1;
	const char *p = text, *end = text + len;

	/* room for every line at once: a JIT's map is thousands of them */
	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		lines++;
		p++;
	}
	if (SP_GROW(m->syms, m->cap, m->n + lines))
		return -ENOMEM;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - (text + off)) : len - off;
		struct sp_pmsym sym;
		size_t name_len;
		char *name;

		m->seq++;
		if (!parse_line(text + off, ll, &sym, &name_len)) {
			name = strndup(sym.name, name_len);
			if (!name)
				goto nomem;
			sym.name = name;
			sym.seq = m->seq;
			m->syms[m->n++] = sym;
		}
		off += ll + 1;
	}
	if (m->n != before && merge_new(m, before))
		goto nomem;
	return 0;
nomem:
	/* the table stays what it was before this text */
	while (m->n > before)
		free((char *)m->syms[--m->n].name);
	return -ENOMEM;
}

int sp_perfmap_read(struct sp_perfmap *m, int fd)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int e;

	for (;;) {
		ssize_t r;

		if (SP_GROW(buf, cap, len + 65536)) {
			free(buf);
			return -ENOMEM;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = -errno;
			free(buf);
			return e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	e = sp_perfmap_add(m, buf, len);
	free(buf);
	return e;
}

const struct sp_pmsym *sp_perfmap_find(const struct sp_perfmap *m,
				       uint64_t addr)
{
	const struct sp_pmsym *best = NULL;
	size_t lo = SP_COUNT_LE(m->syms, m->n, start, addr), i, scanned;

	for (i = lo, scanned = 0; i-- > 0 && scanned < OVERLAP_SCAN; scanned++) {
		const struct sp_pmsym *e = &m->syms[i];

		if (m->reach[i] < addr)
			break;	/* nothing from here down gets to addr */
		if (addr - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

static const void *find(void *m, uint64_t addr)
{
	return sp_perfmap_find(m, addr);
}

const struct sp_pmsym *sp_perfmap_lookup(const struct sp_perfmap *m,
					 uint64_t addr, int precise)
{
	return sp_sym_pick(find, (void *)m, addr, precise, NULL);
}
