/* SPDX-License-Identifier: MIT */
/*
 * records.h: the records that more than one stream carries, and the record
 * types of every stream.
 *
 * The records below (mappings, names, thread lifetimes, memory images, lost
 * and throttle counts, kernel symbols, perf map text) pass unchanged from
 * the raw stream into the unwound stream and a spool, so they share their
 * layout.  docs/streams.md is the grammar.
 */
#ifndef SP_RECORDS_H
#define SP_RECORDS_H

#include "base/stream.h"

/* What was sampled, carried by the raw and the unwound stream headers. */
struct sp_event_info {
	uint32_t type;		/* perf_event_attr.type */
	uint32_t flags;		/* SP_EV_* */
	uint64_t config;	/* perf_event_attr.config */
	uint64_t freq_or_period;
	uint32_t clockid;	/* clock of every time field */
	uint32_t ncpus;
	uint64_t start_time;	/* ns, that clock, when recording began */
	char name[32];		/* "cpu-clock", NUL-terminated */
};

#define SP_EV_FREQ	0x1	/* freq_or_period is a frequency in Hz */
#define SP_EV_KERNEL	0x2	/* kernel callchains were recorded */
#define SP_EV_SWITCH	0x4	/* SWITCH records: off-CPU time per thread */
#define SP_EV_OFFCPU	0x8	/* OFFCPU samples: stacks at switch-out */
#define SP_EV_NO_CPU	0x10	/* no CPU samples: only off-CPU time */

enum sp_rec_type {
	SP_REC_SAMPLE = 1,	/* per stream: struct sp_raw_sample, sp_unw_sample */
	SP_REC_MMAP = 2,
	SP_REC_COMM = 3,
	SP_REC_FORK = 4,
	SP_REC_EXIT = 5,
	SP_REC_LOST = 6,
	SP_REC_THROTTLE = 7,
	SP_REC_IMAGE = 8,
	SP_REC_STACK = 9,	/* unwound stream only */
	SP_REC_SUMMARY = 10,	/* per stream, always the last record */
	SP_REC_KSYM = 11,
	SP_REC_PERFMAP = 12,
	SP_REC_TAIL = 13,	/* raw stream only: struct sp_tail_rec (tail.h) */
	SP_REC_SWITCH = 14,	/* raw stream only: struct sp_switch_rec */
	SP_REC_OFFCPU = 15,	/* per stream: the layout of its SAMPLE */
	SP_REC_PYCODE = 16,	/* struct sp_pycode_rec (python.h) */
	SP_REC_PYSTACK = 17,	/* raw stream only: struct sp_pystack_rec */
	SP_REC_TYPE_MAX
};

/* Set in flags of records that were read from /proc, not sent by the kernel. */
#define SP_REC_SYNTH	0x1

struct sp_mmap_rec {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, mflags;	/* PROT_*, MAP_* */
	uint32_t flags;		/* SP_REC_SYNTH */
	uint8_t build_id_size;	/* 0: unknown */
	uint8_t pad[3];
	uint8_t build_id[24];
	char filename[];	/* NUL-terminated, zero-padded to 8 bytes */
};

#define SP_COMM_EXEC	0x2	/* the name changed because of an exec */

struct sp_comm_rec {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint32_t pid, tid;
	uint32_t flags;		/* SP_REC_SYNTH, SP_COMM_EXEC */
	uint32_t pad;
	char comm[16];		/* NUL-terminated */
};

/* SP_REC_FORK and SP_REC_EXIT: pid == ppid for a new thread */
struct sp_task_rec {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint32_t pid, ppid;
	uint32_t tid, ptid;
	uint32_t flags;		/* SP_REC_SYNTH */
	uint32_t pad;
};

struct sp_lost_rec {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint64_t id;
	uint64_t lost;		/* events the kernel dropped */
};

struct sp_throttle_rec {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint64_t id;
	uint32_t throttled;	/* 1 throttle, 0 unthrottle */
	uint32_t pad;
};

/* Bytes of a mapping that exist on no disk, such as the target's [vdso]. */
struct sp_image_rec {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint32_t pid;
	uint32_t flags;
	uint64_t start;
	uint64_t len;
	uint8_t data[];		/* len bytes, zero-padded to 8 */
};

/*
 * A kernel symbol that a sample's kernel callchain hit, from /proc/kallsyms
 * at record time, written once per symbol before the first sample that
 * needs it: the stream can be symbolized on another machine.
 */
struct sp_ksym_rec {
	struct sp_rec_hdr hdr;
	uint64_t start;
	uint64_t size;		/* 0: unknown, up to the next symbol */
	char name[];		/* "schedule" or "nvme_irq [nvme]", NUL-terminated */
};

#define SP_PERFMAP_RESET 0x1	/* the file was rewritten: forget earlier text */

/*
 * Text of /tmp/perf-PID.map as the recorder read it: whole lines, appended
 * to what earlier PERFMAP records of the process gave.  Written before the
 * samples that may need it, so the file can be gone when the stream is read.
 */
struct sp_perfmap_rec {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint32_t pid;
	uint32_t flags;		/* SP_PERFMAP_* */
	uint64_t len;
	char text[];		/* len bytes of "START SIZE name\n" lines */
};

#define SP_SWITCH_OUT		0x1	/* switched out; else switched in */
#define SP_SWITCH_PREEMPT	0x2	/* out while still runnable */

/*
 * A thread left a CPU (SP_SWITCH_OUT) or came back to one: the kernel's
 * PERF_RECORD_SWITCH.  The time between a switch-out and the thread's
 * next switch-in is time off the CPU; sp-unwind turns it into weights.
 */
struct sp_switch_rec {
	struct sp_rec_hdr hdr;
	uint64_t time;
	uint32_t pid, tid;
	uint32_t cpu;
	uint32_t flags;		/* SP_SWITCH_* */
};

_Static_assert(sizeof(struct sp_event_info) == 72, "event info layout");
_Static_assert(sizeof(struct sp_mmap_rec) == 112, "mmap layout");
_Static_assert(sizeof(struct sp_comm_rec) == 48, "comm layout");
_Static_assert(sizeof(struct sp_task_rec) == 40, "task layout");
_Static_assert(sizeof(struct sp_lost_rec) == 32, "lost layout");
_Static_assert(sizeof(struct sp_throttle_rec) == 32, "throttle layout");
_Static_assert(sizeof(struct sp_image_rec) == 40, "image layout");
_Static_assert(sizeof(struct sp_ksym_rec) == 24, "ksym layout");
_Static_assert(sizeof(struct sp_perfmap_rec) == 32, "perfmap layout");
_Static_assert(sizeof(struct sp_switch_rec) == 32, "switch layout");

/*
 * Check the payload of a record of a type listed above (MMAP to IMAGE, KSYM,
 * PERFMAP) or of a PYCODE (python.h): its
 * size against its fixed part and its variable part (the filename is
 * NUL-terminated inside the record, the image fits).  Returns NULL when it
 * is sound, otherwise a static description of what is wrong.
 */
const char *sp_rec_check_common(const struct sp_rec_hdr *rec);

#endif
