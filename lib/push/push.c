/* SPDX-License-Identifier: MIT */
/*
 * push.c: windows of a spool directory POSTed to Pyroscope's /ingest.
 *
 * Each window goes as its own raw body (format=pprof: the server sees the
 * gzip), with the application name and labels in the name parameter
 * (APP{k=v,...}), the window's range as from and until in milliseconds,
 * and its frequency as sampleRate.  2xx is done; 408, 429, 5xx, a 401 or
 * 403 (a key being fixed) and no answer at all are worth another try; any
 * other 4xx refuses the window for good.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/grow.h"
#include "push.h"

/* "20261205T021003.217Z" to Unix milliseconds; the end of it in *end. */
static int parse_stamp(const char *s, uint64_t *ms, const char **end)
{
	struct tm tm;
	unsigned v[7];
	time_t t;
	int n = 0;

	if (sscanf(s, "%4u%2u%2uT%2u%2u%2u.%3uZ%n", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &n) != 7 || n != 20)
		return -EINVAL;
	if (v[0] < 1970 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 ||
	    v[3] > 23 || v[4] > 59 || v[5] > 60)
		return -EINVAL;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = (int)v[0] - 1900;
	tm.tm_mon = (int)v[1] - 1;
	tm.tm_mday = (int)v[2];
	tm.tm_hour = (int)v[3];
	tm.tm_min = (int)v[4];
	tm.tm_sec = (int)v[5];
	t = timegm(&tm);
	if (t < 0)
		return -EINVAL;
	*ms = (uint64_t)t * 1000 + v[6];
	*end = s + n;
	return 0;
}

int sp_push_parse_name(const char *name, struct sp_push_window *w)
{
	const char *p = name;
	unsigned long v;
	char *end;

	memset(w, 0, sizeof(*w));
	if (strlen(name) >= sizeof(w->name) || parse_stamp(p, &w->from_ms, &p) ||
	    *p++ != '_' || parse_stamp(p, &w->until_ms, &p) ||
	    w->until_ms < w->from_ms)
		return -EINVAL;
	if (*p == '_') {
		v = strtoul(p + 1, &end, 10);
		if (end == p + 1 || strncmp(end, "hz", 2) || !v || v > 1000000)
			return -EINVAL;
		w->hz = (unsigned)v;
		p = end + 2;
	}
	/* ".N": a second file for one window (fold/window.c) */
	if (*p == '.' && p[1] >= '1' && p[1] <= '9') {
		strtoul(p + 1, &end, 10);
		p = end;
	}
	if (strcmp(p, ".pb.gz"))
		return -EINVAL;
	strcpy(w->name, name);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct sp_push_window *x = a, *y = b;

	if (x->from_ms != y->from_ms)
		return x->from_ms < y->from_ms ? -1 : 1;
	return strcmp(x->name, y->name);
}

int sp_push_list(const char *dir, struct sp_push_window **out, size_t *n)
{
	struct sp_push_window *v = NULL, w;
	size_t len = 0, cap = 0;
	struct dirent *d;
	struct stat st;
	DIR *dp = opendir(dir);

	*out = NULL;
	*n = 0;
	if (!dp)
		return -errno;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.' || sp_push_parse_name(d->d_name, &w) ||
		    fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		w.bytes = (uint64_t)st.st_size;
		if (SP_GROW(v, cap, len + 1)) {
			free(v);
			closedir(dp);
			return -ENOMEM;
		}
		v[len++] = w;
	}
	closedir(dp);
	if (len)
		qsort(v, len, sizeof(*v), by_name);
	*out = v;
	*n = len;
	return 0;
}

struct sp_pusher {
	CURL *curl;
	char *url, *app, *labels, *tenant, *basic, *bearer;
	long timeout_s;
	struct sp_err err;
	char body[512];		/* the start of the server's answer */
	size_t body_len;
};

static char *dup_or_null(const char *s, int *bad)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*bad = 1;
	return d;
}

struct sp_pusher *sp_pusher_new(const struct sp_push_opts *o)
{
	struct sp_pusher *p;
	int bad = 0;

	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		errno = ENOMEM;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->curl = curl_easy_init();
	p->url = dup_or_null(o->url, &bad);
	p->app = dup_or_null(o->app, &bad);
	p->labels = dup_or_null(o->labels, &bad);
	p->tenant = dup_or_null(o->tenant, &bad);
	p->basic = dup_or_null(o->basic, &bad);
	p->bearer = dup_or_null(o->bearer, &bad);
	p->timeout_s = o->timeout_s > 0 ? o->timeout_s : 30;
	if (!p->curl || bad || !p->url || !p->app) {
		sp_pusher_free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

/* Overwrite a secret before its memory goes back. */
static void forget(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void sp_pusher_free(struct sp_pusher *p)
{
	if (!p)
		return;
	if (p->curl)
		curl_easy_cleanup(p->curl);
	free(p->url);
	free(p->app);
	free(p->labels);
	free(p->tenant);
	forget(p->basic);
	forget(p->bearer);
	free(p);
}

const char *sp_pusher_error(const struct sp_pusher *p)
{
	return p->err.msg;
}

/* Keep the first bytes of the answer, for the message; drop the rest. */
static size_t take_body(char *data, size_t size, size_t n, void *arg)
{
	struct sp_pusher *p = arg;
	size_t len = size * n, room = sizeof(p->body) - 1 - p->body_len, i;

	for (i = 0; i < len && i < room; i++)
		p->body[p->body_len++] = (unsigned char)data[i] < ' ' ? ' ' : data[i];
	p->body[p->body_len] = 0;
	return len;
}

/* Read a whole window file.  Returns 0 or -errno. */
static int read_window(const char *dir, const char *name, char **buf,
		       size_t *len)
{
	char path[4096 + 160];
	struct stat st;
	ssize_t got;
	size_t done = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int e = -errno;

		close(fd);
		return e;
	}
	/* Pyroscope takes 256 MB at most */
	if (st.st_size > (off_t)(256u << 20)) {
		close(fd);
		return -EFBIG;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	while (done < (size_t)st.st_size) {
		got = read(fd, *buf + done, (size_t)st.st_size - done);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		done += (size_t)got;
	}
	close(fd);
	*len = done;
	return 0;
}

enum sp_push_result sp_pusher_send(struct sp_pusher *p, const char *dir,
				   const struct sp_push_window *w, long *status,
				   long *retry_after_s)
{
	struct curl_slist *hdrs = NULL;
	char *body = NULL, *name = NULL, *esc = NULL, *url = NULL, *h = NULL;
	curl_off_t retry = 0;
	size_t len = 0;
	CURLcode c;
	int e;

	*status = 0;
	*retry_after_s = 0;
	p->body_len = 0;
	p->body[0] = 0;
	e = read_window(dir, w->name, &body, &len);
	if (e) {
		sp_err_set(&p->err, e, "cannot read '%s/%s': %s", dir, w->name,
			   strerror(-e));
		return e == -ENOENT ? SP_PUSH_SENT : SP_PUSH_RETRY;
	}
	if (asprintf(&name, "%s{%s}", p->app, p->labels ? p->labels : "") < 0)
		name = NULL;
	esc = name ? curl_easy_escape(p->curl, name, 0) : NULL;
	if (!esc || asprintf(&url, "%s/ingest?name=%s&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof&spyName=stackpulse%s%.0u",
			     p->url, esc, w->from_ms, w->until_ms,
			     w->hz ? "&sampleRate=" : "", w->hz) < 0)
		url = NULL;
	hdrs = curl_slist_append(NULL, "Content-Type: application/octet-stream");
	if (hdrs && p->tenant && asprintf(&h, "X-Scope-OrgID: %s", p->tenant) >= 0) {
		struct curl_slist *t = curl_slist_append(hdrs, h);

		hdrs = t ? t : hdrs;
	}
	if (!url || !hdrs) {
		sp_err_set(&p->err, -ENOMEM, "out of memory");
		c = CURLE_OUT_OF_MEMORY;
		goto out;
	}
	curl_easy_reset(p->curl);
	curl_easy_setopt(p->curl, CURLOPT_URL, url);
	curl_easy_setopt(p->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT, p->timeout_s);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, take_body);
	curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, p);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "stackpulse/" SP_VERSION);
	if (p->basic) {
		curl_easy_setopt(p->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(p->curl, CURLOPT_USERPWD, p->basic);
	} else if (p->bearer) {
		curl_easy_setopt(p->curl, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
		curl_easy_setopt(p->curl, CURLOPT_XOAUTH2_BEARER, p->bearer);
	}
	c = curl_easy_perform(p->curl);
	if (c == CURLE_OK) {
		curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, status);
		curl_easy_getinfo(p->curl, CURLINFO_RETRY_AFTER, &retry);
		*retry_after_s = (long)retry;
	} else {
		sp_err_set(&p->err, -EIO, "%s: %s", p->url,
			   curl_easy_strerror(c));
	}
out:
	curl_slist_free_all(hdrs);
	free(h);
	curl_free(esc);
	free(name);
	free(url);
	free(body);
	if (c != CURLE_OK)
		return SP_PUSH_RETRY;
	if (*status >= 200 && *status < 300)
		return SP_PUSH_SENT;
	sp_err_set(&p->err, -EIO, "%s answered %ld%s%.200s", p->url, *status,
		   p->body_len ? ": " : "", p->body);
	if (*status == 408 || *status == 429 || *status >= 500 ||
	    *status == 401 || *status == 403 || *status < 200)
		return SP_PUSH_RETRY;
	return SP_PUSH_REFUSED;
}
