/* SPDX-License-Identifier: MIT */
/*
 * fold.h: folding the symbolized stream into the profiles people look at:
 * FlameGraph's folded lines ("comm;outer;...;leaf COUNT"), top tables,
 * pprof's profile.proto and speedscope's JSON.
 *
 * Each (pid, stack ID) is folded once, when its frames arrive, into an
 * interned string and a run of distinct frames; a sample then costs a
 * thread lookup and a counter increment.  Memory grows with distinct
 * stacks, frames and threads, never with the number of samples, except for
 * speedscope's time order (SP_FOLD_TIMELINE), which keeps one entry per run
 * of equal stacks of a thread.  Names are made safe for flamegraph.pl,
 * which splits frames on ';' and reads a trailing " <digits>" as the count.
 * docs/formats.md says what each output holds.
 */
#ifndef SP_FOLD_H
#define SP_FOLD_H

#include <stdint.h>

#include "base/io.h"
#include "format/symtext.h"

#define SP_FOLD_PID	0x1	/* first frame "comm-PID" */
#define SP_FOLD_TID	0x2	/* first frame "comm-PID/TID" (wins over PID) */
#define SP_FOLD_HIDDEN	0x4	/* keep frames flagged hidden */
#define SP_FOLD_WEIGHT	0x8	/* count sample weights, not samples */
#define SP_FOLD_SHORT	0x10	/* names without return types, parameters */
#define SP_FOLD_SAMPLES	0x20	/* count per thread and stack (pprof) */
#define SP_FOLD_TIMELINE 0x40	/* keep each thread's samples in order (speedscope) */

struct sp_fold;

/* Returns a new, empty fold with SP_FOLD_* flags; NULL when out of memory. */
struct sp_fold *sp_fold_new(unsigned flags);
void sp_fold_free(struct sp_fold *f);

/*
 * Take one record of the symbolized stream, in stream order: comm lines
 * name threads, stack and frame lines define stacks, sample lines count.
 * Other types are ignored.  Returns 0, -ENOMEM, or -EINVAL for a record
 * that breaks the grammar (sp_fold_error() says how: a frame out of order,
 * a sample of an undefined stack).
 */
int sp_fold_apply(struct sp_fold *f, const struct sp_st_rec *rec);

/* Description of the last -EINVAL, without position. */
const char *sp_fold_error(const struct sp_fold *f);

/*
 * Whether the stream's event counts time (cpu-clock, task-clock, or only
 * off-CPU waits), so that every weight is nanoseconds.
 */
int sp_fold_time_event(const struct sp_fold *f);

/* Samples (or weight) counted so far. */
uint64_t sp_fold_total(const struct sp_fold *f);

/* Sample lines counted so far (since the last sp_fold_clear_counts()). */
uint64_t sp_fold_samples(const struct sp_fold *f);

/*
 * Realtime (ns since the epoch) of time on the recording's clock, from the
 * stream's start line; 0 when it has none yet or it holds no realtime.
 */
uint64_t sp_fold_realtime(const struct sp_fold *f, uint64_t time);

/*
 * Realtime of the end of the recording (its summary's duration after its
 * start), or of the last sample when there is no summary; 0 unknown.
 */
uint64_t sp_fold_end_realtime(const struct sp_fold *f);

/*
 * What a profile covers, realtime ns [start, end), for the outputs that
 * say (pprof's time_nanos and duration_nanos); by default the recording.
 */
void sp_fold_set_range(struct sp_fold *f, uint64_t start, uint64_t end);

/*
 * Forget the counts, keep what the stream defined (threads' names,
 * mappings, stacks): the next profile counts the samples that come next.
 * What only processes gone (the stream's gone lines) used is freed here,
 * once there is as much of it as of what the live ones use.
 */
void sp_fold_clear_counts(struct sp_fold *f);

/* How many times clearing the counts freed what processes gone left. */
uint64_t sp_fold_compactions(const struct sp_fold *f);

/*
 * A label every sample of a pprof profile carries (key=value, copied), as
 * host or service_name.  0 or -ENOMEM.
 */
int sp_fold_add_label(struct sp_fold *f, const char *key, const char *value);

/*
 * Write the folded lines, sorted by count descending then by stack string
 * bytewise ascending.  Returns 0, -ENOMEM or -errno of the write.
 */
int sp_fold_write(struct sp_fold *f, struct sp_out *out);

/*
 * Write the n functions with most self samples, then the n with most total
 * samples (a function counts once per sample even when recursive), as a
 * table: self, self%, total, total%, function; then the samples by how
 * their stacks ended ("complete", "truncated", ...: the stack lines' END).
 * Returns as sp_fold_write().
 */
int sp_fold_write_top(struct sp_fold *f, struct sp_out *out, unsigned n);

/*
 * Write a gzip-compressed pprof profile (needs SP_FOLD_SAMPLES): sample
 * types samples/count and cpu/nanoseconds (or EVENT/count), a Location per
 * distinct address with its inline chain as Lines, Functions, Mappings with
 * build-ids, labels pid, tid and thread_name.  Returns as sp_fold_write().
 */
int sp_fold_write_pprof(struct sp_fold *f, struct sp_out *out);

/*
 * Write a speedscope file (needs SP_FOLD_TIMELINE): one sampled profile per
 * thread, in time order, over one shared frame table.  Returns as
 * sp_fold_write().
 */
int sp_fold_write_speedscope(struct sp_fold *f, struct sp_out *out);

/*
 * Returns a frame name safe for the folded format, malloc'd (the caller
 * frees it), NULL when out of memory: ';' becomes ':', control bytes become
 * spaces, trailing whitespace goes, whitespace before trailing digits
 * becomes '_', an unresolved "[module]+0x1f0" loses its offset so such
 * frames of one module merge, an empty name becomes "[unknown]", and kernel,
 * JIT and inline frames get the suffixes "_[k]", "_[j]", "_[i]".
 */
char *sp_fold_name(const char *name, unsigned kind, unsigned origin);

/* Returns a thread name for the first frame (spaces to '_'), malloc'd. */
char *sp_fold_comm_name(const char *comm);

#endif
