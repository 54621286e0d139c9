/* SPDX-License-Identifier: MIT */
/*
 * window.h: a continuous profile, one file per window of wall-clock time
 * in a spool directory (window.c says how windows are cut and named).
 *
 * Use: for every sample of the symbolized stream, sp_window_sample() before
 * sp_fold_apply(); while waiting for input, sp_window_idle() once the
 * clock passes sp_window_deadline(); at the end of the input,
 * sp_window_finish().  Functions returning int give 0 or -errno (of the
 * write, -ENOMEM; -ENODATA: the stream has no realtime start).
 */
#ifndef SP_FOLD_WINDOW_H
#define SP_FOLD_WINDOW_H

#include <stdint.h>

#include "fold.h"

enum sp_window_format {
	SP_WINDOW_PPROF,	/* gzipped profile.proto: START_END.pb.gz */
	SP_WINDOW_FOLDED,	/* folded lines: START_END.folded */
};

struct sp_window_stats {
	uint64_t windows;	/* files written */
	uint64_t samples;	/* samples in them */
	uint64_t late;		/* samples that came after their window was
				   written for want of input */
};

struct sp_window;

/* Windows of every_ns into directory dir (copied).  NULL with errno set. */
struct sp_window *sp_window_new(uint64_t every_ns, const char *dir,
				enum sp_window_format format);
void sp_window_free(struct sp_window *w);

/*
 * A sample stamped time is about to be counted, the realtime clock reading
 * now: close a window it ends.
 */
int sp_window_sample(struct sp_window *w, struct sp_fold *f, uint64_t time,
		     uint64_t now);

/* Realtime after which an open window is closed for want of input; 0 none. */
uint64_t sp_window_deadline(const struct sp_window *w);

/* The realtime clock reads now: close the open window if it is due. */
int sp_window_idle(struct sp_window *w, struct sp_fold *f, uint64_t now);

/* The input has ended: write the open window, up to the recording's end. */
int sp_window_finish(struct sp_window *w, struct sp_fold *f);

const struct sp_window_stats *sp_window_stats(const struct sp_window *w);

/* The name of the last file written, "" before the first. */
const char *sp_window_last(const struct sp_window *w);

#endif
