/* SPDX-License-Identifier: MIT */
/*
 * model.h: what a fold keeps of the symbolized stream, shared by its
 * writers (fold.c: folded lines and top tables; pprof.c; speedscope.c) and
 * private to lib/fold.
 *
 * Everything is kept once per distinct thing: strings once in one table,
 * a frame once per (process, address, name, source line), a stack once per
 * (process, stack ID) as a run of frame indexes, a mapping once per
 * executable mapping.  Samples are counts on what they refer to: per
 * (folded prefix, folded stack) for folded text, per (thread, name, stack)
 * for pprof, and per run of equal stacks of a thread for speedscope, which
 * keeps samples in time order.  Only what the chosen output needs is
 * counted (SP_FOLD_* flags), so a sample costs a lookup or two.
 */
#ifndef SP_FOLD_MODEL_H
#define SP_FOLD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashtab.h"
#include "format/unwound.h"
#include "fold.h"
#include "format/symtext.h"

#define SP_FOLD_NONE UINT32_MAX	/* no string, no mapping */

struct sp_fold_frame {
	uint64_t addr;
	uint32_t pid;		/* 0 for kernel frames, shared by all */
	uint32_t name;		/* string ids: the name as chosen (--names) */
	uint32_t full;		/* the whole name as symbolized */
	uint32_t file, module;	/* or SP_FOLD_NONE */
	uint32_t line;		/* 0 unknown */
	uint32_t symbol;	/* the name in the file (mangled), or NONE */
	uint32_t decl_line;	/* the function's first line, 0 unknown */
	uint32_t map;		/* index in maps, or SP_FOLD_NONE */
	uint32_t folded;	/* the name made safe for folded text */
	uint8_t kind, origin;
};

struct sp_fold_stack {
	uint32_t pid;
	uint32_t folded;	/* string id: the frames joined root first */
	uint32_t off, n;	/* frame indexes frame_ids[off..off+n), leaf first */
	uint8_t end;		/* enum sp_unw_end; SP_END_MAX: not one we know */
	uint8_t offcpu;		/* an off-CPU stack: waits are counted on it */
	uint32_t base;		/* an off-CPU stack: the index of the stack
				   it was made of (a redefinition makes
				   another), SP_FOLD_NONE for none */
};

struct sp_fold_map {
	uint32_t pid;
	uint64_t start, end, pgoff;
	uint32_t build_id, path;	/* string ids; build_id SP_FOLD_NONE */
};

/* The mappings of one process, sorted by start, never overlapping. */
struct sp_fold_space {
	uint32_t *maps;		/* indexes into maps */
	size_t n, cap;
};

/* pprof: samples of one thread, under one name, of one stack. */
struct sp_fold_sample {
	uint32_t pid, tid;
	uint32_t comm;		/* string id of the thread's name */
	uint32_t prefix;	/* string id of its folded first frame */
	uint32_t stack;		/* index into stacks */
	uint32_t next;		/* next entry of the same (tid, stack), or NONE */
	uint64_t count, weight;
};

/* speedscope: consecutive samples of a thread with the same stack. */
struct sp_fold_run {
	uint32_t stack;
	uint64_t count, weight;
};

struct sp_fold_thread {
	uint32_t pid, tid;
	uint32_t comm;		/* string id of its name at its last sample */
	uint64_t first, last;	/* times of its first and last samples */
	struct sp_fold_run *runs;
	size_t nruns, cap;
	uint64_t count, weight;
};

/* A key a process put in a table (kind SP_FOLD_OWN_*), its pid aside. */
struct sp_fold_own {
	uint32_t id;		/* tid, or stack ID */
	uint8_t kind;
};

enum { SP_FOLD_OWN_COMM, SP_FOLD_OWN_PREFIX, SP_FOLD_OWN_STACK,
       SP_FOLD_OWN_OFFSTACK };

/* The keys of one process, to take out when it is gone. */
struct sp_fold_owned {
	struct sp_fold_own *ents;
	size_t n, cap;
};

struct sp_fold {
	unsigned flags;
	struct sp_strtab strs;	/* every string: names, files, comms, stacks */

	/* the recording */
	uint32_t event;		/* string id of the event name, or NONE */
	int freq;
	uint64_t event_value;	/* frequency in Hz or period */
	int have_start;
	uint64_t start_time, start_realtime;
	uint64_t duration_ns;
	uint64_t first_time, last_time;	/* of samples; first_time 0: none yet */
	uint64_t range_start, range_end;	/* realtime ns a profile covers;
						   range_end 0: the recording */

	/* string ids of labels every pprof sample carries: key, value, ... */
	uint32_t *labels;
	size_t nlabels, labelcap;	/* ids, twice the labels */

	/* threads' names and the first frame of folded lines */
	struct sp_u64map comms;		/* pid << 32 | tid -> raw name id */
	struct sp_u64map prefixes;	/* pid << 32 | tid -> first-frame id */

	/* mappings */
	struct sp_fold_map *maps;
	size_t nmaps, mapcap;
	struct sp_u64map spaces;	/* pid -> index into space */
	struct sp_fold_space *space;
	size_t nspace, spacecap;

	/* frames and stacks */
	struct sp_u64map short_names;	/* full name id -> short name id */
	uint32_t *frame_slots;		/* a frame's identity: index + 1, 0 empty */
	uint32_t nframe_slots;		/* a power of two, at most half full */
	struct sp_fold_frame *frames;
	size_t nframes, framecap;
	uint32_t *frame_ids;		/* the frames of every stack */
	size_t nframe_ids, frame_idcap;
	struct sp_fold_stack *stacks;
	size_t nstacks, stackcap;
	struct sp_u64map stack_ids;	/* pid << 32 | id -> index into stacks */
	/*
	 * The stacks off-CPU waits are counted on: a stack of stack_ids (or
	 * none, id 0) with a synthetic leaf that says why it waited.
	 */
	struct sp_u64map offstacks;	/* pid << 32 | id -> index into stacks */

	/* counts */
	struct sp_u64map counts;	/* prefix id << 32 | folded id -> count */
	struct sp_fold_sample *samples;	/* SP_FOLD_SAMPLES */
	size_t nsamples, samplecap;
	struct sp_u64map sample_ids;	/* tid << 32 | stack -> first entry */
	struct sp_fold_thread *threads;	/* SP_FOLD_TIMELINE */
	size_t nthreads, threadcap;
	struct sp_u64map thread_ids;	/* pid << 32 | tid -> index */
	uint64_t total;			/* samples, or weights with SP_FOLD_WEIGHT */
	uint64_t ends[SP_END_MAX + 1];	/* of total, by stack end */
	uint64_t nsamples_seen, weight_seen;
	uint64_t offcpu_seen;		/* of them, off-CPU waits */

	/*
	 * Processes the stream says are gone (its gone lines) are taken out
	 * of comms, prefixes, stack_ids and spaces at once; what only they
	 * used (stacks, frames, mappings, strings) stays in the arrays until
	 * a compaction copies what is still reachable into a new fold.
	 */
	struct sp_u64map pid_owned;	/* pid -> index into owned */
	struct sp_fold_owned *owned;
	size_t nowned, ownedcap;
	uint64_t live_keys, dead_keys;	/* held by live processes; let go */
	uint64_t compactions;

	/* the stack whose frame lines are arriving */
	int pending;
	uint32_t pend_pid, pend_id, pend_n, pend_got;
	uint32_t pend_off;		/* where its frames start in frame_ids */
	uint8_t pend_end;

	char err[160];
};

/* The string of id, "" for SP_FOLD_NONE. */
static inline const char *sp_fold_str(const struct sp_fold *f, uint32_t id)
{
	return id == SP_FOLD_NONE ? "" : f->strs.strs[id];
}

static inline uint64_t sp_fold_key2(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}

/* fold.c, for compact.c and offcpu.c: the parts of a fold they work with. */

/* Free what f holds, not f. */
void sp_fold_release(struct sp_fold *f);

/* Put the message in f's error; returns -EINVAL. */
int sp_fold_fail(struct sp_fold *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Intern s, or NONE for NULL; -ENOMEM. */
int64_t sp_fold_intern(struct sp_fold *f, const char *s);

/* Intern s and free it; -ENOMEM also when s is NULL (it failed). */
int64_t sp_fold_intern_free(struct sp_fold *f, char *s);

/* Note that process pid put key (pid, id) into the table of kind. */
int sp_fold_own(struct sp_fold *f, uint32_t pid, uint32_t id, uint8_t kind);

/* The mappings of pid, made when create is set; NULL if none (or no memory). */
struct sp_fold_space *sp_fold_space_of(struct sp_fold *f, uint32_t pid,
				       int create);

/* Append a mapping; its index, or -ENOMEM. */
int64_t sp_fold_add_map(struct sp_fold *f, const struct sp_fold_map *m);

/*
 * The index of the frame with fr's identity (pid, address, kind, names,
 * file, module, lines), *fr appended as it is when there is none yet (then
 * *is_new is set).  -ENOMEM.
 */
int64_t sp_fold_frame_add(struct sp_fold *f, const struct sp_fold_frame *fr,
			  int *is_new);

/* offcpu.c */

/*
 * The stack a wait of (pid, id) counts on (id 0: a wait whose stack was
 * not sampled): that stack under a leaf that says why it waited.  Its
 * index, or -errno.
 */
int64_t sp_fold_off_stack(struct sp_fold *f, uint32_t pid, uint32_t id);

/* compact.c */

/* A gone line: take what the process (or thread) put in the tables out. */
void sp_fold_gone(struct sp_fold *f, const struct sp_st_gone *g);

/*
 * With no count and no stack half read, once what was let go weighs as
 * much as what the live processes hold: copy what is reachable into a new
 * model and free the old.  Out of memory, f stays as it was.
 */
void sp_fold_compact(struct sp_fold *f);

#endif
