/* SPDX-License-Identifier: MIT */
/* io.c: buffered, bounds-checked record input and pipe-aware output. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "io.h"

/*
 * Bytes read or written at a time.  The fuzz build makes it small, so that
 * its short inputs cross buffer boundaries (and it does not map and unmap
 * a large buffer for every input).
 */
#ifndef SP_IO_CHUNK
#define SP_IO_CHUNK (256 * 1024)
#endif

struct sp_in {
	int fd;
	int eof;
	char *name;
	uint8_t *buf;
	size_t cap, pos, len;	/* unread bytes are buf[pos, len) */
	uint64_t off;		/* stream offset of buf[pos] */
	uint64_t rec_off;
	const char *kind;
	void (*on_read)(void *);
	void *on_read_arg;
	char err[256];
};

struct sp_in *sp_in_fdopen(int fd, const char *name)
{
	struct sp_in *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->fd = fd;
	in->name = strdup(name);
	in->cap = SP_IO_CHUNK;
	in->buf = malloc(in->cap);
	if (!in->name || !in->buf)
		goto err;
	return in;
err:
	free(in->name);
	free(in->buf);
	free(in);
	errno = ENOMEM;
	return NULL;
}

int sp_open_regular(const char *path)
{
	struct stat sb;
	int fd, e;

	/* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb))
		e = errno;
	else if (!S_ISREG(sb.st_mode))
		e = EINVAL;
	else if (fcntl(fd, F_SETFL, 0))
		e = errno;
	else
		return fd;
	close(fd);
	errno = e;
	return -1;
}

struct sp_in *sp_in_open(const char *path)
{
	struct sp_in *in;
	int fd;

	if (!strcmp(path, "-"))
		return sp_in_fdopen(0, "stdin");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	in = sp_in_fdopen(fd, path);
	if (!in)
		close(fd);
	return in;
}

void sp_in_close(struct sp_in *in)
{
	if (!in)
		return;
	if (in->fd > 0)
		close(in->fd);
	free(in->name);
	free(in->buf);
	free(in);
}

void sp_in_on_read(struct sp_in *in, void (*fn)(void *arg), void *arg)
{
	in->on_read = fn;
	in->on_read_arg = arg;
}

const char *sp_in_name(const struct sp_in *in)
{
	return in->name;
}

int sp_in_fd(const struct sp_in *in)
{
	return in->fd;
}

const char *sp_in_error(const struct sp_in *in)
{
	return in->err;
}

const char *sp_in_kind(const struct sp_in *in)
{
	return in->kind;
}

uint64_t sp_in_rec_offset(const struct sp_in *in)
{
	return in->rec_off;
}

static int fail_at(struct sp_in *in, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct sp_in *in, uint64_t off, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(in->err, sizeof(in->err), "%s at byte %llu of '%s'", what,
		 (unsigned long long)off, in->name);
	return SP_IN_ERROR;
}

int sp_in_fail(struct sp_in *in, const char *what)
{
	return fail_at(in, in->rec_off, "%s", what);
}

/*
 * Make at least n bytes available at buf[pos].  Returns 1, 0 when the input
 * ended first (fewer bytes are then available), SP_IN_ERROR on read error.
 */
static int fill(struct sp_in *in, size_t n)
{
	while (in->len - in->pos < n) {
		ssize_t r;

		if (in->eof)
			return 0;
		if (in->pos + n > in->cap) {
			memmove(in->buf, in->buf + in->pos, in->len - in->pos);
			in->len -= in->pos;
			in->pos = 0;
		}
		if (SP_GROW(in->buf, in->cap, n)) {
			snprintf(in->err, sizeof(in->err),
				 "out of memory reading '%s'", in->name);
			return SP_IN_ERROR;
		}
		if (in->on_read)
			in->on_read(in->on_read_arg);
		r = read(in->fd, in->buf + in->len, in->cap - in->len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(in->err, sizeof(in->err),
				 "cannot read '%s': %s", in->name,
				 strerror(errno));
			return SP_IN_ERROR;
		}
		if (r == 0)
			in->eof = 1;
		in->len += (size_t)r;
	}
	return 1;
}

int sp_in_header(struct sp_in *in, const char *magic, uint32_t version,
		 void *hdr, size_t min_size, size_t size)
{
	const char *want = sp_stream_kind(magic);
	struct sp_stream_header sh;
	size_t have;
	int r;

	r = fill(in, sizeof(sh));
	if (r < 0)
		return r;
	have = in->len - in->pos;
	if (have == 0)
		return fail_at(in, 0, "empty input, expected a %s stream", want);
	if (have >= SP_MAGIC_LEN) {
		in->kind = sp_stream_kind((const char *)in->buf + in->pos);
		if (in->kind && strcmp(in->kind, want))
			return SP_IN_OTHER;
	}
	if (have < SP_MAGIC_LEN || memcmp(in->buf + in->pos, magic, SP_MAGIC_LEN))
		return fail_at(in, 0, "not a %s stream (bad magic)", want);
	if (have < sizeof(sh))
		return fail_at(in, have, "truncated stream header: need %zu bytes, have %zu",
			       sizeof(sh), have);
	memcpy(&sh, in->buf + in->pos, sizeof(sh));
	if (sh.version == 0 || sh.version > version)
		return fail_at(in, 8, "%s stream version %u is not supported (this build reads 1..%u): upgrade stackpulse",
			       want, sh.version, version);
	if (sh.header_size < min_size || sh.header_size > SP_REC_MAX ||
	    sh.header_size % 8)
		return fail_at(in, 12, "bad stream header size %u: must be a multiple of 8 in %zu..%u",
			       sh.header_size, min_size, SP_REC_MAX);
	r = fill(in, sh.header_size);
	if (r < 0)
		return r;
	if (r == 0)
		return fail_at(in, in->len - in->pos, "truncated stream header: need %u bytes, have %zu",
			       sh.header_size, in->len - in->pos);
	memset(hdr, 0, size);
	memcpy(hdr, in->buf + in->pos, sh.header_size < size ? sh.header_size : size);
	in->pos += sh.header_size;
	in->off += sh.header_size;
	return SP_IN_OK;
}

int sp_in_next(struct sp_in *in, const struct sp_rec_hdr **rec)
{
	struct sp_rec_hdr h;
	size_t have;
	int r;

	in->rec_off = in->off;
	r = fill(in, sizeof(h));
	if (r < 0)
		return r;
	have = in->len - in->pos;
	if (r == 0) {
		if (have == 0)
			return 0;
		return fail_at(in, in->off, "truncated record header: need %zu bytes, have %zu",
			       sizeof(h), have);
	}
	memcpy(&h, in->buf + in->pos, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8 || h.size > SP_REC_MAX)
		return fail_at(in, in->off, "bad record size %u (type %u): must be a multiple of 8 in 8..%u",
			       h.size, h.type, SP_REC_MAX);
	r = fill(in, h.size);
	if (r < 0)
		return r;
	if (r == 0)
		return fail_at(in, in->off, "truncated record (type %u): need %u bytes, have %zu",
			       h.type, h.size, in->len - in->pos);
	/* records are 8-byte multiples; keep them 8-aligned in the buffer */
	if (in->pos % 8) {
		memmove(in->buf, in->buf + in->pos, in->len - in->pos);
		in->len -= in->pos;
		in->pos = 0;
	}
	*rec = (const struct sp_rec_hdr *)(in->buf + in->pos);
	in->pos += h.size;
	in->off += h.size;
	return 1;
}

struct sp_out {
	int fd;
	int pipe;		/* fd is a pipe or a socket */
	int err;
	uint8_t *buf;
	size_t len, cap;
	uint64_t bytes;
	int (*deliver)(void *arg, const void *rec, size_t len);
	void *deliver_arg;
	int header_done;
	char *tmp;		/* sp_out_open_tmp(): the file until committed */
};

struct sp_out *sp_out_records(int (*fn)(void *arg, const void *rec, size_t len),
			      void *arg)
{
	struct sp_out *out = calloc(1, sizeof(*out));

	if (!out)
		return NULL;
	out->fd = -1;
	out->deliver = fn;
	out->deliver_arg = arg;
	return out;
}

/* Hand out the complete header or records at the front of the buffer. */
static int deliver(struct sp_out *out)
{
	size_t pos = 0;
	int r = 0;

	for (;;) {
		size_t need;

		if (!out->header_done) {
			struct sp_stream_header h;

			if (out->len - pos < sizeof(h))
				break;
			memcpy(&h, out->buf + pos, sizeof(h));
			need = h.header_size;
		} else {
			struct sp_rec_hdr h;

			if (out->len - pos < sizeof(h))
				break;
			memcpy(&h, out->buf + pos, sizeof(h));
			need = h.size;
		}
		if (need < 8 || need > SP_REC_MAX) {
			r = -EINVAL;
			break;
		}
		if (out->len - pos < need)
			break;
		r = out->deliver(out->deliver_arg, out->buf + pos, need);
		pos += need;
		out->header_done = 1;
		if (r)
			break;
	}
	memmove(out->buf, out->buf + pos, out->len - pos);
	out->len -= pos;
	if (r)
		out->err = r;
	return r;
}

static int out_collect(struct sp_out *out, const void *data, size_t len)
{
	if (SP_GROW(out->buf, out->cap, out->len + len))
		return out->err = -ENOMEM;
	memcpy(out->buf + out->len, data, len);
	out->len += len;
	return deliver(out);
}

struct sp_out *sp_out_open(const char *path, int binary)
{
	struct sp_out *out;
	int fd;

	if (!strcmp(path, "-"))
		fd = 1;
	else
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	if (binary && isatty(fd)) {
		if (fd != 1)
			close(fd);
		errno = ENOTTY;
		return NULL;
	}
	out = calloc(1, sizeof(*out));
	if (!out)
		goto err;
	out->fd = fd;
	out->pipe = sp_fd_is_pipe(fd);
	out->cap = SP_IO_CHUNK;
	out->buf = malloc(out->cap);
	if (!out->buf)
		goto err;
	return out;
err:
	if (out)
		free(out);
	if (fd != 1)
		close(fd);
	errno = ENOMEM;
	return NULL;
}

int sp_out_flush(struct sp_out *out)
{
	size_t done = 0;

	if (out->err)
		return out->err;
	if (out->deliver)
		return 0;
	while (done < out->len) {
		ssize_t w = write(out->fd, out->buf + done, out->len - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			out->err = -errno;
			return out->err;
		}
		done += (size_t)w;
	}
	out->len = 0;
	return 0;
}

int sp_out_write(struct sp_out *out, const void *data, size_t len)
{
	if (out->err)
		return out->err;
	out->bytes += len;
	if (out->deliver)
		return out_collect(out, data, len);
	if (out->len + len > out->cap) {
		int r = sp_out_flush(out);

		if (r)
			return r;
		if (len > out->cap) {
			const uint8_t *p = data;

			while (len) {
				ssize_t w = write(out->fd, p, len);

				if (w < 0) {
					if (errno == EINTR)
						continue;
					out->err = -errno;
					return out->err;
				}
				p += w;
				len -= (size_t)w;
			}
			return 0;
		}
	}
	memcpy(out->buf + out->len, data, len);
	out->len += len;
	return 0;
}

int sp_out_rec(struct sp_out *out, const void *rec, size_t len)
{
	static const uint8_t zero[64];
	const struct sp_rec_hdr *h = rec;
	size_t pad = h->size > len ? h->size - len : 0;
	int r = sp_out_write(out, rec, len);

	while (r == 0 && pad) {
		size_t n = pad < sizeof(zero) ? pad : sizeof(zero);

		r = sp_out_write(out, zero, n);
		pad -= n;
	}
	return r;
}

int sp_out_printf(struct sp_out *out, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(small))
		return sp_out_write(out, small, (size_t)n);
	{
		char *big = malloc((size_t)n + 1);
		int r;

		if (!big)
			return -ENOMEM;
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		r = sp_out_write(out, big, (size_t)n);
		free(big);
		return r;
	}
}

uint64_t sp_out_bytes(const struct sp_out *out)
{
	return out->bytes;
}

int sp_out_error(const struct sp_out *out)
{
	return out->err;
}

int sp_out_pipe(const struct sp_out *out)
{
	return out->pipe ? out->fd : -1;
}

int sp_fd_is_pipe(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

int sp_out_close(struct sp_out *out)
{
	int r;

	if (!out)
		return 0;
	r = sp_out_flush(out);
	if (out->deliver && !r && out->len)
		r = -EINVAL;	/* a record was cut short */
	if (out->fd >= 0 && out->fd != 1 && close(out->fd) && !r)
		r = -errno;
	if (out->tmp) {
		/* never committed: nothing of it appears */
		unlink(out->tmp);
		free(out->tmp);
	}
	free(out->buf);
	free(out);
	return r;
}

struct sp_out *sp_out_open_tmp(const char *dir, const char *name)
{
	struct sp_out *out;
	char *tmp;

	if (asprintf(&tmp, "%s/.%s.tmp.%d", dir, name, (int)getpid()) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	out = sp_out_open(tmp, 0);
	if (!out) {
		free(tmp);
		return NULL;
	}
	out->tmp = tmp;
	return out;
}

/* fsync(2) directory dir, so that a name placed in it stays.  0 or -errno. */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) && errno != EINVAL)
		r = -errno;
	close(fd);
	return r;
}

int sp_out_commit(struct sp_out *out, const char *dir, const char *stem,
		  const char *ext, char *placed, size_t size)
{
	char *path = NULL;
	int r = sp_out_flush(out), i;

	if (!r && fsync(out->fd))
		r = -errno;
	if (!r && close(out->fd))
		r = -errno;
	out->fd = -1;
	/* link(2), never rename(2): a file of that name is never replaced */
	for (i = 0; !r && i < 1000; i++) {
		free(path);
		if (i == 0)
			r = asprintf(&path, "%s/%s%s", dir, stem, ext);
		else
			r = asprintf(&path, "%s/%s.%d%s", dir, stem, i, ext);
		if (r < 0) {
			path = NULL;
			r = -ENOMEM;
		} else if (link(out->tmp, path) == 0) {
			r = 0;
			break;
		} else {
			r = errno == EEXIST ? 0 : -errno;
		}
	}
	if (!r && i == 1000)
		r = -EEXIST;
	if (!r && (r = sync_dir(dir)))
		unlink(path);
	if (!r && placed)
		snprintf(placed, size, "%s", path + strlen(dir) + 1);
	free(path);
	sp_out_close(out);	/* and the temporary name goes */
	return r;
}
