/* SPDX-License-Identifier: MIT */
/*
 * unwind.h: DWARF CFI unwinding of raw samples with libunwind's remote API.
 *
 * Each process gets one libunwind address space whose accessors read the
 * sample's registers and stack copy, and everything else (code, unwind
 * tables) from the ELF files behind its mappings, through the elf cache.
 * Where no CFI covers an address (JIT code) libunwind is told so with
 * -UNW_ENOINFO, which makes it step by frame pointer.
 */
#ifndef SP_UNWIND_H
#define SP_UNWIND_H

#include <stdint.h>
#include "elf/procs.h"
#include "format/raw.h"
#include "format/unwound.h"

#define SP_UNWIND_MAX_FRAMES 512

struct sp_unwinder;

/*
 * Returns a new unwinder of the samples of a stream with header h; NULL
 * when out of memory.  What it keeps of a process (libunwind's address
 * space, its jitdump) is in the process's SP_PROC_UNWINDER slot and goes
 * with it.
 */
struct sp_unwinder *sp_unwinder_new(const struct sp_raw_header *h);
void sp_unwinder_free(struct sp_unwinder *u);

struct sp_frames {
	unsigned nr_user;
	enum sp_unw_end end;
	uint8_t stack_flags;			/* SP_STACK_* */
	uint64_t ips[SP_UNWIND_MAX_FRAMES];	/* leaf first */
	uint8_t flags[SP_UNWIND_MAX_FRAMES];	/* SP_FRAME_* */
};

/*
 * Unwind the user stack of a sample of proc (the process of its pid, with
 * the mappings of its records so far) into out.  Stack words beyond the copy
 * come from v->tail when the sample has one; a stack that needed them and
 * then completed gets SP_STACK_SPLICED in out->stack_flags.  Returns 0; how
 * far it got is in out->end.  Returns -ENOMEM only when out of memory.
 */
int sp_unwind_sample(struct sp_unwinder *u, struct sp_proc *proc,
		     const struct sp_raw_sample_view *v, struct sp_frames *out);

/*
 * Whether a sample may finish with the frames of its thread's last one
 * above a restart from the same registers (memo.h): on unless turned off,
 * which changes nothing but the time taken (the tests compare both).
 */
void sp_unwinder_set_memo(struct sp_unwinder *u, int on);

/* Samples finished so, so far. */
uint64_t sp_unwinder_memo_hits(const struct sp_unwinder *u);

#endif
