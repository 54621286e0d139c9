// SPDX-License-Identifier: MIT
/*
 * fuzz-symtext.c: the symbolized text stream (docs/streams.md, section 8)
 * as sp-fold reads it: the magic line, every line's fields and escapes, the
 * model's grammar checks (sp_fold_apply), then every writer over what got
 * through: folded lines, the top table, pprof and speedscope, into a
 * discarded output.
 *
 * The options of sp-fold (--pid, --tid, --hidden, --weight, --names) come
 * from the input's length, so that the seeds try them all without a byte
 * of the stream being spent on them.
 */
#include <errno.h>
#include <stdlib.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_st_reader *rd;
	struct sp_fold *fold;
	struct sp_st_rec rec;
	struct sp_out *out;
	FILE *fp;
	int r;

	fp = fz_memfile(data, size);
	rd = sp_st_reader_new(fp, "fuzz");
	fold = sp_fold_new(fold_flags(size));
	if (!rd || !fold)
		abort();
	if (sp_st_reader_header(rd) != SP_IN_OK)
		goto out;
	while ((r = sp_st_read(rd, &rec)) > 0) {
		r = sp_fold_apply(fold, &rec);
		if (r == -EINVAL) {
			sp_st_reader_fail(rd, sp_fold_error(fold));
			r = SP_IN_ERROR;
			break;
		}
		if (r)
			abort();
	}
	if (r < 0)
		goto out;

	/* sp-fold writes one of them; each must cope with any model */
	out = fz_out();
	if (sp_fold_write(fold, out) ||
	    sp_fold_write_top(fold, out, 1 + (unsigned)(size % 20)) ||
	    sp_fold_write_pprof(fold, out) ||
	    sp_fold_write_speedscope(fold, out))
		abort();
	if (sp_out_close(out))
		abort();
out:
	sp_fold_free(fold);
	sp_st_reader_free(rd);
	fclose(fp);
	return 0;
}
