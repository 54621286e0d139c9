/* SPDX-License-Identifier: MIT */
/*
 * io.h: buffered reading of record streams with bounds checks, and buffered
 * writing that reports a closed pipe instead of dying of SIGPIPE.
 *
 * A reader names its stream ('stdin' or the path) and knows the byte offset
 * of everything it hands out, so every complaint about bad input can say
 * where it is: "truncated record at byte 4096 of 'stdin': need 48 bytes,
 * have 12".
 */
#ifndef SP_IO_H
#define SP_IO_H

#include <stddef.h>
#include <stdint.h>
#include "stream.h"

struct sp_in;

/*
 * Open path for reading, "-" meaning standard input.  Returns NULL with
 * errno set on failure.  The caller owns the result: sp_in_close() it.
 */
struct sp_in *sp_in_open(const char *path);

/* Wrap an open descriptor; name is copied and used in messages. */
struct sp_in *sp_in_fdopen(int fd, const char *name);

/* Close and free; NULL is a no-op. */
void sp_in_close(struct sp_in *in);

/*
 * Open path for reading only if it is a regular file: a path a stream names
 * may be a FIFO, which would block, or a device, which opening may disturb.
 * Returns a file descriptor (close-on-exec, blocking), or -1 with errno set
 * (EINVAL for a file that is not regular).
 */
int sp_open_regular(const char *path);

/*
 * Call fn(arg) before each read(2), which may block: a filter flushes its
 * output there, so that what it writes keeps pace with what it reads.
 */
void sp_in_on_read(struct sp_in *in, void (*fn)(void *arg), void *arg);

/* The name used in messages: "stdin" or the path. */
const char *sp_in_name(const struct sp_in *in);

/* The descriptor in reads, for a poll(2) before a read that may block. */
int sp_in_fd(const struct sp_in *in);

/* Result codes of sp_in_header(). */
#define SP_IN_OK	0
#define SP_IN_ERROR	(-1)	/* see sp_in_error() */
#define SP_IN_OTHER	(-2)	/* another stackpulse stream: sp_in_kind() */

/*
 * Read a stream header of at most size bytes into hdr (struct
 * sp_stream_header first).  Checks the magic, that the version is at most
 * version, and that header_size is at least min_size; a shorter header than
 * size (an older version) is zero-filled, a longer one is skipped.
 */
int sp_in_header(struct sp_in *in, const char *magic, uint32_t version,
		 void *hdr, size_t min_size, size_t size);

/* After SP_IN_OTHER: "raw", "unwound", "symbolized", "spool". */
const char *sp_in_kind(const struct sp_in *in);

/*
 * Read the next record.  Returns 1 and points *rec at it (valid until the
 * next call), 0 at a clean end of input, SP_IN_ERROR on damage or a read
 * error.
 */
int sp_in_next(struct sp_in *in, const struct sp_rec_hdr **rec);

/* Byte offset of the record last returned by sp_in_next(). */
uint64_t sp_in_rec_offset(const struct sp_in *in);

/*
 * Record a problem with the last record, found by its consumer: the message
 * becomes "<what> at byte <offset of that record> of '<name>'".  Returns
 * SP_IN_ERROR.
 */
int sp_in_fail(struct sp_in *in, const char *what);

/* The last error, one line without the program name. */
const char *sp_in_error(const struct sp_in *in);

struct sp_out;

/*
 * Open path for writing ("-": standard output).  With binary set, refuse a
 * terminal (errno ENOTTY).  Returns NULL with errno set on failure.
 */
struct sp_out *sp_out_open(const char *path, int binary);

/*
 * An output that hands each complete piece of a binary stream to fn: first
 * the stream header, then one record at a time (8-aligned, rec->size
 * bytes).  What fn returns other than 0 stops the output and is returned by
 * later writes.  For embedding a writer of a stream, such as the recorder.
 */
struct sp_out *sp_out_records(int (*fn)(void *arg, const void *rec, size_t len),
			      void *arg);

/* Queue bytes.  Returns 0, or -errno of the failed write (-EPIPE: reader gone). */
int sp_out_write(struct sp_out *out, const void *data, size_t len);

/* Write a record whose hdr.size is set, padding the payload to hdr.size. */
int sp_out_rec(struct sp_out *out, const void *rec, size_t len);

int sp_out_printf(struct sp_out *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Write out what is queued.  Returns 0 or -errno. */
int sp_out_flush(struct sp_out *out);

/* Bytes accepted so far. */
uint64_t sp_out_bytes(const struct sp_out *out);

/*
 * The -errno of the write that failed, which every later write returns, or
 * 0.
 */
int sp_out_error(const struct sp_out *out);

/*
 * The descriptor of out when it is a pipe or a socket, whose reader may go
 * away while nothing is written: poll(2) it for no event, and POLLERR or
 * POLLHUP says the reader has gone.  -1 for a file, a terminal, and
 * sp_out_records().
 */
int sp_out_pipe(const struct sp_out *out);

/* Whether descriptor fd is a pipe or a socket (1) or not (0). */
int sp_fd_is_pipe(int fd);

/* Flush, close, free; returns 0 or the first -errno seen.  NULL is a no-op. */
int sp_out_close(struct sp_out *out);

/*
 * A file that appears whole or not at all: write to the returned output
 * (a temporary file ".NAME.tmp.PID" in dir), then sp_out_commit() it, or
 * sp_out_close() it to drop it.  NULL with errno set on failure.
 */
struct sp_out *sp_out_open_tmp(const char *dir, const char *name);

/*
 * Flush and fsync the temporary file of sp_out_open_tmp(), name it
 * STEM EXT in dir (or, when a file has that name already, which is never
 * replaced, STEM.1EXT, STEM.2EXT, ...), fsync dir, and close out.  The
 * name given goes into placed (size bytes; may be NULL).  Returns 0 or
 * -errno; out is closed either way and on failure no name appears.
 */
int sp_out_commit(struct sp_out *out, const char *dir, const char *stem,
		  const char *ext, char *placed, size_t size);

#endif
