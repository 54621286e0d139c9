/* SPDX-License-Identifier: MIT */
/*
 * pprof.c: a fold as a pprof profile (profile.proto), gzip-compressed, for
 * go tool pprof, Grafana Pyroscope, Parca and Datadog.
 *
 * The messages are protobuf-c's, generated from lib/fold/profile.proto;
 * this file only decides what goes in them.  Every id is dense and given
 * in first-seen order over the fold's samples, so the same input gives the
 * same bytes.  docs/formats.md describes the result.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "fold/profile.pb-c.h"
#include "model.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__ValueType pb_valuetype;

/* A mapping as the profile will hold it, before it becomes a message. */
struct pmap {
	uint64_t start, limit, offset;
	uint32_t file, build_id;	/* pprof string indexes */
	int functions, filenames, lines, inlines;
};

struct pp {
	struct sp_fold *f;
	int nvalues;			/* sample types: 2, 3 or 4 */
	struct sp_strtab strs;		/* the profile's string table */

	struct sp_strtab fn_keys;	/* a function's identity -> index */
	pb_function *fns;
	size_t nfns, fncap;

	struct sp_strtab loc_keys;	/* a location's identity -> index */
	pb_location *locs;
	size_t nlocs, loccap;

	struct sp_strtab map_keys;	/* a mapping's identity -> index */
	struct pmap *maps;
	size_t nmaps, mapcap;

	uint64_t **stack_locs;		/* per fold stack: location ids, leaf first */
	uint32_t *stack_nlocs;
};

static int64_t str(struct pp *p, const char *s)
{
	return sp_strtab_intern(&p->strs, s ? s : "");
}

static int64_t str_id(struct pp *p, uint32_t fold_id)
{
	return str(p, sp_fold_str(p->f, fold_id));
}

/* The mapping index (from 0) of a frame; -1 none; -ENOMEM as -2. */
static int64_t frame_map(struct pp *p, const struct sp_fold_frame *fr)
{
	const struct sp_fold *f = p->f;
	struct pmap *m;
	char key[64];
	int64_t id, file, bid = 0;

	if (fr->map != SP_FOLD_NONE) {
		const struct sp_fold_map *fm = &f->maps[fr->map];

		snprintf(key, sizeof(key), "m%" PRIu32, fr->map);
		file = str_id(p, fm->path);
		if (fm->build_id != SP_FOLD_NONE)
			bid = str_id(p, fm->build_id);
	} else if (fr->module != SP_FOLD_NONE) {
		/* kernel images, or a stream without map lines */
		snprintf(key, sizeof(key), "f%" PRIu32 ":%" PRIu32, fr->pid,
			 fr->module);
		file = str(p, fr->kind == SP_FK_KERNEL &&
			   !strcmp(sp_fold_str(f, fr->module), "[kernel]") ?
			   "[kernel.kallsyms]" : sp_fold_str(f, fr->module));
	} else {
		return -1;
	}
	id = sp_strtab_intern(&p->map_keys, key);
	if (id < 0 || file < 0 || bid < 0)
		return -2;
	if ((size_t)id == p->nmaps) {
		if (SP_GROW(p->maps, p->mapcap, p->nmaps + 1))
			return -2;
		m = &p->maps[p->nmaps++];
		memset(m, 0, sizeof(*m));
		m->file = (uint32_t)file;
		m->build_id = (uint32_t)bid;
		if (fr->map != SP_FOLD_NONE) {
			m->start = f->maps[fr->map].start;
			m->limit = f->maps[fr->map].end;
			m->offset = f->maps[fr->map].pgoff;
		} else {
			m->start = fr->addr;
			m->limit = fr->addr + 1;
		}
	}
	m = &p->maps[id];
	if (fr->map == SP_FOLD_NONE) {
		/* no mapping known: the range of the addresses seen */
		if (fr->addr < m->start)
			m->start = fr->addr;
		if (fr->addr >= m->limit)
			m->limit = fr->addr + 1;
	}
	if (fr->origin != SP_FO_NONE)
		m->functions = 1;
	if (fr->file != SP_FOLD_NONE)
		m->filenames = 1;
	if (fr->line)
		m->lines = 1;
	if (fr->kind == SP_FK_INLINE)
		m->inlines = 1;
	return id;
}

/* The id of the function named name (system name sys, in file at line). */
static int64_t function_id(struct pp *p, const char *name, const char *sys,
			   const char *file, uint32_t line)
{
	int64_t n = str(p, name), s = str(p, sys), fl = str(p, file), id;
	char key[80];
	pb_function *fn;

	if (n < 0 || s < 0 || fl < 0)
		return -ENOMEM;
	snprintf(key, sizeof(key), "%" PRId64 ":%" PRId64 ":%" PRId64 ":%" PRIu32,
		 n, s, fl, line);
	id = sp_strtab_intern(&p->fn_keys, key);
	if (id < 0)
		return id;
	if ((size_t)id == p->nfns) {
		if (SP_GROW(p->fns, p->fncap, p->nfns + 1))
			return -ENOMEM;
		fn = &p->fns[p->nfns++];
		perftools__profiles__function__init(fn);
		fn->id = (uint64_t)id + 1;
		fn->name = n;
		fn->system_name = s;
		fn->filename = fl;
		fn->start_line = line;
	}
	return id + 1;
}

/* A new location of n lines; its id, or -ENOMEM. */
static int64_t new_location(struct pp *p, const char *key, size_t n,
			    pb_location **out)
{
	pb_location *loc;
	int64_t id = sp_strtab_intern(&p->loc_keys, key);
	size_t i;

	if (id < 0)
		return id;
	*out = NULL;
	if ((size_t)id < p->nlocs)
		return id + 1;
	if (SP_GROW(p->locs, p->loccap, p->nlocs + 1))
		return -ENOMEM;
	loc = &p->locs[p->nlocs];
	perftools__profiles__location__init(loc);
	loc->line = calloc(n ? n : 1, sizeof(*loc->line));
	if (!loc->line)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		loc->line[i] = malloc(sizeof(pb_line));
		if (!loc->line[i]) {
			loc->n_line = i;
			p->nlocs++;
			return -ENOMEM;
		}
		perftools__profiles__line__init(loc->line[i]);
	}
	loc->n_line = n;
	loc->id = (uint64_t)id + 1;
	p->nlocs++;
	*out = loc;
	return id + 1;
}

/*
 * The location of frames ids[0..n): an address with the functions inlined
 * at it, innermost first, and the function that holds it last.
 */
static int64_t frames_location(struct pp *p, const uint32_t *ids, size_t n)
{
	const struct sp_fold *f = p->f;
	const struct sp_fold_frame *last = &f->frames[ids[n - 1]];
	pb_location *loc;
	char *key, *at;
	int64_t id, map, fn;
	size_t i;

	key = malloc(32 + 11 * n);
	if (!key)
		return -ENOMEM;
	at = key + sprintf(key, "%" PRIx32 ":%" PRIx64, last->pid, last->addr);
	for (i = 0; i < n; i++)
		at += sprintf(at, ",%" PRIx32, ids[i]);
	id = new_location(p, key, n, &loc);
	free(key);
	if (id < 0 || !loc)
		return id;
	map = frame_map(p, last);
	if (map == -2)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct sp_fold_frame *fr = &f->frames[ids[i]];

		if (frame_map(p, fr) == -2)
			return -ENOMEM;
		/* the system's name: as the file has it, mangled */
		fn = function_id(p, sp_fold_str(f, fr->name),
				 sp_fold_str(f, fr->symbol != SP_FOLD_NONE ?
					     fr->symbol : fr->full),
				 sp_fold_str(f, fr->file), fr->decl_line);
		if (fn < 0)
			return fn;
		loc->line[i]->function_id = (uint64_t)fn;
		loc->line[i]->line = fr->line;
	}
	loc->mapping_id = map < 0 ? 0 : (uint64_t)map + 1;
	loc->address = last->addr;
	return id;
}

/* The location ids of a stack, leaf first, made on first use. */
static int stack_locations(struct pp *p, uint32_t stack)
{
	const struct sp_fold *f = p->f;
	const struct sp_fold_stack *st = &f->stacks[stack];
	const uint32_t *ids;
	uint64_t *locs;
	uint32_t n = 0, i, j;
	int64_t id;

	if (p->stack_locs[stack] || !st->n)
		return 0;
	ids = f->frame_ids + st->off;
	locs = malloc(st->n * sizeof(*locs));
	if (!locs)
		return -ENOMEM;
	for (i = 0; i < st->n; i = j) {
		/* inline frames share the address of the frame that holds them */
		for (j = i + 1; j < st->n; j++) {
			const struct sp_fold_frame *a = &f->frames[ids[j - 1]];
			const struct sp_fold_frame *b = &f->frames[ids[j]];

			if (a->kind != SP_FK_INLINE || a->addr != b->addr ||
			    a->pid != b->pid)
				break;
		}
		id = frames_location(p, ids + i, j - i);
		if (id < 0) {
			free(locs);
			return (int)id;
		}
		locs[n++] = (uint64_t)id;
	}
	p->stack_locs[stack] = locs;
	p->stack_nlocs[stack] = n;
	return 0;
}

/* The location of the first frame of folded lines (--pid, --tid). */
static int64_t prefix_location(struct pp *p, const struct sp_fold_sample *s)
{
	const char *name = sp_fold_str(p->f, s->prefix);
	pb_location *loc;
	char key[32];
	int64_t fn, id;

	snprintf(key, sizeof(key), "p%" PRIu32, s->prefix);
	id = new_location(p, key, 1, &loc);
	if (id < 0 || !loc)
		return id;
	fn = function_id(p, name, name, "", 0);
	if (fn < 0)
		return fn;
	loc->line[0]->function_id = (uint64_t)fn;
	return id;
}

static pb_label *num_label(pb_label *l, int64_t key, int64_t num)
{
	perftools__profiles__label__init(l);
	l->key = key;
	l->num = num;
	return l;
}

/* Fill sample s from fold sample fs; its arrays come from the caller's pools. */
static int fill_sample(struct pp *p, const struct sp_fold_sample *fs,
		       pb_sample *s, int64_t *values, pb_label *labels,
		       pb_label **lp, int64_t keys[3], const int64_t *extra)
{
	size_t k;
	uint32_t n = p->stack_nlocs[fs->stack], i;
	int64_t pre = -1;
	int r;

	if ((r = stack_locations(p, fs->stack)))
		return r;
	n = p->stack_nlocs[fs->stack];
	if (p->f->flags & (SP_FOLD_PID | SP_FOLD_TID)) {
		pre = prefix_location(p, fs);
		if (pre < 0)
			return (int)pre;
	}
	perftools__profiles__sample__init(s);
	s->location_id = malloc((n + 1) * sizeof(*s->location_id));
	if (!s->location_id)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		s->location_id[i] = p->stack_locs[fs->stack][i];
	if (pre > 0)
		s->location_id[n++] = (uint64_t)pre;
	s->n_location_id = n;
	values[0] = (int64_t)fs->count;
	values[1] = p->f->stacks[fs->stack].offcpu ? 0 : (int64_t)fs->weight;
	s->value = values;
	s->n_value = p->nvalues;
	if (p->nvalues > 2)	/* off_cpu, then wall: both */
		values[2] = (int64_t)fs->weight - values[1];
	if (p->nvalues > 3)
		values[3] = (int64_t)fs->weight;
	lp[0] = num_label(&labels[0], keys[0], fs->pid);
	lp[1] = num_label(&labels[1], keys[1], fs->tid);
	s->n_label = 2;
	if (fs->comm != SP_FOLD_NONE) {
		perftools__profiles__label__init(&labels[2]);
		labels[2].key = keys[2];
		labels[2].str = str_id(p, fs->comm);
		if (labels[2].str < 0)
			return -ENOMEM;
		lp[2] = &labels[2];
		s->n_label = 3;
	}
	/* the fold's own, the same for every sample */
	for (k = 0; k < p->f->nlabels; k += 2) {
		pb_label *l = &labels[s->n_label];

		perftools__profiles__label__init(l);
		l->key = extra[k];
		l->str = extra[k + 1];
		lp[s->n_label++] = l;
	}
	s->label = lp;
	return 0;
}

/* Compress buf into out as one gzip member. */
static int write_gzip(struct sp_out *out, const uint8_t *buf, size_t len)
{
	uint8_t chunk[65536];
	z_stream z;
	int zr, r = 0;

	memset(&z, 0, sizeof(z));
	/* 16 + 15: a gzip header (no name, no time) around a deflate stream */
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			r = -EIO;
			break;
		}
		r = sp_out_write(out, chunk, sizeof(chunk) - z.avail_out);
	} while (!r && zr != Z_STREAM_END);
	deflateEnd(&z);
	return r;
}

static void pp_release(struct pp *p, pb_sample *samples, size_t nsamples)
{
	size_t i, j;

	for (i = 0; i < nsamples; i++)
		free(samples[i].location_id);
	for (i = 0; i < p->nlocs; i++) {
		for (j = 0; j < p->locs[i].n_line; j++)
			free(p->locs[i].line[j]);
		free(p->locs[i].line);
	}
	free(p->locs);
	free(p->fns);
	free(p->maps);
	if (p->stack_locs)
		for (i = 0; i < p->f->nstacks; i++)
			free(p->stack_locs[i]);
	free(p->stack_locs);
	free(p->stack_nlocs);
	sp_strtab_release(&p->strs);
	sp_strtab_release(&p->fn_keys);
	sp_strtab_release(&p->loc_keys);
	sp_strtab_release(&p->map_keys);
}

/*
 * The sample types (samples, the event's; with off-CPU waits, off_cpu and,
 * for a clock event, wall: the two added up) into vt, their number into
 * p->nvalues, and the period type into vt[4], as string indexes.
 */
static int value_types(struct pp *p, pb_valuetype vt[5], int64_t *period)
{
	const struct sp_fold *f = p->f;
	const char *ev = sp_fold_str(f, f->event);
	int time = sp_fold_time_event(f);
	int64_t s[8];
	int i;

	p->nvalues = !f->offcpu_seen ? 2 : time ? 4 : 3;
	s[0] = str(p, "samples");
	s[1] = str(p, "count");
	s[2] = str(p, time ? "cpu" : *ev ? ev : "events");
	s[3] = str(p, time ? "nanoseconds" : "count");
	s[4] = str(p, "off_cpu");
	s[5] = str(p, "nanoseconds");
	s[6] = str(p, "wall");
	for (i = 0; i < 7; i++)
		if (s[i] < 0)
			return -ENOMEM;
	for (i = 0; i < 5; i++)
		perftools__profiles__value_type__init(&vt[i]);
	vt[0].type = s[0];
	vt[0].unit = s[1];
	vt[1].type = vt[4].type = s[2];
	vt[1].unit = vt[4].unit = s[3];
	vt[2].type = s[4];
	vt[2].unit = s[5];
	vt[3].type = s[6];
	vt[3].unit = s[5];
	if (f->freq)
		*period = f->event_value && time ?
			  (int64_t)(1000000000ull / f->event_value) : 0;
	else
		*period = (int64_t)f->event_value;
	return 0;
}

int sp_fold_write_pprof(struct sp_fold *f, struct sp_out *out)
{
	struct pp p = { .f = f };
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_valuetype vt[5], *vtp[4] = { &vt[0], &vt[1], &vt[2], &vt[3] };
	pb_sample *samples = NULL, **sp = NULL;
	pb_function **fnp = NULL;
	pb_location **locp = NULL;
	pb_mapping *maps = NULL, **mapp = NULL;
	pb_label *labels = NULL, **lp = NULL;
	int64_t *values = NULL, keys[3], period, comment, *extra = NULL;
	size_t per = 3 + f->nlabels / 2;	/* labels per sample at most */
	uint8_t *buf = NULL;
	size_t i, len;
	int r = -ENOMEM;

	samples = calloc(f->nsamples + 1, sizeof(*samples));
	sp = calloc(f->nsamples + 1, sizeof(*sp));
	values = calloc(4 * f->nsamples + 1, sizeof(*values));
	labels = calloc(per * f->nsamples + 1, sizeof(*labels));
	lp = calloc(per * f->nsamples + 1, sizeof(*lp));
	extra = calloc(f->nlabels + 1, sizeof(*extra));
	p.stack_locs = calloc(f->nstacks + 1, sizeof(*p.stack_locs));
	p.stack_nlocs = calloc(f->nstacks + 1, sizeof(*p.stack_nlocs));
	if (!samples || !sp || !values || !labels || !lp || !extra ||
	    !p.stack_locs || !p.stack_nlocs)
		goto out;
	/* string 0 is "" */
	if (str(&p, "") != 0 || value_types(&p, vt, &period))
		goto out;
	keys[0] = str(&p, "pid");
	keys[1] = str(&p, "tid");
	keys[2] = str(&p, "thread_name");
	comment = str(&p, "stackpulse " SP_VERSION);
	if (keys[0] < 0 || keys[1] < 0 || keys[2] < 0 || comment < 0)
		goto out;
	for (i = 0; i < f->nlabels; i++)
		if ((extra[i] = str_id(&p, f->labels[i])) < 0)
			goto out;
	for (i = 0; i < f->nsamples; i++) {
		r = fill_sample(&p, &f->samples[i], &samples[i],
				&values[4 * i], &labels[per * i], &lp[per * i],
				keys, extra);
		if (r)
			goto out;
		sp[i] = &samples[i];
	}
	r = -ENOMEM;
	fnp = calloc(p.nfns + 1, sizeof(*fnp));
	locp = calloc(p.nlocs + 1, sizeof(*locp));
	maps = calloc(p.nmaps + 1, sizeof(*maps));
	mapp = calloc(p.nmaps + 1, sizeof(*mapp));
	if (!fnp || !locp || !maps || !mapp)
		goto out;
	for (i = 0; i < p.nfns; i++)
		fnp[i] = &p.fns[i];
	for (i = 0; i < p.nlocs; i++)
		locp[i] = &p.locs[i];
	for (i = 0; i < p.nmaps; i++) {
		perftools__profiles__mapping__init(&maps[i]);
		maps[i].id = i + 1;
		maps[i].memory_start = p.maps[i].start;
		maps[i].memory_limit = p.maps[i].limit;
		maps[i].file_offset = p.maps[i].offset;
		maps[i].filename = p.maps[i].file;
		maps[i].build_id = p.maps[i].build_id;
		maps[i].has_functions = p.maps[i].functions;
		maps[i].has_filenames = p.maps[i].filenames;
		maps[i].has_line_numbers = p.maps[i].lines;
		maps[i].has_inline_frames = p.maps[i].inlines;
		mapp[i] = &maps[i];
	}
	prof.sample_type = vtp;
	prof.n_sample_type = p.nvalues;
	prof.sample = sp;
	prof.n_sample = f->nsamples;
	prof.mapping = mapp;
	prof.n_mapping = p.nmaps;
	prof.location = locp;
	prof.n_location = p.nlocs;
	prof.function = fnp;
	prof.n_function = p.nfns;
	prof.string_table = p.strs.strs;
	prof.n_string_table = p.strs.n;
	if (f->range_end) {
		prof.time_nanos = (int64_t)f->range_start;
		prof.duration_nanos = (int64_t)(f->range_end - f->range_start);
	} else {
		prof.time_nanos = f->have_start ? (int64_t)f->start_realtime : 0;
		prof.duration_nanos = (int64_t)(f->duration_ns ? f->duration_ns :
						f->last_time - f->first_time);
	}
	prof.period_type = &vt[4];
	prof.period = period;
	prof.comment = &comment;
	prof.n_comment = 1;
	len = perftools__profiles__profile__get_packed_size(&prof);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	perftools__profiles__profile__pack(&prof, buf);
	r = write_gzip(out, buf, len);
out:
	free(buf);
	free(fnp);
	free(locp);
	free(maps);
	free(mapp);
	pp_release(&p, samples, f->nsamples);
	free(samples);
	free(sp);
	free(values);
	free(labels);
	free(lp);
	free(extra);
	return r;
}
