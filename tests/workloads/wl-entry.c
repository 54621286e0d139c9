/* SPDX-License-Identifier: MIT */
/*
 * wl-entry: a function's first byte in a caller's position, as V8 leaves
 * it when it pushes a builtin's entry as a return address.
 *
 *	main -> run -> via_entry ... hot	all of the time
 *
 * via_entry (assembly) pushes the address of entry_resume, the first byte
 * of a function of its own, and jumps to hot; hot "returns" into
 * entry_resume, which returns to run.  So while hot runs, the frame above
 * it is entry_resume at its very first byte.  Between via_entry's last
 * instruction and entry_resume lies padding that no symbol covers (a
 * gap), which via_entry's CFI still covers with the frame state after hot
 * returned, so that an unwinder looking for the CFI of address - 1 finds
 * run's return address:
 *
 *	hot <- entry_resume (first byte) <- run <- main
 *
 * A symbolizer that names every return address by address - 1 alone names
 * that frame by the gap: nothing.
 *
 * usage: wl-entry [SECONDS]	(default 5); prints nothing
 * Ready (wl_ready) and released (wl_wait_go) right before run.
 */
#include "wl.h"

void via_entry(uint64_t n);

NOINLINE void hot(uint64_t n)
{
	wl_burn(n, 0xe7);
}

__asm__(
	"	.text\n"
	"	.globl via_entry\n"
	"	.type via_entry, @function\n"
	"	.p2align 4\n"
	"via_entry:\n"
	"	.cfi_startproc\n"
	"	leaq entry_resume(%rip), %rax\n"
	"	pushq %rax\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	jmp hot\n"
	/* from here on, as hot returned: the pushed address is gone */
	"	.cfi_adjust_cfa_offset -8\n"
	"	.size via_entry, .-via_entry\n"
	"	.p2align 6, 0xcc\n"	/* the gap: in the CFI, in no symbol */
	"	.cfi_endproc\n"
	"	.globl entry_resume\n"
	"	.type entry_resume, @function\n"
	"entry_resume:\n"
	"	.cfi_startproc\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size entry_resume, .-entry_resume\n");

NOINLINE void run(double seconds)
{
	double end = wl_now() + seconds;

	do {
		via_entry(100000);
		BARRIER();
	} while (wl_now() < end);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_seconds(argc, argv, 1, 5);

	wl_ready();
	wl_wait_go();
	run(seconds);
	return 0;
}
