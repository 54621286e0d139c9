/* SPDX-License-Identifier: MIT */
/*
 * window.c: a continuous profile cut into windows of wall-clock time, each
 * written whole into a spool directory for an uploader (sp-push) to take.
 *
 * A sample belongs to the window its realtime falls in, windows starting
 * at multiples of their length since the epoch, so that every agent's
 * windows line up.  The symbolized stream is in time order: a sample of a
 * later window closes the open one.  When no input comes for a whole
 * window length after the open one ended (an idle or filtered host), its
 * end counted on the clock as late as the samples arrive (a recording
 * replayed later is not closed early), it is closed all the same, so that it reaches the backend in time; a sample
 * that then comes for it (a stalled pipeline) is counted late, and goes
 * into a file of its own for that window (START_END.1.pb.gz: a backend
 * adds them up), or into the open window if a later one is open.
 *
 * A window is written as START_END_HZhz.pb.gz (or .folded; HZ the
 * sampling frequency, when the recording had one), times in UTC to the
 * millisecond, YYYYMMDDTHHMMSS.mmmZ: the range its samples may lie in, which for the first and
 * last windows of a recording is the part of the window the recording
 * covers, so that the windows of one recording never overlap and those of
 * a recording that starts again do not either.  The file appears whole
 * (sp_out_commit()): a reader takes every name that does not start with a
 * dot.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "window.h"

struct sp_window {
	uint64_t every;		/* window length, ns */
	char *dir;
	enum sp_window_format format;
	uint64_t cur;		/* realtime start of the open window; 0 none */
	uint64_t closed_end;	/* end of the last window written */
	uint64_t lag;		/* how long after its time the last sample came */
	struct sp_window_stats st;
	char last[128];		/* name of the last file written */
};

struct sp_window *sp_window_new(uint64_t every_ns, const char *dir,
				enum sp_window_format format)
{
	struct sp_window *w;

	if (!every_ns || !dir) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->dir = strdup(dir))) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->every = every_ns;
	w->format = format;
	return w;
}

void sp_window_free(struct sp_window *w)
{
	if (!w)
		return;
	free(w->dir);
	free(w);
}

const struct sp_window_stats *sp_window_stats(const struct sp_window *w)
{
	return &w->st;
}

const char *sp_window_last(const struct sp_window *w)
{
	return w->last;
}

/* "20261205T021003.217Z" */
static void stamp(char *buf, size_t size, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	size_t n;

	gmtime_r(&t, &tm);
	n = strftime(buf, size, "%Y%m%dT%H%M%S", &tm);
	snprintf(buf + n, size - n, ".%03uZ",
		 (unsigned)(ns / 1000000u % 1000u));
}

/* Write the open window, [start, end), and start counting afresh. */
static int close_window(struct sp_window *w, struct sp_fold *f, uint64_t end)
{
	uint64_t start = w->cur, rec_start = sp_fold_realtime(f, f->start_time);
	char a[32], b[32], hz[24] = "", name[96];
	struct sp_out *out;
	int r;

	w->cur = 0;
	if (!sp_fold_samples(f))
		return 0;
	w->closed_end = end;
	/* the first window of a recording covers it from its start */
	if (rec_start > start && rec_start < end)
		start = rec_start;
	stamp(a, sizeof(a), start);
	stamp(b, sizeof(b), end);
	if (f->freq && f->event_value)
		snprintf(hz, sizeof(hz), "_%" PRIu64 "hz", f->event_value);
	snprintf(name, sizeof(name), "%s_%s%s", a, b, hz);
	sp_fold_set_range(f, start, end);
	out = sp_out_open_tmp(w->dir, name);
	if (!out)
		return -errno;
	r = w->format == SP_WINDOW_PPROF ? sp_fold_write_pprof(f, out) :
					    sp_fold_write(f, out);
	if (r) {
		sp_out_close(out);
		return r;
	}
	r = sp_out_commit(out, w->dir, name,
			  w->format == SP_WINDOW_PPROF ? ".pb.gz" : ".folded",
			  w->last, sizeof(w->last));
	if (r)
		return r;
	w->st.windows++;
	w->st.samples += sp_fold_samples(f);
	sp_fold_clear_counts(f);
	return 0;
}

int sp_window_sample(struct sp_window *w, struct sp_fold *f, uint64_t time,
		     uint64_t now)
{
	uint64_t rt = sp_fold_realtime(f, time), start;
	int r;

	if (!rt)
		return -ENODATA;
	w->lag = now > rt ? now - rt : 0;
	start = rt - rt % w->every;
	if (w->cur && start > w->cur &&
	    (r = close_window(w, f, w->cur + w->every)))
		return r;
	if (!w->cur)
		w->cur = start;
	/* its window is written already: counted where it can be */
	if (start < w->cur || start < w->closed_end)
		w->st.late++;
	return 0;
}

uint64_t sp_window_deadline(const struct sp_window *w)
{
	/* a stream replayed long after it was recorded lags by as much */
	return w->cur ? w->cur + 2 * w->every + w->lag : 0;
}

int sp_window_idle(struct sp_window *w, struct sp_fold *f, uint64_t now)
{
	if (!w->cur || now < sp_window_deadline(w))
		return 0;
	return close_window(w, f, w->cur + w->every);
}

int sp_window_finish(struct sp_window *w, struct sp_fold *f)
{
	uint64_t end;

	if (!w->cur)
		return 0;
	end = w->cur + w->every;
	/* the last window of a recording ends with it */
	if (sp_fold_end_realtime(f) && sp_fold_end_realtime(f) < end &&
	    sp_fold_end_realtime(f) > w->cur)
		end = sp_fold_end_realtime(f);
	return close_window(w, f, end);
}
