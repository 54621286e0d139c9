// SPDX-License-Identifier: MIT
/*
 * fuzz-symtext.c: the symbolized text stream (docs/streams.md, section 8)
 * as sp-fold reads it: the magic line, every line's fields and escapes, the
 * model's grammar checks (sp_fold_apply), then every writer over what got
 * through: folded lines, the top table, pprof and speedscope.
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

#include "fold/fold.h"
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

/*
 * Every writer of sp-fold over the fold; the bytes they wrote.  The JSON
 * of speedscope must be UTF-8 text whatever bytes the names hold.
 */
static uint8_t *write_all(struct sp_fold *fold, size_t size, size_t *len)
{
	int fd, jfd;
	struct sp_out *out = fz_out_memfd(&fd), *json = fz_out_memfd(&jfd);
	uint8_t *bytes, *js;
	size_t jlen;

	if (sp_fold_write(fold, out) ||
	    sp_fold_write_top(fold, out, 1 + (unsigned)(size % 20)) ||
	    sp_fold_write_pprof(fold, out) ||
	    sp_fold_write_speedscope(fold, json) || sp_out_close(out) ||
	    sp_out_close(json))
		abort();
	js = fz_read_all(jfd, &jlen);
	close(jfd);
	if (!fz_utf8_text(js, jlen, 0) || write(fd, js, jlen) != (ssize_t)jlen)
		abort();
	free(js);
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
