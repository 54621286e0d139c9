/* SPDX-License-Identifier: MIT */
/*
 * wl-jit.h: the machine code the test JITs copy into executable memory:
 * two x86_64 functions that keep a frame pointer and have no CFI.
 */
#ifndef WL_JIT_H
#define WL_JIT_H

#include <stdint.h>

/* uint64_t jit_hot(uint64_t n): count n down to 0, return 0 */
static const uint8_t jit_hot_code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0x48, 0x89, 0xf8,	/* mov %rdi,%rax */
	0x48, 0xff, 0xc8,	/* 1: dec %rax */
	0x75, 0xfb,		/* jnz 1b */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};

/* uint64_t jit_outer(uint64_t n): return jit_hot(n), not as a tail call */
static const uint8_t jit_outer_code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0xe8, 0, 0, 0, 0,	/* call jit_hot (rel32 at offset 5, patched) */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};

/*
 * uint64_t jit_stub(uint64_t n): a frameless stub in the shape of Python
 * 3.12's perf trampoline (sub $8,%rsp ... add $8,%rsp; ret): no CFI, no
 * frame pointer of its own, a stale word next to its return address.  It
 * spins n times with %rbp zeroed, as the outermost frame of a
 * frame-pointer chain says, so that a frame-pointer step out of it ends
 * the stack there, as if it were complete.
 */
static const uint8_t jit_stub_code[] = {
	0x48, 0x83, 0xec, 0x08,	/* sub $8,%rsp */
	0x49, 0x89, 0xeb,	/* mov %rbp,%r11 */
	0x31, 0xed,		/* xor %ebp,%ebp */
	0x48, 0x89, 0xf8,	/* mov %rdi,%rax */
	0x48, 0xff, 0xc8,	/* 1: dec %rax */
	0x75, 0xfb,		/* jnz 1b */
	0x4c, 0x89, 0xdd,	/* mov %r11,%rbp */
	0x48, 0x83, 0xc4, 0x08,	/* add $8,%rsp */
	0xc3,			/* ret */
};

#endif
