/* SPDX-License-Identifier: MIT */
/*
 * symtext.h: the symbolized stream, from sp-symbolize to sp-fold and to
 * anyone with grep, awk or a script.
 *
 * It is text on purpose: by the time addresses have become names the data
 * is small (one line per sample, one block of lines per distinct stack) and
 * people want to read, filter and join it with the tools they know.  One
 * record per line, tab-separated fields, a keyword first so a reader can
 * skip kinds of lines it does not know, and an escape for the three bytes
 * that would break the framing (tab, newline, backslash).  A field that is
 * exactly "-" means "absent"; a value that is a lone dash is written "\-".
 * Stacks are defined once per (pid, id) and samples refer to them, as in the
 * unwound stream.  docs/streams.md is the grammar:
 *
 *	stream  = magic-line *record summary-line
 *	record  = event / comm / stack 1*frame / sample / lost / map / gone /
 *		  comment
 */
#ifndef SP_SYMTEXT_H
#define SP_SYMTEXT_H

#include <stdint.h>
#include <stdio.h>

#include "base/io.h"
#include "frame.h"

#define SP_SYMTEXT_VERSION 1
#define SP_SYMTEXT_LINE_MAX (1u << 20)	/* longest line a reader accepts */

enum sp_st_type {
	SP_ST_EVENT = 1,
	SP_ST_COMM,
	SP_ST_STACK,
	SP_ST_FRAME,
	SP_ST_SAMPLE,
	SP_ST_LOST,
	SP_ST_SUMMARY,
	SP_ST_UNKNOWN,		/* a line of a kind this version does not know */
	SP_ST_START,		/* when the recording began, on both clocks */
	SP_ST_MAP,		/* an executable mapping of a process */
	SP_ST_GONE,		/* a process ended: nothing later refers to it */
	SP_ST_OFFCPU,		/* a wait off the CPU: u.sample, weight in ns,
				   id 0 when no stack was sampled */
};

struct sp_st_event {
	const char *name;
	int freq;		/* value is a frequency in Hz, else a period */
	uint64_t value;
};

struct sp_st_comm {
	uint64_t time;
	uint32_t pid, tid;
	const char *name;
	int exec;
};

struct sp_st_stack {
	uint32_t pid, id;
	uint32_t nframes;
	const char *end;	/* "complete", "truncated", ... */
	const char *flags;	/* "spliced", "go-switch", "no-build-id"
				   joined by ","; NULL none */
};

struct sp_st_frame {
	uint32_t pid, id;
	uint32_t index;		/* 0 is the leaf */
	struct sp_frame f;
};

struct sp_st_sample {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t cpu;
	uint32_t id;
	uint64_t weight;
};

struct sp_st_lost {
	uint64_t time;
	uint64_t count;
};

/*
 * The recording began at time (the recording's clock, as every TIME field)
 * which was realtime nanoseconds since the Unix epoch (0: unknown, for a
 * recording made before the recorder kept it).
 */
struct sp_st_start {
	uint64_t time;
	uint64_t realtime;
};

/*
 * An executable mapping [start, end) of process pid, at file offset pgoff
 * of path ("[vdso]", "[anon]", ... for images); build_id is lowercase hex,
 * NULL when unknown.  Comes before the stacks whose frames are in it.
 */
struct sp_st_map {
	uint64_t time;
	uint32_t pid;
	uint64_t start, end, pgoff;
	const char *build_id;
	const char *path;
};

/*
 * Process pid has ended and its stacks, threads and mappings are done
 * with: no later line refers to them, and a later line with its pid is of
 * another process (which defines its own).  With a tid (has_tid), only
 * that thread of the process has ended: no later line refers to it, until
 * a comm line gives its tid to a new thread.  time is when the writer let
 * it go, after its last sample.
 */
struct sp_st_gone {
	uint64_t time;
	uint32_t pid, tid;
	int has_tid;
};

/* Keys a writer emits; a reader keeps the ones it knows, others are 0. */
struct sp_st_summary {
	uint64_t samples, lost, stacks;
	uint64_t threads, processes;
	uint64_t duration_ns;
	uint64_t frames;	/* frame lines written */
	uint64_t unresolved;	/* of them, with no name (origin none) */
	/* samples by how their stack ended (sp_unw_end_name()), and of them
	   those completed with live stack bytes */
	uint64_t complete, truncated, noinfo, error, depth, noregs;
	uint64_t spliced;
	uint64_t no_build_id;	/* samples of stacks flagged no-build-id */
};

struct sp_st_rec {
	enum sp_st_type type;
	union {
		struct sp_st_event event;
		struct sp_st_comm comm;
		struct sp_st_stack stack;
		struct sp_st_frame frame;
		struct sp_st_sample sample;
		struct sp_st_lost lost;
		struct sp_st_summary summary;
		struct sp_st_start start;
		struct sp_st_map map;
		struct sp_st_gone gone;
	} u;
};

/* Write the magic line.  Returns 0 or -errno of the write. */
int sp_st_write_magic(struct sp_out *out);

/*
 * Write one record as one line, escaping its strings.  Returns 0, -EINVAL
 * for a type that cannot be written (SP_ST_UNKNOWN), or -errno of the write.
 */
int sp_st_write(struct sp_out *out, const struct sp_st_rec *rec);

/*
 * Parse one line (without its newline, NUL-terminated, len bytes) in place:
 * escapes are undone inside line and the strings of *rec point into it.
 * Returns NULL, or a static description of what is wrong ("bad pid field").
 * Comment lines are not records: the caller skips lines starting with '#'.
 */
const char *sp_st_parse(char *line, size_t len, struct sp_st_rec *rec);

/*
 * Check a magic line.  Returns 0, -EPROTONOSUPPORT for a later version
 * (*version set), -EINVAL when it is not a magic line.
 */
int sp_st_parse_magic(const char *line, unsigned *version);

struct sp_st_reader;

/*
 * Read the stream from fp (not owned: the caller closes it); name is copied
 * for messages.  Returns NULL when out of memory.
 */
struct sp_st_reader *sp_st_reader_new(FILE *fp, const char *name);
void sp_st_reader_free(struct sp_st_reader *r);

/*
 * Read and check the magic line.  Returns SP_IN_OK, SP_IN_OTHER when the
 * input is a binary stackpulse stream (sp_st_reader_kind() says which), or
 * SP_IN_ERROR (sp_st_reader_error()).
 */
int sp_st_reader_header(struct sp_st_reader *r);

/* After SP_IN_OTHER: "raw", "unwound", "spool". */
const char *sp_st_reader_kind(const struct sp_st_reader *r);

/*
 * Read the next record, skipping comments and (as SP_ST_UNKNOWN, returned)
 * lines of unknown kinds.  Returns 1 with *rec valid until the next call, 0
 * at the end of input after the summary line, SP_IN_ERROR on a bad line, a
 * read error, a line after the summary or an end without one.
 */
int sp_st_read(struct sp_st_reader *r, struct sp_st_rec *rec);

/*
 * Record a problem found by the consumer in the last line: the message
 * becomes "<what> at line <n> of '<name>'".  Returns SP_IN_ERROR.
 */
int sp_st_reader_fail(struct sp_st_reader *r, const char *what);

/* Line number of the last line read, counting from 1. */
unsigned long sp_st_reader_line(const struct sp_st_reader *r);

/* The last error, one line without the program name. */
const char *sp_st_reader_error(const struct sp_st_reader *r);

#endif
