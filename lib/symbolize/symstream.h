/* SPDX-License-Identifier: MIT */
/*
 * symstream.h: an unwound stream in, a symbolized stream out, one record at
 * a time.
 *
 * This is sp-symbolize without its input and output, as unwstream.h is
 * sp-unwind: it replays mappings, names, kernel symbols and perf map text
 * into a symbolizer, names the frames of each STACK record once, and hands
 * every record of the symbolized stream (symtext.h) to a callback, so that
 * the tool writes them as text and the public API keeps the frames of the
 * stacks it is asked for.
 */
#ifndef SP_SYMSTREAM_H
#define SP_SYMSTREAM_H

#include "format/symtext.h"
#include "format/unwound.h"
#include "symbolize.h"

struct sp_symstream;

/*
 * Called with each record of the symbolized stream (strings valid during
 * the call); returns 0, or -errno to stop (passed back).
 */
typedef int sp_symstream_emit_fn(void *arg, const struct sp_st_rec *rec);

/*
 * Returns a stream over sym (not owned: it must outlive the stream),
 * emitting through emit(arg, ...); NULL when out of memory.
 */
struct sp_symstream *sp_symstream_new(struct sp_symbolizer *sym,
				      sp_symstream_emit_fn *emit, void *arg);
void sp_symstream_free(struct sp_symstream *ss);

/* The unwound stream's header: emit its event line.  0 or emit's error. */
int sp_symstream_header(struct sp_symstream *ss, const struct sp_unw_header *h);

/*
 * Take one record of the unwound stream.  Returns 0; -EINVAL when it is
 * damaged or out of place (sp_symstream_error() says how); -ENOMEM; or
 * what emit returned.
 */
int sp_symstream_feed(struct sp_symstream *ss, const struct sp_rec_hdr *rec);

/*
 * The unwound stream has ended.  Returns 0, or -EINVAL when it had no
 * summary record (a truncated stream).
 */
int sp_symstream_finish(struct sp_symstream *ss);

/* What was wrong with the last record refused. */
const char *sp_symstream_error(const struct sp_symstream *ss);

#endif
