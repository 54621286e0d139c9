/* SPDX-License-Identifier: MIT */
/*
 * record.h: the recorder: sample processes with perf_event_open(2) and write
 * the raw stream (raw.h).
 *
 * Every thread of each target gets one inherited event per online CPU, so
 * threads and children created later are followed by the kernel; all events
 * of a CPU share one ring buffer.  A command launched suspended (launch.h)
 * needs only one event per CPU: the kernel enables them at its exec and
 * inheritance covers every thread and child after that.  Records of different CPUs reach the output
 * in time order: each consume pass reads every buffer into a queue, sorts it,
 * and writes what is older than a horizon a little before the pass began;
 * the rest waits for the next pass, and finish writes everything.
 *
 * Besides what the kernel sends, the recorder writes what a later reader
 * could not find any more: the [vdso] bytes of every process, the kernel
 * symbols the samples hit (SP_REC_KSYM, from /proc/kallsyms), the build ids
 * of mapped files, and what the targets append to /tmp/perf-PID.map
 * (SP_REC_PERFMAP).  With a build-id cache it also keeps, outside the
 * stream, a copy of each mapped binary that is deleted or replaced on disk
 * while a target maps it, read through /proc/PID/map_files.
 *
 * Use: sp_recorder_new(), sp_recorder_attach(), then loop on
 * sp_recorder_wait() and sp_recorder_consume() until a deadline, a signal
 * or !sp_recorder_active(); then sp_recorder_finish() and
 * sp_recorder_free().  Functions returning int give 0 (or a count) or
 * -errno; sp_recorder_error() then describes the failure in one line.
 */
#ifndef SP_RECORD_H
#define SP_RECORD_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/bidstore.h"

struct sp_out;

#define SP_RECORD_KERNEL_OFF	0
#define SP_RECORD_KERNEL_ON	1
#define SP_RECORD_KERNEL_AUTO	(-1)	/* on when permitted, else off */

#define SP_RECORD_DEFAULT_FREQ	99
#define SP_RECORD_MAX_FREQ	100000
#define SP_RECORD_DEFAULT_STACK	61440
#define SP_RECORD_MAX_STACK	65528
#define SP_RECORD_DEFAULT_TAIL	262144	/* bytes */
#define SP_RECORD_MAX_TAIL	(8u << 20)
#define SP_RECORD_DEFAULT_PAGES	2048	/* 8 MiB per CPU with 4 KiB pages */
#define SP_RECORD_MAX_PAGES	65536
#define SP_RECORD_MAX_OFFCPU_MIN	(1000 * 1000 * 1000ull)	/* 1 s */

/*
 * Time off the CPU: SWITCH records of every switch of a target thread
 * (PERF_RECORD_SWITCH), and where permitted an OFFCPU sample at each
 * switch-out (registers, user stack, kernel stack), from a
 * context-switches event sampled at every switch.  Those need root,
 * CAP_PERFMON or perf_event_paranoid <= 1 (the sample is taken in the
 * kernel); without, only the SWITCH records are written, and the stats
 * say why.
 */
#define SP_RECORD_OFFCPU_OFF	0
#define SP_RECORD_OFFCPU_ON	1	/* with the CPU samples */
#define SP_RECORD_OFFCPU_ONLY	2	/* no CPU samples */

/*
 * CPython's frames: in a process that runs CPython 3.11 to 3.13, a BPF
 * program reads the interpreter's frame chain inside each sample
 * (record/python.h), and PYSTACK and PYCODE records carry it
 * (format/python.h).  Needs root, or CAP_BPF and CAP_PERFMON; without,
 * the stats say why and the samples are written as always.
 */
#define SP_RECORD_PYTHON_AUTO	0	/* where a CPython runs */
#define SP_RECORD_PYTHON_OFF	1

/*
 * How sp_recorder_attach() starts sampling (stackpulse 0.5's AttachMode;
 * the public API's enum sp_attach_mode maps onto it).
 */
enum sp_record_attach {
	/*
	 * StopAttachEnableResume: pause every thread with ptrace(2)
	 * (PTRACE_SEIZE and PTRACE_INTERRUPT, following clones and forks),
	 * open the events, enable them, resume.  No thread is missed or
	 * created unseen; the pause lasts milliseconds and is undone by the
	 * kernel if the recorder dies.  The calling thread becomes the
	 * tracer for that time.
	 */
	SP_RECORD_ATTACH_STOP,
	/* open the events while the targets run; re-scan for new threads */
	SP_RECORD_ATTACH_LIVE,
	/*
	 * AttachWithEnableOnExec: one suspended child of sp_launch_suspended()
	 * that has not exec'd yet; its events count from its exec on.
	 */
	SP_RECORD_ATTACH_ON_EXEC,
	/*
	 * Every process of the host, those that start later included: one
	 * event per CPU for every task (or every task of one cgroup), which
	 * needs CAP_PERFMON or perf_event_paranoid <= 0.  No process is
	 * paused; what runs when recording begins is read from /proc.  pids
	 * is empty.
	 */
	SP_RECORD_ATTACH_HOST,
};

struct sp_record_opts {
	uint64_t frequency;	/* samples per second per thread */
	uint32_t stack_size;	/* user stack bytes per sample: 8..65528, 8 | n */
	uint32_t stack_tail;	/* of a stack deeper than a full copy, read
				   at most this many bytes more from the
				   live process (stack tails); 0: off */
	const char *event;	/* a name of sp_perf_event_lookup() */
	unsigned pages;		/* data pages per CPU buffer, a power of 2;
				   0: the default, halved while locked memory
				   is short */
	int kernel;		/* SP_RECORD_KERNEL_* */
	enum sp_record_attach attach;
	unsigned attach_hold_ms;	/* SP_RECORD_ATTACH_STOP: keep the targets
					   paused this long (for tests) */
	volatile sig_atomic_t *interrupted;	/* NULL, or set by a signal
					   handler: the hold ends early */
	const char *perfmap_dir;	/* where perf-PID.map files are; NULL:
					   "/tmp" (copied) */
	const char *cache_dir;	/* the build-id cache (elf/bidstore.h) to
				   keep copies of deleted and replaced
				   binaries in; NULL: keep none (copied) */
	uint64_t cache_max;	/* bytes the cache may hold after the
				   recording (0: no limit); the oldest
				   copies are evicted */
	/* SP_RECORD_ATTACH_HOST only: */
	const char *cgroup;	/* only the tasks of this cgroup directory
				   (cgroup v2, or v1's perf_event hierarchy);
				   NULL: all (copied) */
	const char *comms;	/* only threads with one of these names,
				   comma-separated; NULL: all (copied) */
	const char *tids;	/* only these threads and those they make,
				   comma-separated (with the processes
				   given to sp_recorder_attach(), which
				   keeps those and their children); NULL:
				   all (copied) */
	int off_cpu;		/* SP_RECORD_OFFCPU_* */
	uint64_t off_cpu_min;	/* ns: a switch-out's stack is written
				   only when the thread stays off the CPU
				   this long (its time is kept either
				   way), 0..SP_RECORD_MAX_OFFCPU_MIN */
	int python;		/* SP_RECORD_PYTHON_* */
	const char *command;	/* SP_RECORD_ATTACH_ON_EXEC: the file the
				   child will exec (its argv[0]), or NULL:
				   a python is known before it runs, so
				   that its threads have the BPF program
				   (not copied: used while attaching) */
	int include_self;	/* sample the recorder and the pipeline it
				   writes into (the readers of its output
				   pipe, theirs, ...) too; by default their
				   samples are not written */
};

#define SP_RECORD_DEFAULT_CACHE_MAX	SP_BIDSTORE_DEFAULT_MAX

/*
 * Fill o with the defaults: 99 Hz, 61440 bytes, tails of 262144 bytes,
 * cpu-clock, 0, AUTO, SP_RECORD_ATTACH_STOP, no hold, /tmp, no build-id
 * cache (a cap of SP_RECORD_DEFAULT_CACHE_MAX when one is given).
 */
void sp_record_opts_init(struct sp_record_opts *o);

/*
 * The highest frequency the kernel accepts now
 * (/proc/sys/kernel/perf_event_max_sample_rate), or -errno.
 */
long long sp_record_max_frequency(void);

struct sp_record_stats {
	uint64_t samples;	/* SAMPLE records written */
	uint64_t lost;		/* events the kernel dropped */
	uint64_t lost_records;
	uint64_t throttles;
	uint64_t threads;	/* distinct threads seen */
	uint64_t processes;	/* distinct processes seen */
	uint64_t duration_ns;
	uint64_t attach_threads;	/* threads paused (STOP) or opened */
	uint64_t attach_pause_ns;	/* how long SP_RECORD_ATTACH_STOP paused them */
	uint64_t events_open;	/* event descriptors open now */
	uint64_t ksyms;		/* KSYM records written */
	uint64_t perfmap_bytes;	/* text of PERFMAP records written */
	uint64_t deep;		/* samples whose full copy did not reach the
				   top of their stack */
	uint64_t tails;		/* of them, finished by a stack tail */
	uint64_t tails_changed;	/* no tail: the stack at the seam had changed */
	uint64_t tails_denied;	/* no tail: reading the process was denied */
	const char *tails_denied_why;	/* why, in words (os/perm.h); lives
					   as long as the recorder */
	uint64_t tail_bytes;	/* bytes of TAIL records written */
	uint64_t kept;		/* binaries copied into the build-id cache */
	uint64_t kept_bytes;
	uint64_t keep_failed;	/* binaries that needed a copy and got none */
	uint64_t cache_files;	/* what the cache holds after the recording */
	uint64_t cache_bytes;
	uint64_t cache_evicted;	/* copies evicted to stay under cache_max */
	int cache_error;	/* -errno: the cache could not be trimmed */
	uint64_t switches;	/* SWITCH records written */
	uint64_t offcpu;	/* OFFCPU samples written */
	uint64_t offcpu_short;	/* OFFCPU samples not written: the thread
				   was back within off_cpu_min */
	int offcpu_stacks;	/* OFFCPU samples were asked of the kernel */
	const char *offcpu_why;	/* if not (with off_cpu on), why, in words;
				   lives as long as the recorder */
	uint64_t py_procs;	/* processes whose Python frames were read */
	uint64_t py_stacks;	/* PYSTACK records written */
	uint64_t py_codes;	/* PYCODE records written */
	uint64_t py_unreadable;	/* frames whose code object was not read */
	uint64_t py_refused;	/* processes with a CPython not read */
	uint64_t py_bpf_runs;	/* the BPF program's runs and time in all */
	uint64_t py_bpf_ns;	/* (ns), while kernel.bpf_stats_enabled */
	const char *py_why;	/* why not: the first refusal, or BPF
				   denied; "" if none; lives as long as the
				   recorder */
	uint64_t filtered;	/* SP_RECORD_ATTACH_HOST: samples not written,
				   of the recorder and its pipeline or of
				   threads whose name is not asked for */
};

/*
 * A mapped binary that will not be at its path later (deleted, or
 * replaced by a file with another build-id) and the copy kept of it.
 */
struct sp_record_kept {
	const char *path;	/* as recorded */
	char build_id[41];	/* hex */
	const char *why;	/* "deleted" or "replaced" */
	int kept;		/* the cache holds a copy */
	uint64_t bytes;		/* written by this recording; 0 when the
				   cache had it already */
	int err;		/* no copy: -errno (-ESRCH: the process had
				   gone, -EILSEQ: the mapped file was
				   changed in place) */
};

struct sp_recorder;

/*
 * A recorder writing to out, which stays the caller's and must outlive it.
 * The options are copied (event too).  Returns NULL with errno set.
 */
struct sp_recorder *sp_recorder_new(const struct sp_record_opts *o,
				    struct sp_out *out);

/* Close every event, unmap, free; NULL is a no-op.  Targets run on. */
void sp_recorder_free(struct sp_recorder *r);

/*
 * Start sampling the n processes in pids (once per recorder) as o->attach
 * says: raise RLIMIT_NOFILE to its hard limit, open the events (STOP: with
 * every thread paused; LIVE: re-scanning the threads
 * until no new one appears), write the stream header and what /proc says
 * already exists (names, threads, executable mappings with build ids, the
 * [vdso] image).  With SP_RECORD_ATTACH_HOST, pids are the processes to
 * keep (their threads and children) among all, none: every one; with
 * SP_RECORD_ATTACH_ON_EXEC, n is 1 and pids[0] a
 * suspended child (launch.h): only the header is written, the kernel
 * reports the rest after the exec; resume the child next.  On every path,
 * errors included, paused targets are resumed before this returns.
 * Returns 0 or -errno: -ESRCH (a process does not exist), -EACCES
 * (not permitted), -EPERM (cannot pause: ptrace refused), -EOPNOTSUPP
 * (event not supported here), -EINVAL (bad option), -EMFILE (more
 * threads than descriptors), or a write error.
 */
int sp_recorder_attach(struct sp_recorder *r, const pid_t *pids, size_t n);

/*
 * Block until a buffer is past its wakeup mark, at most timeout_ms
 * (-1: no limit).  Returns 1 when one is, 0 on timeout, -EINTR when a
 * signal arrived, -EPIPE when the reader of the stream has gone (the
 * output is a pipe or socket whose other end was closed), or another
 * -errno.
 */
int sp_recorder_wait(struct sp_recorder *r, int timeout_ms);

/*
 * Read every buffer, write what the targets appended to their perf maps,
 * then the queued records that are old enough to be in order; close the
 * events of attached threads that have exited.  Returns 0, or -errno of a
 * failed write (-EPIPE: reader gone).
 */
int sp_recorder_consume(struct sp_recorder *r);

/* 1 while one of the target processes still runs, else 0. */
int sp_recorder_active(struct sp_recorder *r);

/* Stop every event; records already buffered stay.  Returns 0 or -errno. */
int sp_recorder_disable(struct sp_recorder *r);

/*
 * Disable if not yet done, write everything still buffered and the summary,
 * flush the output, and fill st (may be NULL).  Returns 0 or -errno of the
 * write; st is filled either way.
 */
int sp_recorder_finish(struct sp_recorder *r, struct sp_record_stats *st);

/* Counts so far. */
void sp_recorder_stats(const struct sp_recorder *r, struct sp_record_stats *st);

/*
 * The i-th binary that needed a copy in the build-id cache, in the order
 * met: fills *k (strings owned by the recorder) and returns 0, or -ENOENT
 * past the last.
 */
int sp_recorder_kept(const struct sp_recorder *r, size_t i,
		     struct sp_record_kept *k);

/*
 * The events the kernel dropped on the i-th CPU buffer: fills *cpu and
 * *lost and returns 0, or -ENOENT past the last.
 */
int sp_recorder_cpu_lost(const struct sp_recorder *r, size_t i, int *cpu,
			 uint64_t *lost);

/* The last error, one line without the program name; "" if none. */
const char *sp_recorder_error(const struct sp_recorder *r);

#endif
