/* SPDX-License-Identifier: MIT */
/* recorder.c: the public recorder: record, unwind and spool in one process. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/io.h"
#include "os/procfs.h"
#include "record/record.h"
#include "stackpulse.h"
#include "unwind/unwstream.h"

struct sp_perf_recorder {
	struct sp_recorder *rec;
	struct sp_out *out;		/* hands the raw stream to on_raw() */
	struct sp_unwstream *unw;
	struct sp_spool_writer *spool;
	char *path;
	int finished;
	struct sp_err err;
};

const char *sp_version(void)
{
	return SP_VERSION;
}

void sp_perf_recorder_options_init(struct sp_perf_recorder_options *o)
{
	memset(o, 0, sizeof(*o));
	o->frequency = SP_RECORD_DEFAULT_FREQ;
	o->stack_size = SP_RECORD_DEFAULT_STACK;
	o->kernel = SP_KERNEL_AUTO;
}

static int to_spool(void *arg, const struct sp_rec_hdr *rec)
{
	struct sp_perf_recorder *r = arg;
	int e = sp_spool_writer_add(r->spool, rec);

	if (e)
		sp_err_set(&r->err, e, "cannot write '%s': %s", r->path,
			   e == -EINVAL ? sp_spool_writer_error(r->spool) :
			   strerror(-e));
	return e;
}

/* The recorder's raw stream, one piece at a time: unwind it into the spool. */
static int on_raw(void *arg, const void *data, size_t len)
{
	struct sp_perf_recorder *r = arg;
	const struct sp_rec_hdr *rec = data;
	struct sp_unw_header uh;
	int e;

	if (!r->unw) {
		struct sp_raw_header rh;

		memset(&rh, 0, sizeof(rh));
		memcpy(&rh, data, len < sizeof(rh) ? len : sizeof(rh));
		r->unw = sp_unwstream_new(&rh, to_spool, r);
		if (!r->unw)
			return sp_err_set(&r->err, -ENOMEM, "out of memory");
		sp_unwstream_header(r->unw, &uh);
		r->spool = sp_spool_writer_open(r->path, &uh, NULL);
		if (!r->spool)
			return sp_err_set(&r->err, -errno, "cannot create '%s': %s",
					  r->path, strerror(errno));
		return 0;
	}
	e = sp_unwstream_feed(r->unw, rec);
	if (!e && rec->type == SP_REC_SUMMARY)
		e = sp_unwstream_finish(r->unw);
	if (e == -EINVAL && !r->err.msg[0])
		sp_err_set(&r->err, e, "%s", sp_unwstream_error(r->unw));
	return e;
}

int sp_perf_recorder_attach(pid_t pid, const char *spool_path,
			    enum sp_attach_mode mode,
			    const struct sp_perf_recorder_options *o,
			    struct sp_perf_recorder **rp)
{
	struct sp_perf_recorder_options defaults;
	struct sp_record_opts ro;
	struct sp_perf_recorder *r;
	int e;

	*rp = r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (!o) {
		sp_perf_recorder_options_init(&defaults);
		o = &defaults;
	}
	sp_record_opts_init(&ro);
	if (o->frequency)
		ro.frequency = o->frequency;
	if (o->stack_size)
		ro.stack_size = o->stack_size;
	if (o->event)
		ro.event = o->event;
	ro.pages = o->buffer_pages;
	ro.kernel = o->kernel == SP_KERNEL_OFF ? SP_RECORD_KERNEL_OFF :
		    o->kernel == SP_KERNEL_ON ? SP_RECORD_KERNEL_ON :
		    SP_RECORD_KERNEL_AUTO;
	switch (mode) {
	case SP_ATTACH_STOP:
		ro.attach = SP_RECORD_ATTACH_STOP;
		break;
	case SP_ATTACH_LIVE:
		ro.attach = SP_RECORD_ATTACH_LIVE;
		break;
	case SP_ATTACH_ENABLE_ON_EXEC:
		ro.attach = SP_RECORD_ATTACH_ON_EXEC;
		break;
	default:
		return sp_err_set(&r->err, -EINVAL, "invalid attach mode %d", (int)mode);
	}
	r->path = strdup(spool_path);
	r->out = sp_out_records(on_raw, r);
	if (!r->path || !r->out)
		return sp_err_set(&r->err, -ENOMEM, "out of memory");
	r->rec = sp_recorder_new(&ro, r->out);
	if (!r->rec)
		return sp_err_set(&r->err, -errno, "cannot record: %s", strerror(errno));
	e = sp_recorder_attach(r->rec, &pid, 1);
	if (e && !r->err.msg[0])
		sp_err_set(&r->err, e, "%s", sp_recorder_error(r->rec));
	return e;
}

int sp_perf_recorder_wait(struct sp_perf_recorder *r, int timeout_ms)
{
	return sp_recorder_wait(r->rec, timeout_ms);
}

int sp_perf_recorder_consume_available(struct sp_perf_recorder *r)
{
	int e = sp_recorder_consume(r->rec);

	if (e && !r->err.msg[0])
		sp_err_set(&r->err, e, "%s", sp_recorder_error(r->rec));
	return e;
}

int sp_perf_recorder_process_is_active(struct sp_perf_recorder *r, pid_t pid)
{
	return sp_procfs_alive(pid) > 0;
}

int sp_perf_recorder_disable(struct sp_perf_recorder *r)
{
	return sp_recorder_disable(r->rec);
}

int sp_perf_recorder_finish(struct sp_perf_recorder *r,
			    struct sp_perf_summary *s)
{
	struct sp_record_stats st;
	int e, e2;

	if (r->finished)
		return sp_err_set(&r->err, -EINVAL, "already finished");
	r->finished = 1;
	e = sp_recorder_finish(r->rec, &st);
	if (e && !r->err.msg[0])
		sp_err_set(&r->err, e, "%s", sp_recorder_error(r->rec));
	e2 = sp_spool_writer_close(r->spool);
	r->spool = NULL;
	if (e2 && !e)
		e = sp_err_set(&r->err, e2, "cannot write '%s': %s", r->path,
			       strerror(-e2));
	if (s) {
		const struct sp_unw_summary *u = r->unw ?
			sp_unwstream_summary(r->unw) : NULL;

		memset(s, 0, sizeof(*s));
		s->samples = st.samples;
		s->lost_events = st.lost;
		s->stacks = u ? u->stacks : 0;
		s->threads = st.threads;
		s->processes = st.processes;
		s->duration_ns = st.duration_ns;
	}
	return e;
}

const char *sp_perf_recorder_error(const struct sp_perf_recorder *r)
{
	return r->err.msg;
}

void sp_perf_recorder_free(struct sp_perf_recorder *r)
{
	if (!r)
		return;
	sp_recorder_free(r->rec);
	sp_out_close(r->out);
	sp_spool_writer_close(r->spool);
	sp_unwstream_free(r->unw);
	free(r->path);
	free(r);
}
