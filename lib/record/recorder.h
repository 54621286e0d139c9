/* SPDX-License-Identifier: MIT */
/*
 * recorder.h: the inside of struct sp_recorder, shared by the files of
 * lib/record/ and by nothing else (record.h is what callers see).
 *
 * A recording has nine concerns, one file each, and the recorder is one
 * part per concern, owned by its file; a part is touched from outside its
 * file only through the rec_ functions below:
 *
 *	events.c	perf events (one per thread and CPU, or one per CPU for
 *			the whole host), the per-CPU ring buffers, draining
 *			them
 *	convert.c	kernel records turned into raw-stream records
 *	merge.c		the queue that writes the records of all CPUs in time
 *			order
 *	attach.c	the target processes, pausing them while attaching
 *	host.c		the whole host instead: which of its threads are
 *			written, and what /proc says of them at the start
 *	synth.c		what /proc says existed before the recording began
 *	capture.c	what a later reader could not find any more: kernel
 *			symbols, perf map text, [vdso] images
 *	stacktail.c	the rest of stacks deeper than their copy, read from
 *			the live process (stack tails)
 *	keep.c		copies of mapped binaries that will not be at their
 *			paths later, in the build-id cache
 *
 * record.c holds the rest: the public functions that run a recording in
 * that order, and what every part reports to (the threads seen, the
 * counts of the summary).
 */
#ifndef SP_RECORDER_H
#define SP_RECORDER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

#include "base/err.h"
#include "base/hashtab.h"
#include "base/idset.h"
#include "format/raw.h"
#include "format/tail.h"
#include "os/kallsyms.h"
#include "os/perf.h"
#include "record.h"

/* events.c ---------------------------------------------------------------- */

struct rec_event {
	int fd;			/* -1 once closed */
	uint32_t buf;		/* index of its CPU's buffer */
	int hup;
};

struct rec_cpubuf {
	int cpu;
	unsigned pages;
	struct sp_ring *ring;
	size_t owner;		/* index into events of the one mapped */
	size_t polled;		/* index into events of the polled one */
	uint64_t lost;		/* events the kernel dropped here */
};

/* A thread we opened events for. */
struct rec_thread {
	pid_t pid, tid;
	size_t first, n;	/* its events: events[first .. first + n) */
	int exited;		/* an EXIT record came: close when hung up */
};

struct rec_events {
	struct perf_event_attr attr;
	unsigned nregs;
	int kernel_decided;
	long page;
	unsigned min_pages;	/* smallest buffer holding two samples */
	struct rec_cpubuf *bufs;
	unsigned nbufs;
	struct pollfd *pfd;	/* one per buffer, then the stream's reader */
	struct rec_event *events;
	size_t nevents, events_cap;
	struct rec_thread *attached;
	size_t nattached, attached_cap;
	size_t nexited;		/* attached threads with exited set */
	unsigned draining;	/* the buffer rec_collect() reads now */
	int disabled;
	/* off-CPU (offcpu.c) */
	struct perf_event_attr swattr;	/* samples at each switch-out */
	int sw_on;		/* swattr is opened beside attr */
	int sw_main;		/* attr itself samples switch-outs (ONLY) */
	unsigned idlen;		/* 8 with PERF_SAMPLE_IDENTIFIER, else 0 */
	struct sp_u64map sw_ids;	/* ids of the swattr events */
	char sw_why[SP_ERR_MAX];	/* why not, when off-CPU asked */
	uint64_t switches, offcpu, offcpu_short;
};

/* Check the options and fill the event attributes.  0 or -errno. */
int rec_events_setup(struct sp_recorder *r);

/* offcpu.c ---------------------------------------------------------------- */

/*
 * With o->off_cpu, make attr record switches (and, for ONLY, be the
 * switch-out sampler, or a dummy when that is not permitted) and fill
 * swattr, after a trial open that decides whether the kernel permits
 * samples at switch-out.  0 or -errno.
 */
int rec_offcpu_setup(struct sp_recorder *r);

/* Open the switch-out sampler of tid on buffer b after its main event. */
int rec_offcpu_open(struct sp_recorder *r, pid_t tid, unsigned b, int main_fd);

/* Whether a sample with this PERF_SAMPLE_IDENTIFIER is a switch-out's. */
int rec_offcpu_is_switch(const struct sp_recorder *r, uint64_t id);

/* A PERF_RECORD_SWITCH or SWITCH_CPU_WIDE, queued.  0 or -errno. */
int rec_offcpu_convert(struct sp_recorder *r, const struct perf_event_header *h,
		       uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu);

/*
 * Before writing the queue (sorted, n entries) up to horizon: mark the
 * OFFCPU samples whose thread is back on a CPU within o->off_cpu_min as
 * not to be written (drop[i] = 1).  0 or -ENOMEM.
 */
int rec_offcpu_short(struct sp_recorder *r, uint8_t *drop, uint64_t horizon);

/* How long records wait in the queue: long enough to see a wait end. */
uint64_t rec_offcpu_horizon(const struct sp_recorder *r, uint64_t horizon);

/* One buffer per online CPU, not mapped yet.  0 or -errno. */
int rec_events_cpus(struct sp_recorder *r);

/*
 * Open the events of one thread on every CPU.  Returns 1 when opened, 0
 * when the thread has gone, or -errno.
 */
int rec_open_thread(struct sp_recorder *r, pid_t pid, pid_t tid);

/*
 * Open one event per CPU for every task, or for those of the host part's
 * cgroup, disabled.  0 or -errno.
 */
int rec_open_cpus(struct sp_recorder *r);

/* Refuse what RLIMIT_NOFILE cannot hold, before pausing anything. */
int rec_check_fd_budget(struct sp_recorder *r);

int rec_enable_all(struct sp_recorder *r);
int rec_disable_all(struct sp_recorder *r);

/* Point the poll slots at the buffers, once attached. */
void rec_poll_ready(struct sp_recorder *r);

/* Block until a buffer is readable: as sp_recorder_wait(). */
int rec_poll(struct sp_recorder *r, int timeout_ms);

/* Move everything the buffers hold through rec_convert().  0 or -errno. */
int rec_collect(struct sp_recorder *r);

/* An attached thread exited: its events close once they hang up. */
void rec_thread_exited(struct sp_recorder *r, pid_t tid);

/* Close the events of exited attached threads that have hung up. */
void rec_release_exited(struct sp_recorder *r);

/* Event descriptors open now. */
size_t rec_open_fds(const struct sp_recorder *r);

void rec_events_release(struct rec_events *ev);

/* convert.c --------------------------------------------------------------- */

/*
 * Turn one kernel record into raw-stream records in the queue.  A record
 * that does not parse is counted (bad) and skipped.  0 or -ENOMEM.
 */
int rec_convert(struct sp_recorder *r, const struct perf_event_header *h);

/* merge.c ----------------------------------------------------------------- */

struct rec_queued {
	uint64_t time, seq;
	size_t off;
};

/* Converted records waiting to be written in time order. */
struct rec_queue {
	uint8_t *buf;
	size_t len, cap;
	struct rec_queued *v;
	size_t n, vcap;
};

struct rec_merge {
	struct rec_queue q, spare;
	uint64_t seq;		/* arrival order, for equal times */
	uint64_t last_written;	/* time of the last record written */
	uint64_t late;		/* records older than one already written */
};

/*
 * Room in the queue for a record of size bytes (a multiple of 8) stamped
 * time; its last 8 bytes are zeroed so padding needs no care.  NULL when
 * out of memory.  Valid until the next call.
 */
void *rec_enqueue(struct sp_recorder *r, uint64_t time, size_t size);

/*
 * Write the queued records stamped at most horizon, in time order, each
 * sample after the KSYM records it needs.  0 or -errno of the write.
 */
int rec_write_until(struct sp_recorder *r, uint64_t horizon);

void rec_merge_release(struct rec_merge *m);

/* attach.c ---------------------------------------------------------------- */

/* A thread paused for SP_RECORD_ATTACH_STOP. */
struct rec_tracee {
	pid_t pid, tid;
	int stopped;
	int sig;		/* a signal it was about to take: given back */
};

struct rec_targets {
	pid_t *pids;		/* thread group ids */
	size_t n, cap;
	size_t given;		/* the first ones: asked for, not found */
	struct rec_tracee *tracees;
	size_t ntracees, tracees_cap;
	uint64_t pause_ns;	/* how long SP_RECORD_ATTACH_STOP paused them */
};

/* Add a process to sample, once.  0 or -ENOMEM. */
int rec_add_target(struct sp_recorder *r, pid_t tgid);

/* Seize and interrupt every thread of every target.  0 or -errno. */
int rec_pause_all(struct sp_recorder *r);

/* Let every paused thread go, with the signal it was about to take. */
void rec_resume_all(struct sp_recorder *r);

/* Open the events of every thread of every target.  0 or -errno. */
int rec_open_targets(struct sp_recorder *r);

/* Open those of threads created meanwhile, until none is new. */
int rec_rescan(struct sp_recorder *r);

/* Whether one of the targets still runs. */
int rec_targets_alive(const struct sp_recorder *r);

void rec_targets_release(struct rec_targets *tg);

/* synth.c ----------------------------------------------------------------- */

/* Build ids by file, so each file is read once. */
struct rec_bid {
	uint32_t maj, min;
	uint64_t ino;
	int len;		/* 0: none, < 0: unreadable */
	uint8_t id[20];
};

struct rec_synth {
	struct rec_bid *bids;
	size_t n, cap;
	struct sp_u64map index;	/* hash of device and inode -> bids[] */
};

/* Write the raw stream header.  0 or -errno. */
int rec_write_header(struct sp_recorder *r);

/*
 * Write what exists already: the names and parents of the attached
 * threads, the executable mappings of the targets with their build ids,
 * their [vdso] images.  0 or -errno.
 */
int rec_write_existing(struct sp_recorder *r);

/*
 * Write thread tid of process pid as found at the start: a FORK from ppid
 * (0: unknown) and its name, comm (NULL: none known).  0 or -errno.
 */
int rec_synth_thread(struct sp_recorder *r, pid_t pid, pid_t tid, pid_t ppid,
		     const char *comm);

/* Write the name of thread tid of pid as found at the start.  0 or -errno. */
int rec_synth_comm(struct sp_recorder *r, pid_t pid, pid_t tid,
		   const char *comm);

/*
 * Write the executable mappings of process pid with their build ids, and
 * its [vdso] image.  0, or -errno of a write (a process that has gone is
 * no error).
 */
int rec_synth_maps(struct sp_recorder *r, pid_t pid);

void rec_synth_release(struct rec_synth *s);

/* host.c ------------------------------------------------------------------ */

struct rec_host {
	int on;			/* SP_RECORD_ATTACH_HOST */
	int cgroup_fd;		/* the cgroup's directory; -1: every task */
	pid_t self;		/* the recorder; 0: its pipeline is sampled */
	struct sp_u64map pipes;	/* the pipeline's pipes and FIFOs (host.c) */
	char (*comms)[16];	/* the names asked for; none: every thread */
	size_t ncomms;
	pid_t *pick_pids, *pick_tids;	/* -p and --tid, ascending */
	size_t npick_pids, npick_tids;
	int picking;		/* either is given: only what they name */
	uint64_t processes;	/* found in /proc at the start */
	uint64_t filtered;	/* samples not written */
};

/*
 * Check the options: names, cgroup, the processes (pids, n of them: -p)
 * and threads (--tid) to keep.  0 or -errno.
 */
int rec_host_setup(struct sp_recorder *r, const pid_t *pids, size_t n);

/*
 * Walk /proc once the events are enabled: mark the threads of the
 * recorder's pipeline and those with a name asked for, follow every perf
 * map, write every thread and mapping (rec_synth_thread(),
 * rec_synth_maps()).  0 or -errno.
 */
int rec_host_existing(struct sp_recorder *r);

/*
 * Whether thread tid is known to be of the recorder's pipeline, whose
 * samples are dropped as they are read.  (Whether the others' samples
 * are written is decided by rec_host_write(), in time order: a thread's
 * FORK or COMM may be in a ring read after the one that holds its sample.)
 */
int rec_host_own(struct sp_recorder *r, uint32_t tid);

/*
 * A record about to be written, in time order: a FORK or COMM updates
 * the flags of its thread (a new thread takes its creator's, an exec or a
 * rename decides its name anew); a SAMPLE or TAIL is written only if its
 * thread is wanted.  Returns 1 to write it, 0 not to, or -ENOMEM.
 */
int rec_host_write(struct sp_recorder *r, const struct sp_rec_hdr *h);


void rec_host_release(struct rec_host *h);

/* capture.c --------------------------------------------------------------- */

/* What was read of /tmp/perf-PID.map for one process. */
struct rec_pmap {
	pid_t pid;
	uid_t uid;
	int seen;		/* the file existed at the last look */
	dev_t dev;
	ino_t ino;
	off_t off;		/* bytes of whole lines already written */
	uint64_t head;		/* sp_hash_bytes() of the first head_len */
	size_t head_len;	/* bytes of those off, at most PMAP_HEAD */
	int written;		/* a PERFMAP of this process is out */
	off_t size;
	struct timespec mtime;
	int exited;		/* read once more, then forget */
	int placed;		/* root and name_pid are known */
	char root[32];		/* "/proc/PID/root" when its mount namespace
				   or root differs from ours, else "" */
	uint32_t name_pid;	/* the pid in its file name: its own pid
				   namespace's */
};

struct rec_capture {
	struct sp_ksyms *ks;	/* NULL: no kernel callchains */
	uint64_t *ks_written;	/* bit i: the KSYM of symbol i is out */
	uint64_t nksyms;	/* KSYM records written */
	struct rec_pmap *pmaps;
	size_t npmaps, pmaps_cap;
	uint64_t perfmap_bytes;
	uint8_t *vdso;		/* our own [vdso]: the same bytes as theirs */
	size_t vdso_len;
};

/* Load /proc/kallsyms, before any pause: it takes milliseconds. */
int rec_capture_load_ksyms(struct sp_recorder *r);

/* Kernel callchains are not recorded after all: drop the symbols. */
void rec_capture_drop_ksyms(struct sp_recorder *r);

/* Write the KSYM records a sample's kernel frames need, once each. */
int rec_capture_ksyms(struct sp_recorder *r, const struct sp_raw_sample *s);

/* Follow pid's perf map, written by uid; a fork, an exit. */
int rec_pmap_follow(struct sp_recorder *r, pid_t pid, uid_t uid);
/*
 * The followed process pid began at time (CLOCK_MONOTONIC ns): what its
 * perf map file held before then is a dead process's, and is not recorded.
 */
void rec_pmap_born(struct sp_recorder *r, pid_t pid, uint64_t time);

/* Follow the perf map of pid, forked by ppid at time (as rec_pmap_born). */
int rec_pmap_fork(struct sp_recorder *r, pid_t pid, pid_t ppid,
		  uint64_t time);
void rec_pmap_exit(struct sp_recorder *r, pid_t pid);

/* pid exec'd: it may run in another namespace or root than before. */
void rec_pmap_exec(struct sp_recorder *r, pid_t pid);

/* Write what the targets appended to their perf maps.  0 or -errno. */
int rec_perfmap_pass(struct sp_recorder *r);

/* Keep a copy of our own [vdso], which is every 64-bit process's. */
void rec_copy_own_vdso(struct sp_recorder *r);

/*
 * Queue the IMAGE record of a [vdso] that process pid mapped at start
 * (after an exec): its bytes exist on no disk.  0 or -ENOMEM.
 */
int rec_capture_vdso(struct sp_recorder *r, uint32_t pid, uint64_t start,
		     uint64_t len, uint64_t time);

void rec_capture_release(struct rec_capture *c);

/* stacktail.c ------------------------------------------------------------- */

/* Stack tails: the rest of stacks deeper than their copy (format/tail.h). */
struct rec_tail {
	uint32_t max;		/* bytes read beyond a copy at most; 0: off */
	int sp_index;		/* of SP in a sample's registers, or -1 */
	struct sp_u64map procs;	/* pid -> its mappings, read from /proc */
	uint64_t pass;		/* drain passes, to read maps once a pass */
	struct sp_tails *tails;	/* per thread, as the stream has them */
	uint8_t *buf;		/* what process_vm_readv(2) read */
	size_t cap;
	struct iovec *local, *remote;	/* its pieces */
	uint64_t deep;		/* full copies of stacks that go on */
	uint64_t captured;	/* of them, with a tail */
	uint64_t changed;	/* not kept: the bytes at the seam changed */
	uint64_t unread;	/* not kept: unreadable, or no return address
				   in the overlap */
	uint64_t denied;	/* of unread: the kernel would not let us */
	char denied_why[512];	/* sp_perm_explain() of the first denial */
	uint64_t bytes;		/* of the TAIL records written */
};

/* Check the option and get ready, after rec_events_setup().  0 or -errno. */
int rec_tail_setup(struct sp_recorder *r);

/* A drain pass begins: a process's maps may be read again once in it. */
void rec_tail_pass(struct sp_recorder *r);

/*
 * A sample of pid/tid stamped time has a full copy of len bytes of stack
 * (the kernel copied all it was asked for), regs its user registers:
 * when its stack goes on above the copy, queue a TAIL record with the rest,
 * read from the process now, if the bytes at the seam are still those of
 * the copy.  Call it before queueing the sample.  0 or -ENOMEM.
 */
int rec_tail_capture(struct sp_recorder *r, uint32_t pid, uint32_t tid,
		     uint64_t time, const uint8_t *regs, const uint8_t *stack,
		     uint32_t len);

/*
 * A record is about to be written, in stream order: a TAIL shrinks to what
 * differs from its thread's previous tail (in place); an EXIT forgets the
 * thread's tail.
 */
void rec_tail_write(struct sp_recorder *r, struct sp_rec_hdr *h);

void rec_tail_release(struct rec_tail *t);

/* pyframes.c ---------------------------------------------------------------- */

struct sp_py_bpf;
struct sp_py_chain;

/* A process found running CPython. */
struct rec_pyproc {
	uint32_t pid;		/* 0: a free slot */
	struct sp_py_proc *p;
	struct sp_u64map codes;	/* code object address -> index in c */
	struct rec_pycode {
		uint64_t stamp;
		uint32_t id;
	} *c;
	size_t nc, capc;
	uint64_t stacks;	/* PYSTACKs written */
};

/* CPython's frames (format/python.h). */
struct rec_python {
	struct sp_py_bpf *bpf;	/* loaded before the targets run */
	int denied;		/* the kernel refused it: never again, and
				   denied_why says why once a CPython is seen */
	struct sp_u64map out_ids;	/* ids of the BPF-output events */
	uint8_t *out_open;	/* per buffer: its output event is open */
	struct sp_py_chain *pending;	/* per buffer: the last chain read */
	uint8_t *pending_set;
	struct sp_u64map procs;	/* pid -> index in v + 1; 0: no CPython */
	struct sp_u64map looked;	/* pid -> CLOCK_MONOTONIC ns its /proc
					   was read at, for procs */
	struct rec_pyproc *v;
	size_t n, cap;
	uint32_t next_id;	/* code IDs, unique in the stream */
	uint64_t *words;	/* scratch: a PYSTACK's frames */
	size_t nwords;
	uint64_t nprocs, stacks, codes, unreadable, refused;
	char why[SP_ERR_MAX];
	char denied_why[SP_ERR_MAX];
};

/*
 * With o->python on, the samples carry PERF_SAMPLE_IDENTIFIER, so that the
 * BPF program's records are told from them.  Called by
 * rec_events_setup().  0.
 */
int rec_python_setup(struct sp_recorder *r);

/*
 * Before the targets run (before attaching, or for the launched command
 * before its exec): load the BPF program, so that the events the kernel
 * makes for their threads have it when a thread or a child runs CPython
 * later; it does nothing in the samples of other processes.  A refusal is
 * said only if a CPython shows up.  0 or -errno for what stops the
 * recording.
 */
int rec_python_preload(struct sp_recorder *r);

/* Before attaching to pid: preload, and tell the program if pid runs CPython. */
int rec_python_early(struct sp_recorder *r, pid_t pid);

/*
 * A sampling event was opened on buffer b (which it maps if it is the
 * first): run the program in its samples, and open b's output event.
 * 0 or -errno.
 */
int rec_python_event(struct sp_recorder *r, int fd, unsigned b);

/*
 * Process pid mapped the executable file path: if it is CPython's
 * (python*, libpython*), look at the process now, even if it was found to
 * run none before (it has just exec'd it, or loaded it).  0 or -ENOMEM.
 */
int rec_python_mapped(struct sp_recorder *r, uint32_t pid, const char *path);

/*
 * How long the recorder may sleep between passes over its buffers, at
 * most: code objects are read while the samples that name them are fresh.
 */
#define REC_PYTHON_PASS_MS	10

/* Whether id is that of a BPF-output event. */
int rec_python_is_chain(const struct sp_recorder *r, uint64_t id);

/* A BPF-output record on the buffer drained now: keep its chain. */
int rec_python_chain(struct sp_recorder *r, const struct perf_event_header *h);

/*
 * A sample of pid/tid stamped time is about to be queued: queue its
 * PYCODE and PYSTACK records first when the chain before it is its own,
 * and look at a process not seen before.  0 or -ENOMEM.
 */
int rec_python_sample(struct sp_recorder *r, uint32_t pid, uint32_t tid,
		      uint64_t time);

/*
 * Process pid exec'd, or a new process took its pid, at time (CLOCK_MONOTONIC
 * ns; 0: it has gone): what was known of it goes, unless it was read from
 * /proc after that instant and so is already of the new program.  The
 * buffers are drained one after another, not in time order, so a mapping
 * made after an exec may be seen, and its process looked at, before the
 * exec is.
 */
void rec_python_forget(struct sp_recorder *r, uint32_t pid, uint64_t time);

void rec_python_release(struct rec_python *py);

/* keep.c ------------------------------------------------------------------- */

/* A process that maps a watched file: where its map_files entry is. */
struct rec_holder {
	pid_t pid;
	uint64_t start, end;
	uint64_t time;		/* of its MMAP record */
};

/* A file mapped with a build-id, by path and build-id. */
struct rec_kfile {
	const char *path;	/* as recorded, owned by rec_keep.keys */
	uint8_t bid[20];
	uint8_t len;
	uint8_t state;		/* REC_KEEP_* */
	uint8_t checked;	/* the path was looked at once */
	uint32_t maj, min;	/* what /proc said was mapped, ino 0: unknown */
	uint64_t ino;
	struct rec_stat {
		uint64_t dev, ino, size;
		int64_t mtime_ns, ctime_ns;
	} seen;			/* the path when it last had the build-id */
	struct rec_holder *holders;
	size_t nholders, cap;
	const char *why;	/* "deleted", "replaced" */
	uint64_t bytes;		/* stored by this recording */
	int err;		/* why no copy could be kept: -errno */
};

#define REC_KEEP_WATCH	0	/* at its path, as mapped */
#define REC_KEEP_KEPT	1	/* a copy is in the cache */
#define REC_KEEP_FAILED	2	/* needed one, could not take it */

struct rec_keep {
	char *dir;		/* NULL: keep nothing */
	struct sp_strtab keys;	/* "hex path" -> files[] */
	struct rec_kfile *files;
	size_t n, cap;
	size_t unchecked;	/* files added since the last pass */
	uint64_t last_full;	/* CLOCK_MONOTONIC ns of the last full pass */
	uint64_t kept, kept_bytes, failed;
	uint64_t store_bytes, store_files, evicted;
	int trimmed;
	int trim_err;		/* -errno of the trim at the end */
};

/*
 * A mapping of a file with a build-id, from /proc (maj, min, ino known)
 * or from the kernel (0): watch it while pid maps it.  0 or -ENOMEM.
 */
int rec_keep_mapping(struct sp_recorder *r, uint32_t pid, uint64_t start,
		     uint64_t len, uint64_t time, const char *path,
		     const uint8_t *bid, size_t bid_len, uint32_t maj,
		     uint32_t min, uint64_t ino);

/* Process pid exited or exec'd at time: its mappings until then are gone. */
void rec_keep_forget(struct sp_recorder *r, uint32_t pid, uint64_t time);

/* Process pid was forked from ppid: it maps what ppid did.  0 or -ENOMEM. */
int rec_keep_fork(struct sp_recorder *r, uint32_t pid, uint32_t ppid,
		  uint64_t time);

/*
 * Look at the paths of the files added since the last pass and, once a
 * second (every time with all), of every watched file; copy into the cache
 * those deleted or replaced.  0 or -ENOMEM.
 */
int rec_keep_pass(struct sp_recorder *r, int all);

/*
 * The recording has ended: trim the cache to its size, once, if this
 * recording copied anything into it (a failure is kept in trim_err).
 */
void rec_keep_finish(struct sp_recorder *r);

void rec_keep_release(struct rec_keep *k);

/* record.c ---------------------------------------------------------------- */

/* Flags of a thread id in sp_recorder.threads. */
#define REC_ID_ATTACHED	0x1	/* we opened events for it */
#define REC_ID_FORKED	0x2	/* a FORK record announced it: it inherited events */
#define REC_ID_SEEN	0x4	/* in any record: it has events of some kind */
#define REC_ID_OWN	0x8	/* of the recorder's own process group */
#define REC_ID_NAMED	0x10	/* its name is one asked for (host.c) */
#define REC_ID_PICKED	0x20	/* of a process -p names or a thread --tid
				   names, or made by one (host.c) */

struct sp_recorder {
	struct sp_record_opts o;
	char event[32];
	char perfmap_dir[256];
	struct sp_out *out;
	struct sp_err err;

	struct rec_events ev;
	struct rec_merge mg;
	struct rec_targets tg;
	struct rec_host host;
	struct rec_synth syn;
	struct rec_capture cap;
	struct rec_tail tail;
	struct rec_keep keep;
	struct rec_python py;

	/*
	 * Every part reports here what the summary counts: the threads and
	 * processes seen (each ID once, however often it is reused) and the
	 * records written.  The threads that have not exited have their
	 * REC_ID_* flags in threads: the events and attach parts ask which
	 * have events.
	 */
	struct sp_idset seen_threads, seen_procs;
	struct sp_u64map threads;
	uint64_t samples, lost, lost_records, throttles, bad;
	uint64_t attached_threads;
	uint64_t start_time, end_time;
	uint64_t start_realtime;	/* CLOCK_REALTIME ns at start_time */
	int did_attach, attached_ok;
};

/* Add flags to thread tid and note process pid.  0 or -ENOMEM. */
int rec_note_ids(struct sp_recorder *r, uint32_t pid, uint32_t tid,
		 uint8_t flags);

/* Set (on) or clear REC_ID_* flags of thread tid.  0 or -ENOMEM. */
int rec_set_flags(struct sp_recorder *r, uint32_t tid, uint8_t flags, int on);

/* The REC_ID_* flags of thread tid, 0 if never seen or exited. */
uint8_t rec_thread_flags(const struct sp_recorder *r, uint32_t tid);

/*
 * The EXIT of thread tid is written: nothing of it comes after, its flags
 * go.
 */
void rec_thread_gone(struct sp_recorder *r, uint32_t tid);

#endif
