// SPDX-License-Identifier: MIT
/*
 * fuzz-symtext.c: the symbolized text stream (docs/streams.md, section 8)
 * as sp-fold reads it: the magic line, every line's fields and escapes, the
 * model's grammar checks (sp_fold_apply), then every writer over what got
 * through: folded lines, the top table, pprof and speedscope.
 *
 * The writers' output must be what they promise: UTF-8 text for
 * speedscope's JSON, a gzip member holding a profile.proto message whose
 * references (locations, functions, mappings, strings) all resolve for
 * pprof.
 *
 * The records read are written again with the stream's writer
 * (sp_st_write), as sp-symbolize writes them, and when the input was a
 * sound stream that text is read and folded a second time: it must read
 * without an error and give the same bytes from every writer, or the
 * writer and the reader disagree about an escape or a field.
 *
 * The options of sp-fold (--pid, --tid, --hidden, --weight, --names) come
 * from the input's length, so that the seeds try them all without a byte
 * of the stream being spent on them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "fold/fold.h"
#include "fold/profile.pb-c.h"
#include "format/symtext.h"
#include "fuzz.h"

static unsigned fold_flags(size_t size)
{
	unsigned flags = SP_FOLD_SAMPLES | SP_FOLD_TIMELINE;

	if (size & 1)
		flags |= SP_FOLD_PID;
	if (size & 2)
		flags |= SP_FOLD_TID;
	if (size & 4)
		flags |= SP_FOLD_HIDDEN;
	if (size & 8)
		flags |= SP_FOLD_WEIGHT;
	if (!(size & 16))
		flags |= SP_FOLD_SHORT;
	return flags;
}

/*
 * Read the stream in fp into a fold, as sp-fold does, writing the records
 * read to text when it is not NULL.  Returns the fold, or NULL when
 * sp-fold would stop with an error.
 */
static struct sp_fold *read_fold(FILE *fp, unsigned flags, struct sp_out *text)
{
	struct sp_st_reader *rd = sp_st_reader_new(fp, "fuzz");
	struct sp_fold *fold = sp_fold_new(flags);
	struct sp_st_rec rec;
	int r;

	if (!rd || !fold)
		abort();
	if (sp_st_reader_header(rd) != SP_IN_OK) {
		r = SP_IN_ERROR;
		goto out;
	}
	while ((r = sp_st_read(rd, &rec)) > 0) {
		r = sp_fold_apply(fold, &rec);
		if (r == -EINVAL) {
			sp_st_reader_fail(rd, sp_fold_error(fold));
			r = SP_IN_ERROR;
			break;
		}
		if (r)
			abort();
		if (text && rec.type != SP_ST_UNKNOWN && sp_st_write(text, &rec))
			abort();
	}
	/* a refusal says where */
	if (r < 0 && !strstr(sp_st_reader_error(rd), "'fuzz'"))
		abort();
out:
	sp_st_reader_free(rd);
	if (r < 0) {
		sp_fold_free(fold);
		return NULL;
	}
	return fold;
}

typedef Perftools__Profiles__Profile pb_profile;

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The ids of n things, sorted, for known(); none may be 0 or twice. */
static uint64_t *ids_of(size_t n, uint64_t (*id)(const void *, size_t),
			const void *things)
{
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	size_t i;

	if (!ids)
		abort();
	for (i = 0; i < n; i++)
		ids[i] = id(things, i);
	if (n)
		qsort(ids, n, sizeof(*ids), by_u64);
	for (i = 0; i < n; i++)
		if (!ids[i] || (i && ids[i] == ids[i - 1]))
			abort();
	return ids;
}

static int known(const uint64_t *ids, size_t n, uint64_t id)
{
	return n && bsearch(&id, ids, n, sizeof(*ids), by_u64) != NULL;
}

static uint64_t location_id(const void *p, size_t i)
{
	return ((const pb_profile *)p)->location[i]->id;
}

static uint64_t function_id(const void *p, size_t i)
{
	return ((const pb_profile *)p)->function[i]->id;
}

static uint64_t mapping_id(const void *p, size_t i)
{
	return ((const pb_profile *)p)->mapping[i]->id;
}

#define STR_OK(pr, x) ((x) >= 0 && (uint64_t)(x) < (pr)->n_string_table)

/*
 * What go tool pprof would refuse: not gzip, not a profile, a value
 * count that is not the sample types', an id that resolves to nothing, a
 * string index out of the table.
 */
static void check_pprof(const uint8_t *gz, size_t len)
{
	z_stream z = { 0 };
	uint8_t *raw = NULL;
	size_t cap = 0, i, j;
	uint64_t *locs, *funcs, *maps;
	pb_profile *pr;
	int zr;

	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		abort();
	z.next_in = (uint8_t *)gz;
	z.avail_in = (uInt)len;
	do {
		cap = cap ? 2 * cap : 65536;
		raw = realloc(raw, cap);
		if (!raw)
			abort();
		z.next_out = raw + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		zr = inflate(&z, Z_FINISH);
	} while (zr == Z_BUF_ERROR && z.avail_out == 0);
	if (zr != Z_STREAM_END || z.avail_in)
		abort();
	pr = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	if (!pr || !pr->n_string_table || pr->string_table[0][0])
		abort();
	locs = ids_of(pr->n_location, location_id, pr);
	funcs = ids_of(pr->n_function, function_id, pr);
	maps = ids_of(pr->n_mapping, mapping_id, pr);
	for (i = 0; i < pr->n_sample_type; i++)
		if (!STR_OK(pr, pr->sample_type[i]->type) ||
		    !STR_OK(pr, pr->sample_type[i]->unit))
			abort();
	for (i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *sa = pr->sample[i];

		if (sa->n_value != pr->n_sample_type)
			abort();
		for (j = 0; j < sa->n_location_id; j++)
			if (!known(locs, pr->n_location, sa->location_id[j]))
				abort();
		for (j = 0; j < sa->n_label; j++)
			if (!STR_OK(pr, sa->label[j]->key) ||
			    !STR_OK(pr, sa->label[j]->str))
				abort();
	}
	for (i = 0; i < pr->n_location; i++) {
		const Perftools__Profiles__Location *l = pr->location[i];

		if (l->mapping_id && !known(maps, pr->n_mapping, l->mapping_id))
			abort();
		for (j = 0; j < l->n_line; j++)
			if (!known(funcs, pr->n_function, l->line[j]->function_id))
				abort();
	}
	for (i = 0; i < pr->n_function; i++)
		if (!STR_OK(pr, pr->function[i]->name) ||
		    !STR_OK(pr, pr->function[i]->system_name) ||
		    !STR_OK(pr, pr->function[i]->filename))
			abort();
	for (i = 0; i < pr->n_mapping; i++)
		if (!STR_OK(pr, pr->mapping[i]->filename) ||
		    !STR_OK(pr, pr->mapping[i]->build_id))
			abort();
	free(locs);
	free(funcs);
	free(maps);
	perftools__profiles__profile__free_unpacked(pr, NULL);
}

/*
 * Every writer of sp-fold over the fold, each checked for what it
 * promises; the bytes they wrote.
 */
static uint8_t *write_all(struct sp_fold *fold, size_t size, size_t *len)
{
	int fd, jfd, pfd;
	struct sp_out *out = fz_out_memfd(&fd), *json = fz_out_memfd(&jfd);
	struct sp_out *pprof = fz_out_memfd(&pfd);
	uint8_t *bytes, *js, *pb;
	size_t jlen, plen;

	if (sp_fold_write(fold, out) ||
	    sp_fold_write_top(fold, out, 1 + (unsigned)(size % 20)) ||
	    sp_fold_write_pprof(fold, pprof) ||
	    sp_fold_write_speedscope(fold, json) || sp_out_close(out) ||
	    sp_out_close(json) || sp_out_close(pprof))
		abort();
	js = fz_read_all(jfd, &jlen);
	pb = fz_read_all(pfd, &plen);
	close(jfd);
	close(pfd);
	if (!fz_utf8_text(js, jlen, 0))
		abort();
	check_pprof(pb, plen);
	if (write(fd, pb, plen) != (ssize_t)plen ||
	    write(fd, js, jlen) != (ssize_t)jlen)
		abort();
	free(js);
	free(pb);
	bytes = fz_read_all(fd, len);
	close(fd);
	return bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags = fold_flags(size);
	struct sp_fold *fold, *again;
	uint8_t *text, *first, *second;
	size_t tlen, flen, slen;
	struct sp_out *out;
	FILE *fp;
	int tfd;

	fp = fz_memfile(data, size);
	out = fz_out_memfd(&tfd);
	if (sp_st_write_magic(out))
		abort();
	fold = read_fold(fp, flags, out);
	fclose(fp);
	if (sp_out_close(out))
		abort();
	if (!fold) {
		close(tfd);
		return 0;
	}
	first = write_all(fold, size, &flen);
	sp_fold_free(fold);

	/* what the writer made of the records reads back the same */
	text = fz_read_all(tfd, &tlen);
	close(tfd);
	fp = fz_memfile(text, tlen);
	again = read_fold(fp, flags, NULL);
	fclose(fp);
	if (!again)
		abort();
	second = write_all(again, size, &slen);
	sp_fold_free(again);
	if (flen != slen || memcmp(first, second, flen))
		abort();
	free(first);
	free(second);
	free(text);
	return 0;
}
