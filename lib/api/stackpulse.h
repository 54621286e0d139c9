/* SPDX-License-Identifier: MIT */
/*
 * stackpulse.h: profile Linux processes from a C program.
 *
 * The C form of stackpulse 0.5's design: a recorder that attaches to a
 * process and writes a spool file (PerfRecorder), a reader that walks the
 * spool's sample stacks (PerfSpoolReader: struct sp_spool of format/spool.h), and
 * a symbolizer that resolves their frames with a cache keyed by (process,
 * stack ID) (PerfSymbolizer).  A suspended launch (SuspendedLaunchedProcess)
 * is in os/launch.h.
 *
 *	struct sp_perf_recorder *r;
 *	sp_perf_recorder_attach(pid, "run.spool", SP_ATTACH_STOP, NULL, &r);
 *	while (!done && sp_perf_recorder_process_is_active(r, pid)) {
 *		sp_perf_recorder_wait(r, 100);
 *		sp_perf_recorder_consume_available(r);
 *	}
 *	sp_perf_recorder_finish(r, &summary);
 *	sp_perf_recorder_free(r);
 *
 * Conventions: structs are opaque; functions returning int give 0 (or a
 * count, or a truth value) or -errno and never print or exit; every object
 * has an error accessor that describes its last failure in one line; what
 * a function returns belongs to the object it came from unless said.
 * Link with `pkg-config --cflags --libs stackpulse`.
 */
#ifndef STACKPULSE_H
#define STACKPULSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/frame.h"
#include "format/spool.h"
#include "os/launch.h"

#define STACKPULSE_VERSION_MAJOR 0
#define STACKPULSE_VERSION_MINOR 1

/* The library's version, "0.1.0". */
const char *sp_version(void);

/* How sp_perf_recorder_attach() starts sampling (0.5's AttachMode). */
enum sp_attach_mode {
	/*
	 * StopAttachEnableResume: pause every thread with ptrace(2), open
	 * the events, enable them, resume.  No thread is missed or created
	 * unseen; the pause lasts milliseconds and is undone by the kernel if
	 * the recorder dies.  The calling thread is the tracer for that time.
	 */
	SP_ATTACH_STOP,
	/* open the events while the targets run; re-scan for new threads */
	SP_ATTACH_LIVE,
	/*
	 * AttachWithEnableOnExec: a child of sp_launch_suspended() that has
	 * not been resumed; its samples count from its exec on.
	 */
	SP_ATTACH_ENABLE_ON_EXEC,
};

/* Kernel callchains, sp_perf_recorder_options.kernel */
#define SP_KERNEL_AUTO	(-1)	/* when permitted (the default) */
#define SP_KERNEL_OFF	0
#define SP_KERNEL_ON	1	/* or fail to attach */

struct sp_perf_recorder_options {
	uint32_t frequency;	/* Hz per thread; 0: 99 */
	uint32_t stack_size;	/* bytes of user stack per sample; 0: 61440 */
	const char *event;	/* NULL: "cpu-clock" */
	unsigned buffer_pages;	/* ring buffer pages per CPU; 0: default */
	int kernel;		/* SP_KERNEL_*; default SP_KERNEL_AUTO */
};

/* Fill o with the defaults. */
void sp_perf_recorder_options_init(struct sp_perf_recorder_options *o);

struct sp_perf_summary {
	uint64_t samples;
	uint64_t lost_events;
	uint64_t stacks;	/* distinct stacks */
	uint64_t threads;
	uint64_t processes;
	uint64_t duration_ns;
};

struct sp_perf_recorder;

/*
 * Attach to pid as mode says (SP_ATTACH_ENABLE_ON_EXEC: pid is a child of
 * sp_launch_suspended() that has not been resumed yet) and start writing
 * the spool file spool_path.  o may be NULL for the defaults.  Sets *rp
 * unless out of memory, also on failure, so that sp_perf_recorder_error()
 * can say what went wrong; the caller frees it.  Returns 0 or -errno
 * (-ESRCH no such process, -EACCES not permitted, -EOPNOTSUPP event not
 * supported, -EINVAL bad option, or the spool file's error).
 */
int sp_perf_recorder_attach(pid_t pid, const char *spool_path,
			    enum sp_attach_mode mode,
			    const struct sp_perf_recorder_options *o,
			    struct sp_perf_recorder **rp);

/*
 * Block until a ring buffer is readable, at most timeout_ms (-1: no
 * limit).  Returns 1 when one is, 0 on timeout, -EINTR on a signal.
 */
int sp_perf_recorder_wait(struct sp_perf_recorder *r, int timeout_ms);

/*
 * Drain the queued records, unwind the samples among them and append them
 * to the spool.  Returns 0 or -errno.
 */
int sp_perf_recorder_consume_available(struct sp_perf_recorder *r);

/* 1 while process pid runs (a zombie has ended), else 0. */
int sp_perf_recorder_process_is_active(struct sp_perf_recorder *r, pid_t pid);

/* Stop sampling; what is buffered stays for finish.  Returns 0 or -errno. */
int sp_perf_recorder_disable(struct sp_perf_recorder *r);

/*
 * Disable, drain, write the summary and close the spool; fill *s (may be
 * NULL).  Returns 0 or -errno (the spool could not be completed).
 */
int sp_perf_recorder_finish(struct sp_perf_recorder *r,
			    struct sp_perf_summary *s);

/* The last error, one line; "" if none. */
const char *sp_perf_recorder_error(const struct sp_perf_recorder *r);

/* Close everything (an unfinished spool stays readable up to its last
 * block); the targets run on.  NULL is a no-op. */
void sp_perf_recorder_free(struct sp_perf_recorder *r);

/* Symbolizing ------------------------------------------------------------ */

/* FrameFlags::HIDDEN_DEFAULT: glue a default view leaves out. */
#define SP_FRAME_HIDDEN_DEFAULT	SP_SYMF_HIDDEN
/*
 * no file with the build-id the recording holds for the mapping (replaced
 * or deleted since, and no copy kept): "[unknown build-id HEX]"
 */
#define SP_FRAME_NO_BUILDID	SP_SYMF_NO_BUILDID
#define SP_FRAME_STALE		SP_FRAME_NO_BUILDID	/* its former name */

struct sp_perf_frame {
	const char *func_name;	/* never NULL: "[unknown]" or "[module]+0x.." */
	const char *module;	/* path, "[vdso]", "[kernel]", "[anon]";
				   NULL in no mapping, and for the synthetic
				   last frame of a cut stack ("[truncated]") */
	const char *file;	/* source file, NULL when unknown */
	uint32_t line;		/* 0 when unknown */
	enum sp_frame_kind kind;	/* native, inline, kernel, JIT, ... */
	enum sp_frame_origin origin;	/* symtab, dynsym, debuglink, ... */
	unsigned flags;		/* SP_FRAME_* */
	uint64_t addr;
};

struct sp_perf_symbolizer;

/*
 * A symbolizer for the spool file at path (PerfSymbolizer::for_spool).  It
 * reads the spool on its own, as far as the stacks asked for, and caches
 * every resolved stack by (pid, stack ID).  Sets *sp unless out of memory,
 * also on failure (see sp_perf_symbolizer_error()); the caller frees it.
 * Returns 0 or the spool's -errno.
 */
int sp_perf_symbolizer_for_spool(const char *path,
				 struct sp_perf_symbolizer **sp);

/*
 * Call fn(arg, frame) for each frame of stack id of pid, leaf first
 * (kernel frames, then user frames with their inline frames), stopping
 * early when fn returns non-zero (which is returned).  Frames and their
 * strings belong to the symbolizer and live as long as it.  Returns 0,
 * -ENOENT when the spool has no such stack, or another -errno.
 */
int sp_perf_symbolizer_for_each_frame(struct sp_perf_symbolizer *s,
				      uint32_t pid, uint32_t stack_id,
				      int (*fn)(void *arg,
						const struct sp_perf_frame *f),
				      void *arg);

/*
 * Names of kinds and origins ("native", "inline", "jit", ...; "symtab",
 * "debuglink", "perf-map", ...): sp_frame_kind_name() and
 * sp_frame_origin_name() of format/frame.h.
 */

/* The last error, one line; "" if none. */
const char *sp_perf_symbolizer_error(const struct sp_perf_symbolizer *s);

/* NULL is a no-op. */
void sp_perf_symbolizer_free(struct sp_perf_symbolizer *s);

#endif
