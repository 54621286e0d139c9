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

#endif
