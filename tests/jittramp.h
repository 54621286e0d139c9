/* SPDX-License-Identifier: MIT */
/*
 * jittramp.h: JIT code without CFI between two C frames, as Python 3.12's
 * perf trampolines are (sub $8,%rsp; call *%rcx; add $8,%rsp; ret, copied
 * into anonymous memory), called from code that keeps no frame pointer in
 * %rbp.  No frame pointer leads out of the trampoline: the unwinder finds
 * its caller, jit_call, by the return address on the stack and restarts
 * libunwind there (lib/unwind/unwind.c), and the restarts are what the
 * unwinder's memo works from (lib/unwind/memo.h).  jit_call is written
 * here in assembly, with its CFI, so that %rbp holds no frame pointer
 * whatever the build's flags.  Include this in one file of a program.
 *
 *	if (jit_setup() == 0)
 *		jit_call(fn);	// fn's caller is the trampoline
 */
#ifndef SP_TESTS_JITTRAMP_H
#define SP_TESTS_JITTRAMP_H

#include <string.h>
#include <sys/mman.h>

void (*jit_tramp)(void *, void *, void *, void (*)(void));
void (*jit_target)(void);
void jit_call_asm(void);

__asm__(
	"	.text\n"
	"	.globl jit_call_asm\n"
	"	.type jit_call_asm, @function\n"
	"jit_call_asm:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov $1, %ebp\n"
	"	xor %edi, %edi\n"
	"	xor %esi, %esi\n"
	"	xor %edx, %edx\n"
	"	mov jit_target(%rip), %rcx\n"
	"	call *jit_tramp(%rip)\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size jit_call_asm, .-jit_call_asm\n");

/* Copy the trampoline into anonymous memory: 0, or -1. */
static inline int jit_setup(void)
{
	static const unsigned char code[] = {
		0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08,
		0xc3,
	};
	void *p;

	if (jit_tramp)
		return 0;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC)) {
		munmap(p, 4096);
		return -1;
	}
	jit_tramp = (void (*)(void *, void *, void *, void (*)(void)))p;
	return 0;
}

/* fn(), called through the trampoline from jit_call_asm. */
static inline void jit_call(void (*fn)(void))
{
	jit_target = fn;
	jit_call_asm();
}

#endif
