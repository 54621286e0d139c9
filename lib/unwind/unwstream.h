/* SPDX-License-Identifier: MIT */
/*
 * unwstream.h: a raw stream in, an unwound stream out, one record at a time.
 *
 * This is sp-unwind without its input and output: it replays mappings and
 * names into a process table, unwinds each sample, interns its stack and
 * hands every unwound-stream record to a callback, so that a tool can write
 * them to a pipe and a program can append them to a spool in-process.
 * What it keeps of a process (mappings, libunwind's address space, the
 * stacks interned) goes when the process table forgets the process, a
 * second of stream time after its last thread's EXIT: its memory follows
 * the processes alive.
 */
#ifndef SP_UNWSTREAM_H
#define SP_UNWSTREAM_H

#include "elf/procs.h"
#include "format/raw.h"
#include "format/unwound.h"

struct sp_unwstream;

/*
 * Called with each record of the unwound stream, complete and padded to
 * rec->size; returns 0, or -errno to stop feeding (passed back).
 */
typedef int sp_unwstream_emit_fn(void *arg, const struct sp_rec_hdr *rec);

/*
 * Returns an unwinder for the stream with raw header rh (copied), emitting
 * through emit(arg, ...); NULL when out of memory.  Free it with
 * sp_unwstream_free().
 */
struct sp_unwstream *sp_unwstream_new(const struct sp_raw_header *rh,
				      sp_unwstream_emit_fn *emit, void *arg);

/*
 * The same, reading the files the stream maps through cache, which the
 * caller keeps, may give to one stream after another, and frees after the
 * last (a program that unwinds many streams opens each file once).
 */
struct sp_unwstream *sp_unwstream_new_cached(const struct sp_raw_header *rh,
					     struct sp_elf_cache *cache,
					     sp_unwstream_emit_fn *emit,
					     void *arg);
void sp_unwstream_free(struct sp_unwstream *u);

/* The unwound stream header that goes before the first record. */
void sp_unwstream_header(const struct sp_unwstream *u,
			 struct sp_unw_header *out);

/*
 * Take one record of the raw stream.  Returns 0; -EINVAL when the record is
 * damaged or out of place (sp_unwstream_error() says how); -ENOMEM; or what
 * emit returned.
 */
int sp_unwstream_feed(struct sp_unwstream *u, const struct sp_rec_hdr *rec);

/*
 * The raw stream has ended: emit the summary.  Returns 0, -EINVAL when no
 * summary record came (a truncated stream), or what emit returned.
 */
int sp_unwstream_finish(struct sp_unwstream *u);

/* Counts so far: samples, stacks, and how each stack ended. */
const struct sp_unw_summary *sp_unwstream_summary(const struct sp_unwstream *u);

/* Counts the summary record has no field for. */
struct sp_unwstream_stats {
	uint64_t spliced;	/* samples of SP_STACK_SPLICED stacks */
	uint64_t no_buildid;	/* samples of SP_STACK_NO_BUILDID stacks */
};

const struct sp_unwstream_stats *sp_unwstream_stats(const struct sp_unwstream *u);

/* sp_unwinder_set_memo() of u's unwinder (unwind.h). */
void sp_unwstream_set_memo(struct sp_unwstream *u, int on);

/*
 * Where the files of the mappings are looked for (elf/locate.h: the
 * build-id cache's directory): configure it before the first record.
 */
struct sp_locator *sp_unwstream_locator(struct sp_unwstream *u);

/*
 * The files mapped with a build-id that no file at hand has with its code
 * (elf/procs.h), *n of them, owned by u and valid until the next record.
 */
const struct sp_missing_file *sp_unwstream_missing(const struct sp_unwstream *u,
						   size_t *n);

/* How many samples ended in missing file i (SP_STACK_NO_BUILDID). */
uint64_t sp_unwstream_missing_samples(const struct sp_unwstream *u, size_t i);

/* What was wrong with the last record refused, a static string. */
const char *sp_unwstream_error(const struct sp_unwstream *u);

#endif
