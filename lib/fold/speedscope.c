/* SPDX-License-Identifier: MIT */
/*
 * speedscope.c: a fold as a speedscope file (speedscope's
 * file-format-schema.json): one "sampled" profile per thread over a shared
 * frame table, samples root first in time order, equal neighbours merged
 * into one sample of their summed weight.
 *
 * JSON is written here and nowhere else; strings are made valid UTF-8
 * (a byte that is not part of a valid sequence becomes U+FFFD), so a name
 * with odd bytes cannot break the file.  docs/formats.md describes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashtab.h"
#include "model.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return len;
}

/* s as a JSON string, quotes included. */
static int json_str(struct sp_out *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, run = 0, k;
	int r = sp_out_write(out, "\"", 1);

	while (!r && i < n) {
		unsigned char c = s[i];
		char esc[8];

		if (c >= 0x20 && c != '"' && c != '\\' &&
		    (k = utf8_len(s + i, n - i))) {
			i += k;
			run += k;
			continue;
		}
		/* flush the plain bytes before the one that needs care */
		r = sp_out_write(out, s + i - run, run);
		run = 0;
		if (r)
			break;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			r = sp_out_write(out, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			r = sp_out_write(out, esc, 6);
		} else {
			r = sp_out_write(out, "\\ufffd", 6);
		}
		i++;
	}
	if (!r)
		r = sp_out_write(out, s + i - run, run);
	if (!r)
		r = sp_out_write(out, "\"", 1);
	return r;
}

struct ss {
	struct sp_fold *f;
	struct sp_strtab keys;		/* a speedscope frame's identity */
	uint32_t *of_frame;		/* fold frame -> speedscope frame */
	uint32_t *firsts;		/* speedscope frame -> a fold frame */
	size_t n, cap;
	struct sp_strtab stack_keys;	/* a stack as frame indexes */
	uint32_t *of_stack;		/* fold stack -> its key's index */
};

/*
 * The speedscope frame of fold frame i: a function, by name, file and
 * first line, as speedscope's own importers make them (the lines being
 * executed would cut one function into several frames).
 */
static int64_t ss_frame(struct ss *s, uint32_t i)
{
	const struct sp_fold_frame *fr = &s->f->frames[i];
	char key[48];
	int64_t id;

	if (s->of_frame[i] != SP_FOLD_NONE)
		return s->of_frame[i];
	snprintf(key, sizeof(key), "%" PRIx32 ":%" PRIx32 ":%" PRIx32 ":%" PRIx32,
		 fr->name, fr->file, fr->module, fr->decl_line);
	id = sp_strtab_intern(&s->keys, key);
	if (id < 0)
		return id;
	if ((size_t)id == s->n) {
		if (SP_GROW(s->firsts, s->cap, s->n + 1))
			return -ENOMEM;
		s->firsts[s->n++] = i;
	}
	s->of_frame[i] = (uint32_t)id;
	return id;
}

static int write_frames(struct ss *s, struct sp_out *out)
{
	const struct sp_fold *f = s->f;
	size_t i;
	int r = sp_out_printf(out, "{\"$schema\":\"%s\",\"shared\":{\"frames\":[",
			      SCHEMA);

	for (i = 0; !r && i < s->n; i++) {
		const struct sp_fold_frame *fr = &f->frames[s->firsts[i]];
		uint32_t file = fr->file != SP_FOLD_NONE ? fr->file : fr->module;

		r = sp_out_printf(out, "%s{\"name\":", i ? "," : "");
		if (!r)
			r = json_str(out, sp_fold_str(f, fr->name));
		if (!r && file != SP_FOLD_NONE) {
			r = sp_out_write(out, ",\"file\":", 8);
			if (!r)
				r = json_str(out, sp_fold_str(f, file));
		}
		if (!r && fr->decl_line)
			r = sp_out_printf(out, ",\"line\":%" PRIu32,
					  fr->decl_line);
		if (!r)
			r = sp_out_write(out, "}", 1);
	}
	return r ? r : sp_out_write(out, "]},", 3);
}

static int thread_cmp(const void *a, const void *b)
{
	const struct sp_fold_thread *x = *(const struct sp_fold_thread **)a;
	const struct sp_fold_thread *y = *(const struct sp_fold_thread **)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* One thread's samples: frame indexes root first, and their weights. */
static int write_profile(struct ss *s, struct sp_out *out,
			 const struct sp_fold_thread *t, int time)
{
	const struct sp_fold *f = s->f;
	const char *comm = t->comm == SP_FOLD_NONE ? "[unknown]" :
			   sp_fold_str(f, t->comm);
	uint64_t start = 0, total = time ? t->weight : t->count;
	char *name;
	size_t i;
	int r;

	if (time && f->have_start && t->first >= f->start_time)
		start = t->first - f->start_time;
	else if (time && f->first_time && t->first >= f->first_time)
		start = t->first - f->first_time;
	if (asprintf(&name, "%s %" PRIu32 "/%" PRIu32, comm, t->pid,
		     t->tid) < 0)
		return -ENOMEM;
	r = sp_out_write(out, "{\"type\":\"sampled\",\"name\":", 25);
	if (!r)
		r = json_str(out, name);
	free(name);
	if (!r)
		r = sp_out_printf(out, ",\"unit\":\"%s\",\"startValue\":%" PRIu64
				  ",\"endValue\":%" PRIu64 ",\"samples\":[",
				  time ? "nanoseconds" : "none", start,
				  start + total);
	/*
	 * neighbours whose frames differ only where speedscope does not look
	 * (addresses) are one sample: a run starts where the key changes
	 */
	for (i = 0; !r && i < t->nruns; i++) {
		const struct sp_fold_stack *st = &f->stacks[t->runs[i].stack];
		uint32_t k;

		if (i && s->of_stack[t->runs[i].stack] ==
			 s->of_stack[t->runs[i - 1].stack])
			continue;
		r = sp_out_write(out, i ? ",[" : "[", i ? 2 : 1);
		for (k = st->n; !r && k--; )
			r = sp_out_printf(out, "%s%" PRIu32,
					  k + 1 == st->n ? "" : ",",
					  s->of_frame[f->frame_ids[st->off + k]]);
		if (!r)
			r = sp_out_write(out, "]", 1);
	}
	if (!r)
		r = sp_out_write(out, "],\"weights\":[", 13);
	for (i = 0; !r && i < t->nruns; ) {
		uint32_t key = s->of_stack[t->runs[i].stack];
		uint64_t w = 0;

		r = i ? sp_out_write(out, ",", 1) : 0;
		for (; i < t->nruns && s->of_stack[t->runs[i].stack] == key; i++)
			w += time ? t->runs[i].weight : t->runs[i].count;
		if (!r)
			r = sp_out_printf(out, "%" PRIu64, w);
	}
	return r ? r : sp_out_write(out, "]}", 2);
}

/* The key of fold stack i: its speedscope frames, root first. */
static int ss_stack(struct ss *s, uint32_t i)
{
	const struct sp_fold_stack *st = &s->f->stacks[i];
	char *key = malloc(11 * (size_t)st->n + 1), *at = key;
	int64_t id;
	uint32_t k;

	if (!key)
		return -ENOMEM;
	*at = 0;
	for (k = st->n; k--; ) {
		id = ss_frame(s, s->f->frame_ids[st->off + k]);
		if (id < 0) {
			free(key);
			return (int)id;
		}
		at += sprintf(at, "%" PRId64 ",", id);
	}
	id = sp_strtab_intern(&s->stack_keys, key);
	free(key);
	if (id < 0)
		return (int)id;
	s->of_stack[i] = (uint32_t)id;
	return 0;
}

/* Number the frames of every sampled stack, in the order of the samples. */
static int number_frames(struct ss *s, const struct sp_fold_thread **order)
{
	const struct sp_fold *f = s->f;
	uint8_t *seen = calloc(f->nstacks + 1, 1);
	size_t i, j;
	int r;

	if (!seen)
		return -ENOMEM;
	for (i = 0; i < f->nthreads; i++)
		for (j = 0; j < order[i]->nruns; j++) {
			uint32_t stack = order[i]->runs[j].stack;

			if (seen[stack])
				continue;
			seen[stack] = 1;
			if ((r = ss_stack(s, stack))) {
				free(seen);
				return r;
			}
		}
	free(seen);
	return 0;
}

int sp_fold_write_speedscope(struct sp_fold *f, struct sp_out *out)
{
	struct ss s = { .f = f };
	const struct sp_fold_thread **order = NULL;
	int time = (f->flags & SP_FOLD_WEIGHT) && sp_fold_time_event(f);
	size_t i, active = 0;
	int r = -ENOMEM;

	s.of_frame = malloc((f->nframes + 1) * sizeof(*s.of_frame));
	s.of_stack = calloc(f->nstacks + 1, sizeof(*s.of_stack));
	order = malloc((f->nthreads + 1) * sizeof(*order));
	if (!s.of_frame || !s.of_stack || !order)
		goto out;
	memset(s.of_frame, 0xff, (f->nframes + 1) * sizeof(*s.of_frame));
	for (i = 0; i < f->nthreads; i++)
		order[i] = &f->threads[i];
	qsort(order, f->nthreads, sizeof(*order), thread_cmp);
	/* the frame table comes first: every frame must be known */
	r = number_frames(&s, order);
	if (!r)
		r = write_frames(&s, out);
	if (!r)
		r = sp_out_write(out, "\"profiles\":[", 12);
	for (i = 0; !r && i < f->nthreads; i++) {
		uint64_t w = time ? order[i]->weight : order[i]->count;
		uint64_t best = time ? order[active]->weight :
				order[active]->count;

		if (w > best)
			active = i;
		if (i)
			r = sp_out_write(out, ",", 1);
		if (!r)
			r = write_profile(&s, out, order[i], time);
	}
	if (!r)
		r = sp_out_printf(out, "],\"name\":\"stackpulse\","
				  "\"activeProfileIndex\":%zu,"
				  "\"exporter\":\"stackpulse@%s\"}\n",
				  active, SP_VERSION);
out:
	free(order);
	free(s.of_frame);
	free(s.of_stack);
	free(s.firsts);
	sp_strtab_release(&s.keys);
	sp_strtab_release(&s.stack_keys);
	return r;
}
