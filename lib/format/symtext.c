/* SPDX-License-Identifier: MIT */
/* symtext.c: writer and parser of the symbolized text stream. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symtext.h"

static const char *const type_names[] = {
	[SP_ST_EVENT] = "event",
	[SP_ST_COMM] = "comm",
	[SP_ST_STACK] = "stack",
	[SP_ST_FRAME] = "frame",
	[SP_ST_SAMPLE] = "sample",
	[SP_ST_LOST] = "lost",
	[SP_ST_SUMMARY] = "summary",
	[SP_ST_START] = "start",
	[SP_ST_MAP] = "map",
	[SP_ST_GONE] = "gone",
	[SP_ST_OFFCPU] = "offcpu",
};

#define NTYPES (sizeof(type_names) / sizeof(type_names[0]))

static const char *type_name(unsigned t)
{
	return type_names[t] ? type_names[t] : "";
}

/* Writer */

/*
 * The hot lines (frames and samples) are put together by hand: printf's
 * format parsing was a third of a symbolizer's time on long recordings.
 */

/* Append s; returns the end. */
static char *cat_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* Append v in decimal; returns the end. */
static char *cat_dec(char *p, uint64_t v)
{
	char digits[20];
	size_t n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = digits[--n];
	return p;
}

/* Append v as 0x and lowercase hex digits; returns the end. */
static char *cat_hex(char *p, uint64_t v)
{
	char digits[16];
	size_t n = 0;

	do
		digits[n++] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	*p++ = '0';
	*p++ = 'x';
	while (n)
		*p++ = digits[--n];
	return p;
}

/* Append v in decimal, or "-" for 0; returns the end. */
static char *cat_dec_or_none(char *p, uint32_t v)
{
	if (!v) {
		*p++ = '-';
		return p;
	}
	return cat_dec(p, v);
}

/* Write s escaped, or "-" for NULL. */
static int put_field(struct sp_out *out, const char *s)
{
	const char *run;
	size_t plain;
	int r;

	if (!s)
		return sp_out_write(out, "-", 1);
	plain = strcspn(s, "\t\n\\");
	if (!s[plain] && strcmp(s, "-"))
		return sp_out_write(out, s, plain);
	if (!strcmp(s, "-"))
		return sp_out_write(out, "\\-", 2);
	for (run = s; *s; s++) {
		const char *esc;

		switch (*s) {
		case '\t': esc = "\\t"; break;
		case '\n': esc = "\\n"; break;
		case '\\': esc = "\\\\"; break;
		default: continue;
		}
		r = sp_out_write(out, run, (size_t)(s - run));
		if (!r)
			r = sp_out_write(out, esc, 2);
		if (r)
			return r;
		run = s + 1;
	}
	return sp_out_write(out, run, (size_t)(s - run));
}

int sp_st_write_magic(struct sp_out *out)
{
	return sp_out_printf(out, "%s %d\n", SP_SYMTEXT_MAGIC,
			     SP_SYMTEXT_VERSION);
}

static int write_frame(struct sp_out *out, const struct sp_st_frame *fr)
{
	const struct sp_frame *f = &fr->f;
	char head[160], tail[48], *p;
	int r;

	static const char *const flag_names[4] = {
		"-", "hidden", "no-build-id", "hidden,no-build-id",
	};

	/* at most 6 + 3 * 11 + 3 * 20 + 19: the names are a word each */
	p = cat_str(head, "frame\t");
	p = cat_dec(p, fr->pid);
	*p++ = '\t';
	p = cat_dec(p, fr->id);
	*p++ = '\t';
	p = cat_dec(p, fr->index);
	*p++ = '\t';
	p = cat_str(p, sp_frame_kind_name(f->kind));
	*p++ = '\t';
	p = cat_str(p, sp_frame_origin_name(f->origin));
	*p++ = '\t';
	p = cat_str(p, flag_names[f->flags & (SP_SYMF_HIDDEN | SP_SYMF_NO_BUILDID)]);
	*p++ = '\t';
	p = cat_hex(p, f->addr);
	*p++ = '\t';
	r = sp_out_write(out, head, (size_t)(p - head));
	if (!r)
		r = put_field(out, f->function ? f->function : "[unknown]");
	if (!r)
		r = sp_out_write(out, "\t", 1);
	if (!r)
		r = put_field(out, f->module);
	if (!r)
		r = sp_out_write(out, "\t", 1);
	if (!r)
		r = put_field(out, f->file);
	if (r)
		return r;
	p = tail;
	*p++ = '\t';
	p = cat_dec_or_none(p, f->line);
	if (!f->symbol && !f->decl_line) {
		*p++ = '\n';
		return sp_out_write(out, tail, (size_t)(p - tail));
	}
	/* the symbol and the function's first line, when known */
	*p++ = '\t';
	r = sp_out_write(out, tail, (size_t)(p - tail));
	if (!r)
		r = put_field(out, f->symbol);
	if (r)
		return r;
	p = tail;
	*p++ = '\t';
	p = cat_dec_or_none(p, f->decl_line);
	*p++ = '\n';
	return sp_out_write(out, tail, (size_t)(p - tail));
}

static int write_sample(struct sp_out *out, const struct sp_st_rec *rec)
{
	char line[128], *p;

	p = cat_str(line, type_name(rec->type));
	*p++ = '\t';
	p = cat_dec(p, rec->u.sample.time);
	*p++ = '\t';
	p = cat_dec(p, rec->u.sample.pid);
	*p++ = '\t';
	p = cat_dec(p, rec->u.sample.tid);
	*p++ = '\t';
	p = cat_dec(p, rec->u.sample.cpu);
	*p++ = '\t';
	p = cat_dec(p, rec->u.sample.weight);
	*p++ = '\t';
	p = cat_dec(p, rec->u.sample.id);
	*p++ = '\n';
	return sp_out_write(out, line, (size_t)(p - line));
}

int sp_st_write(struct sp_out *out, const struct sp_st_rec *rec)
{
	const struct sp_st_summary *s;
	int r;

	switch (rec->type) {
	case SP_ST_EVENT:
		r = sp_out_write(out, "event\t", 6);
		if (!r)
			r = put_field(out, rec->u.event.name);
		if (!r)
			r = sp_out_printf(out, "\t%s\t%" PRIu64 "\n",
					  rec->u.event.freq ? "freq" : "period",
					  rec->u.event.value);
		return r;
	case SP_ST_COMM:
		r = sp_out_printf(out, "comm\t%" PRIu64 "\t%" PRIu32 "\t%"
				  PRIu32 "\t", rec->u.comm.time,
				  rec->u.comm.pid, rec->u.comm.tid);
		if (!r)
			r = put_field(out, rec->u.comm.name ? rec->u.comm.name : "");
		if (!r)
			r = sp_out_printf(out, "\t%s\n",
					  rec->u.comm.exec ? "exec" : "-");
		return r;
	case SP_ST_STACK:
		r = sp_out_printf(out, "stack\t%" PRIu32 "\t%" PRIu32 "\t%"
				  PRIu32 "\t", rec->u.stack.pid,
				  rec->u.stack.id, rec->u.stack.nframes);
		if (!r)
			r = put_field(out, rec->u.stack.end);
		if (!r)
			r = sp_out_write(out, "\t", 1);
		if (!r)
			r = put_field(out, rec->u.stack.flags);
		if (!r)
			r = sp_out_write(out, "\n", 1);
		return r;
	case SP_ST_FRAME:
		return write_frame(out, &rec->u.frame);
	case SP_ST_SAMPLE:
	case SP_ST_OFFCPU:
		return write_sample(out, rec);
	case SP_ST_LOST:
		return sp_out_printf(out, "lost\t%" PRIu64 "\t%" PRIu64 "\n",
				     rec->u.lost.time, rec->u.lost.count);
	case SP_ST_START:
		return sp_out_printf(out, "start\t%" PRIu64 "\t%" PRIu64 "\n",
				     rec->u.start.time, rec->u.start.realtime);
	case SP_ST_GONE:
		if (rec->u.gone.has_tid)
			return sp_out_printf(out, "gone\t%" PRIu64 "\t%" PRIu32
					     "\t%" PRIu32 "\n", rec->u.gone.time,
					     rec->u.gone.pid, rec->u.gone.tid);
		return sp_out_printf(out, "gone\t%" PRIu64 "\t%" PRIu32 "\n",
				     rec->u.gone.time, rec->u.gone.pid);
	case SP_ST_MAP:
		r = sp_out_printf(out, "map\t%" PRIu64 "\t%" PRIu32 "\t0x%"
				  PRIx64 "\t0x%" PRIx64 "\t0x%" PRIx64 "\t",
				  rec->u.map.time, rec->u.map.pid,
				  rec->u.map.start, rec->u.map.end,
				  rec->u.map.pgoff);
		if (!r)
			r = put_field(out, rec->u.map.build_id);
		if (!r)
			r = sp_out_write(out, "\t", 1);
		if (!r)
			r = put_field(out, rec->u.map.path ? rec->u.map.path : "");
		if (!r)
			r = sp_out_write(out, "\n", 1);
		return r;
	case SP_ST_SUMMARY:
		s = &rec->u.summary;
		return sp_out_printf(out, "summary\tsamples=%" PRIu64
				     "\tlost=%" PRIu64 "\tstacks=%" PRIu64
				     "\tthreads=%" PRIu64 "\tprocesses=%" PRIu64
				     "\tduration_ns=%" PRIu64 "\tframes=%" PRIu64
				     "\tunresolved=%" PRIu64 "\tcomplete=%" PRIu64
				     "\ttruncated=%" PRIu64 "\tnoinfo=%" PRIu64
				     "\terror=%" PRIu64 "\tdepth=%" PRIu64
				     "\tnoregs=%" PRIu64 "\tspliced=%" PRIu64
				     "\tno_build_id=%" PRIu64 "\n",
				     s->samples, s->lost, s->stacks, s->threads,
				     s->processes, s->duration_ns, s->frames,
				     s->unresolved, s->complete, s->truncated,
				     s->noinfo, s->error, s->depth, s->noregs,
				     s->spliced, s->no_build_id);
	default:
		return -EINVAL;
	}
}

/* Parser */

#define MAX_FIELDS 16

/* Undo escapes of one field in place; NULL for "-". */
static const char *unescape(char *s, const char **err)
{
	char *d, *p;

	if (s[0] == '-' && s[1] == 0)
		return NULL;
	p = strchr(s, '\\');
	if (!p)
		return s;
	for (d = p; *p; p++) {
		if (*p != '\\') {
			*d++ = *p;
			continue;
		}
		switch (*++p) {
		case 't': *d++ = '\t'; break;
		case 'n': *d++ = '\n'; break;
		case '\\': *d++ = '\\'; break;
		case '-': *d++ = '-'; break;
		default:
			*err = "bad escape: only \\t \\n \\\\ \\- are defined";
			return s;
		}
	}
	*d = 0;
	return s;
}

static int parse_u64(const char *s, int base, uint64_t *v)
{
	uint64_t n = 0;
	int any = 0;

	if (!s)
		return -1;
	for (; *s; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (n > (UINT64_MAX - d) / (unsigned)base)
			return -1;
		n = n * (unsigned)base + d;
		any = 1;
	}
	if (!any)
		return -1;
	*v = n;
	return 0;
}

static int parse_u32(const char *s, uint32_t *v)
{
	uint64_t n;

	if (parse_u64(s, 10, &n) || n > UINT32_MAX)
		return -1;
	*v = (uint32_t)n;
	return 0;
}

/* The index whose name(i) is s, for i < n; -1 if none.  "" names none. */
static int lookup(const char *s, const char *(*name)(unsigned), unsigned n)
{
	unsigned i;

	for (i = 0; s && i < n; i++)
		if (*name(i) == *s && *s && !strcmp(s, name(i)))
			return (int)i;
	return -1;
}

/* A "0x" hex field. */
static int parse_hex(const char *s, uint64_t *v)
{
	return !s || strncmp(s, "0x", 2) || parse_u64(s + 2, 16, v);
}

static const char *parse_frame(const char **f, unsigned nf,
			       struct sp_st_frame *fr)
{
	const char *p;
	int k;

	if (nf < 12)
		return "need 12 fields";
	if (parse_u32(f[1], &fr->pid))
		return "PID is not a number";
	if (parse_u32(f[2], &fr->id))
		return "ID is not a number";
	if (parse_u32(f[3], &fr->index))
		return "INDEX is not a number";
	/* kinds and origins of later versions read as unknown and none */
	k = lookup(f[4], sp_frame_kind_name, SP_FK_MAX);
	if (!f[4])
		return "KIND is empty";
	fr->f.kind = (uint8_t)(k < 0 ? SP_FK_UNKNOWN : k);
	k = lookup(f[5], sp_frame_origin_name, SP_FO_MAX);
	if (!f[5])
		return "ORIGIN is empty";
	fr->f.origin = (uint8_t)(k < 0 ? SP_FO_NONE : k);
	fr->f.flags = 0;
	for (p = f[6]; p && *p; ) {
		size_t n = strcspn(p, ",");

		if (n == 6 && !strncmp(p, "hidden", 6))
			fr->f.flags |= SP_SYMF_HIDDEN;
		else if ((n == 11 && !strncmp(p, "no-build-id", 11)) ||
			 (n == 5 && !strncmp(p, "stale", 5)))
			fr->f.flags |= SP_SYMF_NO_BUILDID;
		p += n;
		if (*p)
			p++;
	}
	if (parse_hex(f[7], &fr->f.addr))
		return "ADDR is not a 0x hex number";
	fr->f.function = f[8] ? f[8] : "";
	fr->f.module = f[9];
	fr->f.file = f[10];
	fr->f.line = 0;
	if (f[11] && parse_u32(f[11], &fr->f.line))
		return "LINE is not a number";
	fr->f.symbol = NULL;
	fr->f.decl_line = 0;
	if (nf >= 13)
		fr->f.symbol = f[12];
	if (nf >= 14 && f[13] && parse_u32(f[13], &fr->f.decl_line))
		return "DECL is not a number";
	return NULL;
}

static const char *parse_map(const char **f, unsigned nf, struct sp_st_map *m)
{
	const char *p;

	if (nf < 8)
		return "need 8 fields";
	if (parse_u64(f[1], 10, &m->time))
		return "TIME is not a number";
	if (parse_u32(f[2], &m->pid))
		return "PID is not a number";
	if (parse_hex(f[3], &m->start))
		return "START is not a 0x hex number";
	if (parse_hex(f[4], &m->end) || m->end <= m->start)
		return "END is not a 0x hex number above START";
	if (parse_hex(f[5], &m->pgoff))
		return "PGOFF is not a 0x hex number";
	for (p = f[6]; p && *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return "BUILDID is not lowercase hex";
	if (f[6] && (!*f[6] || strlen(f[6]) % 2 || strlen(f[6]) > 64))
		return "BUILDID is not lowercase hex";
	m->build_id = f[6];
	m->path = f[7] ? f[7] : "";
	return NULL;
}

static const char *parse_summary(const char **f, unsigned nf,
				 struct sp_st_summary *s)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "samples", offsetof(struct sp_st_summary, samples) },
		{ "lost", offsetof(struct sp_st_summary, lost) },
		{ "stacks", offsetof(struct sp_st_summary, stacks) },
		{ "threads", offsetof(struct sp_st_summary, threads) },
		{ "processes", offsetof(struct sp_st_summary, processes) },
		{ "duration_ns", offsetof(struct sp_st_summary, duration_ns) },
		{ "frames", offsetof(struct sp_st_summary, frames) },
		{ "unresolved", offsetof(struct sp_st_summary, unresolved) },
		{ "complete", offsetof(struct sp_st_summary, complete) },
		{ "truncated", offsetof(struct sp_st_summary, truncated) },
		{ "noinfo", offsetof(struct sp_st_summary, noinfo) },
		{ "error", offsetof(struct sp_st_summary, error) },
		{ "depth", offsetof(struct sp_st_summary, depth) },
		{ "noregs", offsetof(struct sp_st_summary, noregs) },
		{ "spliced", offsetof(struct sp_st_summary, spliced) },
		{ "no_build_id", offsetof(struct sp_st_summary, no_build_id) },
	};
	unsigned i, j;

	memset(s, 0, sizeof(*s));
	for (i = 1; i < nf; i++) {
		const char *eq = f[i] ? strchr(f[i], '=') : NULL;
		uint64_t v;

		if (!eq || eq == f[i])
			return "fields must be KEY=VALUE";
		if (parse_u64(eq + 1, 10, &v))
			return "VALUE is not a number";
		for (j = 0; j < sizeof(keys) / sizeof(keys[0]); j++)
			if (strlen(keys[j].key) == (size_t)(eq - f[i]) &&
			    !strncmp(keys[j].key, f[i], (size_t)(eq - f[i])))
				*(uint64_t *)((char *)s + keys[j].off) = v;
	}
	return NULL;
}

const char *sp_st_parse(char *line, size_t len, struct sp_st_rec *rec)
{
	const char *f[MAX_FIELDS];
	const char *err = NULL;
	unsigned nf = 0, i;
	char *p = line, *end = line + len;
	int escaped;
	uint64_t v;
	int t;

	memset(rec, 0, sizeof(*rec));
	rec->type = SP_ST_UNKNOWN;
	if (memchr(line, 0, len))
		return "NUL byte in line";
	if (len == 0)
		return "empty line";
	for (;;) {
		char *tab = memchr(p, '\t', (size_t)(end - p));

		if (nf < MAX_FIELDS)
			f[nf++] = p;
		if (!tab)
			break;
		*tab = 0;
		p = tab + 1;
	}
	t = lookup(f[0], type_name, NTYPES);
	if (t < 0) {
		/* a kind of a later version: a lowercase keyword */
		for (p = line; *p; p++)
			if ((*p < 'a' || *p > 'z') && *p != '_' && *p != '-')
				return "not a record: unknown keyword";
		return NULL;
	}
	rec->type = (enum sp_st_type)t;
	escaped = memchr(line, '\\', len) != NULL;
	for (i = 1; i < nf; i++) {
		if (!escaped) {
			if (f[i][0] == '-' && !f[i][1])
				f[i] = NULL;
			continue;
		}
		f[i] = unescape((char *)f[i], &err);
		if (err)
			return err;
	}
	/* later versions may append fields: ignore what follows ours */
	switch (rec->type) {
	case SP_ST_EVENT:
		if (nf < 4)
			return "need 4 fields";
		rec->u.event.name = f[1] ? f[1] : "";
		if (f[2] && !strcmp(f[2], "freq"))
			rec->u.event.freq = 1;
		else if (!f[2] || strcmp(f[2], "period"))
			return "mode must be freq or period";
		if (parse_u64(f[3], 10, &rec->u.event.value))
			return "VALUE is not a number";
		return NULL;
	case SP_ST_COMM:
		if (nf < 6)
			return "need 6 fields";
		if (parse_u64(f[1], 10, &rec->u.comm.time))
			return "TIME is not a number";
		if (parse_u32(f[2], &rec->u.comm.pid))
			return "PID is not a number";
		if (parse_u32(f[3], &rec->u.comm.tid))
			return "TID is not a number";
		rec->u.comm.name = f[4] ? f[4] : "-";
		rec->u.comm.exec = f[5] && !strcmp(f[5], "exec");
		return NULL;
	case SP_ST_STACK:
		if (nf < 5)
			return "need 5 fields";
		if (parse_u32(f[1], &rec->u.stack.pid))
			return "PID is not a number";
		if (parse_u32(f[2], &rec->u.stack.id) || !rec->u.stack.id)
			return "ID is not a number from 1";
		if (parse_u32(f[3], &rec->u.stack.nframes))
			return "NFRAMES is not a number";
		rec->u.stack.end = f[4] ? f[4] : "-";
		rec->u.stack.flags = nf > 5 ? f[5] : NULL;
		return NULL;
	case SP_ST_FRAME:
		return parse_frame(f, nf, &rec->u.frame);
	case SP_ST_SAMPLE:
	case SP_ST_OFFCPU:
		if (nf < 7)
			return "need 7 fields";
		if (parse_u64(f[1], 10, &rec->u.sample.time))
			return "TIME is not a number";
		if (parse_u32(f[2], &rec->u.sample.pid))
			return "PID is not a number";
		if (parse_u32(f[3], &rec->u.sample.tid))
			return "TID is not a number";
		if (parse_u32(f[4], &rec->u.sample.cpu))
			return "CPU is not a number";
		if (parse_u64(f[5], 10, &rec->u.sample.weight))
			return "WEIGHT is not a number";
		if (parse_u32(f[6], &rec->u.sample.id))
			return "ID is not a number";
		if (!rec->u.sample.id && rec->type == SP_ST_SAMPLE)
			return "ID is not a number from 1";
		return NULL;
	case SP_ST_LOST:
		if (nf < 3)
			return "need 3 fields";
		if (parse_u64(f[1], 10, &rec->u.lost.time))
			return "TIME is not a number";
		if (parse_u64(f[2], 10, &v))
			return "COUNT is not a number";
		rec->u.lost.count = v;
		return NULL;
	case SP_ST_SUMMARY:
		return parse_summary(f, nf, &rec->u.summary);
	case SP_ST_START:
		if (nf < 3)
			return "need 3 fields";
		if (parse_u64(f[1], 10, &rec->u.start.time))
			return "TIME is not a number";
		if (parse_u64(f[2], 10, &rec->u.start.realtime))
			return "REALTIME is not a number";
		return NULL;
	case SP_ST_MAP:
		return parse_map(f, nf, &rec->u.map);
	case SP_ST_GONE:
		if (nf < 3)
			return "need 3 fields";
		if (parse_u64(f[1], 10, &rec->u.gone.time))
			return "TIME is not a number";
		if (parse_u32(f[2], &rec->u.gone.pid))
			return "PID is not a number";
		rec->u.gone.has_tid = nf > 3;
		rec->u.gone.tid = 0;
		if (nf > 3 && parse_u32(f[3], &rec->u.gone.tid))
			return "TID is not a number";
		return NULL;
	default:
		return "unknown record";
	}
}

int sp_st_parse_magic(const char *line, unsigned *version)
{
	size_t n = strlen(SP_SYMTEXT_MAGIC);
	uint64_t v;

	if (strncmp(line, SP_SYMTEXT_MAGIC, n) || line[n] != ' ' ||
	    parse_u64(line + n + 1, 10, &v) || v == 0 || v > UINT32_MAX)
		return -EINVAL;
	*version = (unsigned)v;
	return v > SP_SYMTEXT_VERSION ? -EPROTONOSUPPORT : 0;
}

/* Reader */

struct sp_st_reader {
	FILE *fp;
	char *name;
	char *buf;
	size_t cap, len;
	unsigned long line;
	int summary;		/* the summary line was read */
	const char *kind;
	char err[320];
};

struct sp_st_reader *sp_st_reader_new(FILE *fp, const char *name)
{
	struct sp_st_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fp = fp;
	r->name = strdup(name);
	r->cap = 4096;
	r->buf = malloc(r->cap);
	if (!r->name || !r->buf)
		goto err;
	return r;
err:
	sp_st_reader_free(r);
	return NULL;
}

void sp_st_reader_free(struct sp_st_reader *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->buf);
	free(r);
}

const char *sp_st_reader_error(const struct sp_st_reader *r)
{
	return r->err;
}

const char *sp_st_reader_kind(const struct sp_st_reader *r)
{
	return r->kind;
}

unsigned long sp_st_reader_line(const struct sp_st_reader *r)
{
	return r->line;
}

static int failf(struct sp_st_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int failf(struct sp_st_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return SP_IN_ERROR;
}

int sp_st_reader_fail(struct sp_st_reader *r, const char *what)
{
	return failf(r, "%s at line %lu of '%s'", what, r->line, r->name);
}

/* Make room for more of the line; SP_IN_ERROR past the longest line. */
static int grow_line(struct sp_st_reader *r)
{
	char *b;

	if (r->cap >= SP_SYMTEXT_LINE_MAX)
		return failf(r, "line too long (over %u bytes) at line %lu of '%s'",
			     SP_SYMTEXT_LINE_MAX, r->line, r->name);
	b = realloc(r->buf, r->cap * 2);
	if (!b)
		return failf(r, "out of memory reading '%s'", r->name);
	r->buf = b;
	r->cap *= 2;
	return 0;
}

/* The end of input after r->len bytes of a line: 0, or what was wrong. */
static int read_end(struct sp_st_reader *r)
{
	if (ferror(r->fp))
		return failf(r, "cannot read '%s': %s", r->name, strerror(errno));
	r->buf[r->len] = 0;
	if (r->len)
		return failf(r, "truncated line (no newline) at line %lu of '%s'",
			     r->line, r->name);
	r->line--;
	return 0;
}

/*
 * Read the first line into buf without its newline, byte by byte: it may
 * be the start of a binary stream, NUL bytes and all, whose magic names
 * it.  Returns 1, 0 at the end of input, SP_IN_ERROR.
 */
static int read_first_line(struct sp_st_reader *r)
{
	int c;

	r->len = 0;
	r->line++;
	while ((c = getc_unlocked(r->fp)) != EOF) {
		if (c == '\n') {
			r->buf[r->len] = 0;
			return 1;
		}
		if (r->len + 1 >= r->cap && grow_line(r))
			return SP_IN_ERROR;
		r->buf[r->len++] = (char)c;
	}
	return read_end(r);
}

/*
 * Read one line into buf without its newline.  Returns 1, 0 at the end of
 * input, SP_IN_ERROR.  A last line without a newline is a truncated stream;
 * a NUL byte, which no text line has, ends the stream at once.  fgets,
 * unlike fread, returns what a pipe holds without waiting for more.
 */
static int read_line(struct sp_st_reader *r)
{
	size_t room, n;
	int c;

	r->len = 0;
	r->line++;
	for (;;) {
		room = r->cap - r->len;
		if (!fgets(r->buf + r->len, (int)room, r->fp))
			return read_end(r);
		n = strlen(r->buf + r->len);
		r->len += n;
		if (n && r->buf[r->len - 1] == '\n') {
			r->buf[--r->len] = 0;
			return 1;
		}
		if (n < room - 1) {
			if (feof(r->fp) || ferror(r->fp))
				return read_end(r);
			return failf(r, "bad line at line %lu of '%s': NUL byte in line",
				     r->line, r->name);
		}
		/* the buffer is full: a newline next still ends a line it holds */
		if (r->cap >= SP_SYMTEXT_LINE_MAX) {
			c = getc_unlocked(r->fp);
			if (c == '\n')
				return 1;
			if (c == EOF)
				return read_end(r);
		}
		if (grow_line(r))
			return SP_IN_ERROR;
	}
}

int sp_st_reader_header(struct sp_st_reader *r)
{
	unsigned version = 0;
	int ret;

	ret = read_first_line(r);
	if (ret < 0) {
		/* a binary stream has no newline for a long while */
		if (r->len < SP_MAGIC_LEN)
			return ret;
	} else if (ret == 0) {
		return failf(r, "empty input, expected a symbolized stream at byte 0 of '%s'",
			     r->name);
	}
	if (r->len >= SP_MAGIC_LEN) {
		r->kind = sp_stream_kind(r->buf);
		if (r->kind && strcmp(r->kind, "symbolized"))
			return SP_IN_OTHER;
	}
	if (ret < 0)
		return ret;
	ret = sp_st_parse_magic(r->buf, &version);
	if (ret == -EPROTONOSUPPORT)
		return failf(r, "symbolized stream version %u is not supported (this build reads 1..%d) at line 1 of '%s': upgrade stackpulse",
			     version, SP_SYMTEXT_VERSION, r->name);
	if (ret)
		return failf(r, "not a symbolized stream (bad magic line, want '%s %d') at line 1 of '%s'",
			     SP_SYMTEXT_MAGIC, SP_SYMTEXT_VERSION, r->name);
	return SP_IN_OK;
}

int sp_st_read(struct sp_st_reader *r, struct sp_st_rec *rec)
{
	const char *err;
	int ret;

	for (;;) {
		ret = read_line(r);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			if (!r->summary)
				return failf(r, "truncated stream: no summary line at line %lu of '%s'",
					     r->line + 1, r->name);
			return 0;
		}
		if (r->buf[0] == '#' && !memchr(r->buf, 0, r->len))
			continue;
		if (r->summary)
			return sp_st_reader_fail(r, "line after the summary line");
		err = sp_st_parse(r->buf, r->len, rec);
		if (err) {
			if (rec->type == SP_ST_UNKNOWN)
				return failf(r, "bad line at line %lu of '%s': %s",
					     r->line, r->name, err);
			return failf(r, "bad %s line at line %lu of '%s': %s",
				     type_names[rec->type], r->line, r->name, err);
		}
		if (rec->type == SP_ST_SUMMARY)
			r->summary = 1;
		return 1;
	}
}
