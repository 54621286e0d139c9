/* SPDX-License-Identifier: MIT */
/* jitdump.c: bounds-checked parser of perf's jitdump format. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/search.h"
#include "base/grow.h"
#include "base/hashtab.h"
#include "jitdump.h"

#define HEADER_MIN 40		/* magic .. flags */
#define REC_HDR 16		/* id, total_size, timestamp */

struct sp_jitdump {
	uint8_t *data;
	size_t len, parsed;
	uint32_t pid;
	struct sp_jit_code *codes;	/* sorted by addr, then seq */
	size_t n, cap;
	uint64_t *reach;		/* search.h: sp_reach_fill() */
	struct sp_jit_line *lines;	/* all DEBUG_INFO entries */
	size_t nlines, caplines;
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int sp_jitdump_is_path(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	if (strncmp(b, "jit-", 4))
		return 0;
	n = strspn(b + 4, "0123456789");
	return n > 0 && !strcmp(b + 4 + n, ".dump");
}

void sp_jitdump_free(struct sp_jitdump *j)
{
	if (!j)
		return;
	free(j->data);
	free(j->codes);
	free(j->reach);
	free(j->lines);
	free(j);
}

uint32_t sp_jitdump_pid(const struct sp_jitdump *j)
{
	return j->pid;
}

size_t sp_jitdump_count(const struct sp_jitdump *j)
{
	return j->n;
}

size_t sp_jitdump_parsed(const struct sp_jitdump *j)
{
	return j->parsed;
}

static struct sp_jit_code *code_add(struct sp_jitdump *j)
{
	if (SP_GROW(j->codes, j->cap, j->n + 1))
		return NULL;
	memset(&j->codes[j->n], 0, sizeof(j->codes[0]));
	j->codes[j->n].seq = (uint32_t)j->n;
	return &j->codes[j->n++];
}

/* A NUL-terminated string in [p, end), or NULL. */
static const char *str_in(const uint8_t *p, const uint8_t *end)
{
	return memchr(p, 0, (size_t)(end - p)) ? (const char *)p : NULL;
}

/* Pending DEBUG_INFO / UNWINDING_INFO, for the next load. */
struct pending {
	uint64_t dbg_addr;
	size_t dbg_first, dbg_n;
	int has_dbg;
	const uint8_t *unwind;
	uint64_t unwind_size, ehf_size, mapped_size;
};

static int parse_debug(struct sp_jitdump *j, const uint8_t *p,
		       const uint8_t *end, struct pending *pd)
{
	uint64_t nr, i;
	const char *prev = NULL;

	if (end - p < 16)
		return -EINVAL;
	pd->dbg_addr = rd64(p);
	nr = rd64(p + 8);
	p += 16;
	pd->dbg_first = j->nlines;
	pd->dbg_n = 0;
	pd->has_dbg = 1;
	for (i = 0; i < nr; i++) {
		struct sp_jit_line *l;
		const char *name;

		if (end - p < 16)
			return -EINVAL;
		if (SP_GROW(j->lines, j->caplines, j->nlines + 1))
			return -ENOMEM;
		l = &j->lines[j->nlines];
		l->addr = rd64(p);
		l->line = rd32(p + 8);
		p += 16;	/* line, discrim */
		/* "\xff\0": the same file as the previous entry */
		if (end - p >= 2 && p[0] == 0xff && p[1] == 0) {
			name = prev;
			p += 2;
		} else {
			name = str_in(p, end);
			if (!name)
				return -EINVAL;
			p += strlen(name) + 1;
		}
		l->file = name;
		prev = name;
		j->nlines++;
		pd->dbg_n++;
	}
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	const struct sp_jit_line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int code_cmp(const void *a, const void *b)
{
	const struct sp_jit_code *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct dbgref {
	size_t first, n;
};

static int parse_records(struct sp_jitdump *j, size_t off,
			 struct dbgref **refs_out, size_t *nrefs)
{
	struct pending pd = { 0 };
	struct dbgref *refs = NULL;
	/* code address -> index of the last code there, for CODE_MOVE */
	struct sp_u64map last = { 0 };
	struct sp_u64slot *slot;
	size_t caprefs = 0;
	int r = 0;

	while (j->len - off >= REC_HDR) {
		const uint8_t *p = j->data + off;
		uint32_t id = rd32(p), size = rd32(p + 4);
		const uint8_t *end = p + size, *b = p + REC_HDR;
		struct sp_jit_code *c;

		if (size < REC_HDR || size > j->len - off)
			break;	/* cut short: keep what came before */
		switch (id) {
		case SP_JIT_CODE_LOAD: {
			const char *name;

			if (end - b < 40 || !(name = str_in(b + 40, end))) {
				r = -EINVAL;
				break;
			}
			c = code_add(j);
			if (!c) {
				r = -ENOMEM;
				break;
			}
			c->addr = rd64(b + 16);
			c->size = rd64(b + 24);
			c->index = rd64(b + 32);
			c->name = name;
			slot = sp_u64map_get(&last, c->addr, NULL);
			if (!slot) {
				r = -ENOMEM;
				break;
			}
			slot->val = (uint64_t)(c - j->codes);
			if (pd.has_dbg && pd.dbg_addr == c->addr) {
				if (j->n > caprefs) {
					size_t old = caprefs;

					if (SP_GROW(refs, caprefs, j->n)) {
						r = -ENOMEM;
						break;
					}
					memset(refs + old, 0,
					       (caprefs - old) * sizeof(*refs));
				}
				refs[j->n - 1] = (struct dbgref){ pd.dbg_first,
					pd.dbg_n };
			}
			pd.has_dbg = 0;
			if (pd.unwind) {
				c->unwind = pd.unwind;
				c->unwind_size = pd.unwind_size;
				c->eh_frame_hdr_size = pd.ehf_size;
				c->mapped_size = pd.mapped_size;
				pd.unwind = NULL;
			}
			break;
		}
		case SP_JIT_CODE_MOVE: {
			const char *name = "[moved]";
			uint64_t from, to;

			if (end - b < 48) {
				r = -EINVAL;
				break;
			}
			from = rd64(b + 16);
			to = rd64(b + 24);
			slot = sp_u64map_find(&last, from);
			if (slot)
				name = j->codes[slot->val].name;
			c = code_add(j);
			if (!c) {
				r = -ENOMEM;
				break;
			}
			c->addr = to;
			c->size = rd64(b + 32);
			c->index = rd64(b + 40);
			c->name = name;
			slot = sp_u64map_get(&last, to, NULL);
			if (!slot) {
				r = -ENOMEM;
				break;
			}
			slot->val = (uint64_t)(c - j->codes);
			break;
		}
		case SP_JIT_CODE_DEBUG_INFO:
			r = parse_debug(j, b, end, &pd);
			break;
		case SP_JIT_CODE_UNWINDING_INFO:
			if (end - b < 24 || rd64(b) > (uint64_t)(end - b - 24) ||
			    rd64(b + 8) > rd64(b)) {
				r = -EINVAL;
				break;
			}
			pd.unwind_size = rd64(b);
			pd.ehf_size = rd64(b + 8);
			pd.mapped_size = rd64(b + 16);
			pd.unwind = b + 24;
			break;
		case SP_JIT_CODE_CLOSE:
			off = j->len;
			continue;
		default:
			break;	/* a record of a later version */
		}
		if (r == -ENOMEM)
			break;
		if (r) {
			r = 0;
			break;	/* a malformed record ends the dump */
		}
		off += size;
		j->parsed = off;
	}
	sp_u64map_release(&last);
	*refs_out = refs;
	*nrefs = caprefs;
	return r;
}

struct sp_jitdump *sp_jitdump_parse(const void *data, size_t len, int *err)
{
	struct sp_jitdump *j = calloc(1, sizeof(*j));
	struct dbgref *refs = NULL;
	uint32_t hsize;
	size_t i, nrefs = 0;

	*err = -ENOMEM;
	if (!j)
		return NULL;
	j->data = malloc(len ? len : 1);
	if (!j->data)
		goto err;
	memcpy(j->data, data, len);
	j->len = len;
	*err = -EINVAL;
	if (len < HEADER_MIN)
		goto err;
	if (rd32(j->data) != SP_JITDUMP_MAGIC) {
		if (rd32(j->data) == __builtin_bswap32(SP_JITDUMP_MAGIC))
			*err = -EPROTONOSUPPORT;
		goto err;
	}
	hsize = rd32(j->data + 8);
	if (hsize < HEADER_MIN || hsize > len)
		goto err;
	j->pid = rd32(j->data + 20);
	j->parsed = hsize;
	*err = parse_records(j, hsize, &refs, &nrefs);
	if (*err)
		goto err;
	/* attach line tables now that j->lines no longer moves */
	for (i = 0; i < nrefs && i < j->n; i++) {
		if (!refs[i].n)
			continue;
		j->codes[i].lines = j->lines + refs[i].first;
		j->codes[i].nlines = refs[i].n;
		qsort(j->lines + refs[i].first, refs[i].n, sizeof(*j->lines),
		      line_cmp);
	}
	free(refs);
	refs = NULL;
	if (j->n)
		qsort(j->codes, j->n, sizeof(*j->codes), code_cmp);
	*err = -ENOMEM;
	j->reach = malloc((j->n ? j->n : 1) * sizeof(*j->reach));
	if (!j->reach)
		goto err;
	SP_REACH_FILL(j->reach, j->codes, j->n, addr, size, 0);
	*err = 0;
	return j;
err:
	free(refs);
	sp_jitdump_free(j);
	return NULL;
}

struct sp_jitdump *sp_jitdump_load(const char *path, int *err)
{
	struct sp_jitdump *j;
	struct stat sb;
	uint8_t *buf;
	size_t got = 0;
	int fd;

	/* O_NONBLOCK: a fifo planted in /tmp must not hang us */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size > (1l << 31)) {
		close(fd);
		*err = -EINVAL;
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (!buf) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	j = sp_jitdump_parse(buf, got, err);
	free(buf);
	return j;
}

const struct sp_jit_code *sp_jitdump_find(const struct sp_jitdump *j,
					  uint64_t addr)
{
	const struct sp_jit_code *best = NULL;
	size_t lo = SP_COUNT_LE(j->codes, j->n, addr, addr), i, k;

	for (i = lo, k = 0; i-- > 0 && k < 64; k++) {
		const struct sp_jit_code *c = &j->codes[i];

		if (j->reach[i] < addr)
			break;	/* nothing from here down gets to addr */
		if (addr - c->addr < c->size && (!best || c->seq > best->seq))
			best = c;
	}
	return best;
}

const struct sp_jit_line *sp_jit_code_line(const struct sp_jit_code *c,
					   uint64_t addr)
{
	size_t lo = SP_COUNT_LE(c->lines, c->nlines, addr, addr);

	return lo ? &c->lines[lo - 1] : NULL;
}
