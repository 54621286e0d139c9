/* SPDX-License-Identifier: MIT */
/*
 * push.h: uploading the windows sp-fold --every writes (fold/window.h)
 * from their spool directory to Grafana Pyroscope's HTTP ingest API, with
 * libcurl.
 *
 * The directory is the queue: a window is a file named
 * START_END[_HZhz][.N].pb.gz (times UTC, YYYYMMDDTHHMMSS.mmmZ), taken
 * oldest first, and deleted only once the server answered 2xx.  Nothing
 * here prints, sleeps or exits: sp-push decides when to try again.
 *
 * Not part of libstackpulse's shared library: only sp-push links libcurl.
 */
#ifndef SP_PUSH_H
#define SP_PUSH_H

#include <stddef.h>
#include <stdint.h>

/* One window file of the spool directory. */
struct sp_push_window {
	char name[128];
	uint64_t from_ms, until_ms;	/* Unix milliseconds */
	unsigned hz;			/* its sampling frequency; 0: not said */
	uint64_t bytes;
};

/*
 * Parse a window's file name.  Returns 0, or -EINVAL when name is not one
 * (a temporary file, a rejected window, anything else).
 */
int sp_push_parse_name(const char *name, struct sp_push_window *w);

/*
 * The windows in dir, oldest first, into a malloc'd array (*out, the
 * caller frees it) of *n.  Returns 0 or -errno.
 */
int sp_push_list(const char *dir, struct sp_push_window **out, size_t *n);

struct sp_push_opts {
	const char *url;	/* the server: http://host:4040 */
	const char *app;	/* application name: host.cpu */
	const char *labels;	/* "k=v,k2=v2" or NULL */
	const char *tenant;	/* X-Scope-OrgID, or NULL */
	const char *basic;	/* "user:password" for basic auth, or NULL */
	const char *bearer;	/* a bearer token, or NULL */
	long timeout_s;		/* of a whole request */
};

/* What one upload came to. */
enum sp_push_result {
	SP_PUSH_SENT,		/* 2xx: delete the window */
	SP_PUSH_RETRY,		/* the server or the network failed: later */
	SP_PUSH_REFUSED,	/* the server refused this window (4xx) */
};

struct sp_pusher;

/* A pusher for o (strings copied).  NULL with errno set. */
struct sp_pusher *sp_pusher_new(const struct sp_push_opts *o);
void sp_pusher_free(struct sp_pusher *p);

/*
 * POST window w of dir.  Returns its result; *status is the HTTP status
 * (0: none came), *retry_after_s what the server asked to wait (0: none),
 * and sp_pusher_error() says what went wrong in one line.
 */
enum sp_push_result sp_pusher_send(struct sp_pusher *p, const char *dir,
				   const struct sp_push_window *w, long *status,
				   long *retry_after_s);

const char *sp_pusher_error(const struct sp_pusher *p);

#endif
