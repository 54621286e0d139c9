/* SPDX-License-Identifier: MIT */
/*
 * offline.h: sp-unwind and sp-symbolize in one process, for a reader of
 * the symbolized stream that is given a raw or an unwound stream.
 *
 * The records pass from stage to stage as structures, never as bytes or
 * text: the unwinder's records go straight into the symbolizer, whose
 * records go to the caller's callback, as sp_st_read() would give them
 * from sp-symbolize's output.  Both stages read the files they need
 * through one ELF cache, so a file both unwind and name is opened once.
 * Not part of the public API: sp-fold is its user.
 */
#ifndef SP_OFFLINE_H
#define SP_OFFLINE_H

#include "format/raw.h"
#include "format/unwound.h"
#include "symbolize/symstream.h"
#include "unwind/unwstream.h"

struct sp_offline;

/*
 * Returns the stages for a stream whose header is hdr: a struct
 * sp_raw_header when raw is set, else a struct sp_unw_header (copied).
 * Records go to emit(arg, ...).  NULL when out of memory.  Configure the
 * symbolizer and the locators (sp_offline_symbolizer(), ..._unwinder())
 * before the first record; sp_offline_start() then emits the event line.
 */
struct sp_offline *sp_offline_new(int raw, const void *hdr,
				  sp_symstream_emit_fn *emit, void *arg);
void sp_offline_free(struct sp_offline *o);

/* The symbolizer, and the process table whose locator finds its files. */
struct sp_symbolizer *sp_offline_symbolizer(struct sp_offline *o);
struct sp_procs *sp_offline_procs(struct sp_offline *o);

/* The unwinder of a raw stream; NULL for an unwound one. */
struct sp_unwstream *sp_offline_unwinder(struct sp_offline *o);

/* Emit what comes before the first record.  0 or emit's error. */
int sp_offline_start(struct sp_offline *o);

/*
 * Take one record of the input stream.  Returns 0; -EINVAL when it is
 * damaged or out of place (sp_offline_error() says how); -ENOMEM; or what
 * emit returned.
 */
int sp_offline_feed(struct sp_offline *o, const struct sp_rec_hdr *rec);

/* The input has ended.  0, -EINVAL when it had no summary, or emit's. */
int sp_offline_finish(struct sp_offline *o);

/* What was wrong with the last record refused. */
const char *sp_offline_error(const struct sp_offline *o);

#endif
