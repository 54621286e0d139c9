/* SPDX-License-Identifier: MIT */
/*
 * gostep.h: stepping out of Go code by Go's own table (elf/gopclntab.h).
 *
 * Go writes its call-frame information only into .debug_frame, which a
 * stripped binary (-ldflags=-w) has not and libunwind does not read, and
 * its .eh_frame (in a cgo binary) covers only the C code.  The runtime
 * unwinds itself with pclntab's pcsp table, which says for every pc how
 * far SP is below the return address, and so does this: CFA = SP +
 * pcsp(pc) + 8, the return address is at CFA - 8, the caller's SP is the
 * CFA.  A Go function that keeps a frame pointer saves the caller's BP at
 * CFA - 16 and points BP there (go1.19 obj6.go: after SUBQ $framesize,
 * SP, MOVQ BP, framesize-8(SP) and LEAQ framesize-8(SP), BP; later Go
 * versions PUSHQ BP and MOVQ SP, BP, to the same effect), so BP == CFA -
 * 16 tells that the caller's BP is in that slot; before the save and after
 * the restore BP still is the caller's.  With BP right, libunwind carries
 * on in C code that called into Go.
 *
 * Go stacks end where the runtime's own tracebacks end: at a function the
 * table flags TOPFRAME (runtime.goexit, the bottom of every goroutine;
 * runtime.mstart and runtime.rt0_go, the bottom of a thread's g0 stack;
 * runtime.sigtramp, of the signal stack).  The assembly that switches
 * stacks (runtime.systemstack, mcall, morestack to a thread's g0 stack,
 * asmcgocall and cgocallback between g0 and a goroutine) is where the
 * frames of one stack stop: the goroutine that called it is on another
 * stack that the sample did not copy.  A function flagged SPWRITE writes
 * SP in a way pcsp cannot describe: the step stops there too.
 */
#ifndef SP_GOSTEP_H
#define SP_GOSTEP_H

#include <stdint.h>

#include "elf/gopclntab.h"
#include "elf/procs.h"

/* Go code at a pc: its table and function. */
struct sp_go_code {
	const struct sp_gopclntab *tab;	/* owned by the ELF cache */
	struct sp_gofunc func;
	uint64_t at;		/* the address looked up: the pc, or a return
				   address - 1 */
	uint64_t bias;		/* address - file vaddr of its mapping */
};

/*
 * Whether the frame at pc (precise: the exact IP of a leaf or of an
 * interrupted frame, else a return address) is in a function of the
 * pclntab of the file mapped there.  Returns 1 and fills *code, or 0.
 */
int sp_go_code(const struct sp_proc *proc, uint64_t pc, int precise,
	       struct sp_go_code *code);

/* The registers of a frame, as far as a Go step needs and gives them. */
struct sp_go_regs {
	uint64_t ip, sp, bp;
	int have_bp;
};

/*
 * The sample's stack as the unwinder reads it (its copy, then its tail):
 * read() gives the word at addr and returns 0, or -1 when the sample holds
 * no such word.
 */
struct sp_go_stack {
	int (*read)(void *arg, uint64_t addr, uint64_t *v);
	void *arg;
};

enum sp_go_step {
	SP_GO_STEPPED,		/* *r is the caller's frame */
	SP_GO_TOP,		/* a TOPFRAME function: the stack is whole */
	SP_GO_SWITCH,		/* a stack switch: the rest is elsewhere */
	SP_GO_SPWRITE,		/* SP written beyond what pcsp describes */
	SP_GO_TRUNCATED,	/* the return address is past the stack copy */
	SP_GO_NOINFO,		/* pcsp does not cover the pc */
	SP_GO_ERROR,		/* a damaged table, or a return address in no
				   mapping */
};

/*
 * Step out of the frame of code whose registers are *r (ip, sp, and bp
 * when have_bp), reading stack words through st only.  On SP_GO_STEPPED *r
 * holds the caller's ip, sp and bp; otherwise it is left alone.
 */
enum sp_go_step sp_go_step(const struct sp_proc *proc,
			   const struct sp_go_code *code,
			   const struct sp_go_stack *st, struct sp_go_regs *r);

#endif
