/* SPDX-License-Identifier: MIT */
/*
 * plt.h: names for the stubs of a file's procedure linkage table, as perf
 * and objdump give them: "TARGET@plt".
 *
 * A call into another file goes through a stub: in .plt (lazy binding),
 * .plt.sec (the indirect jumps, when IBT splits the PLT in two; .plt.bnd is
 * its MPX ancestor) or .plt.got (functions bound at load time, or whose
 * address is also taken).  No symbol table names the stubs, and left alone
 * their addresses fall to whatever symbol precedes them (_init), or to
 * none.  Each stub jumps through a GOT slot, jmp *disp(%rip), after an
 * endbr64 and a bnd prefix in the IBT layout; the dynamic relocation of
 * that slot names the target: R_X86_64_JUMP_SLOT in .rela.plt,
 * R_X86_64_GLOB_DAT in .rela.dyn.  A lazy .plt entry of the IBT layout holds
 * only endbr64, push N and a jump to PLT0: N is its index in .rela.plt.  An
 * R_X86_64_IRELATIVE slot (an IFUNC of the file itself, objdump's
 * "*ABS*+0x...@plt") is named after the symbol at its resolver's address.
 *
 * A stub that cannot be named so, first of all PLT0 (the lazy binder's
 * trampoline, which perf and objdump label ".plt"), is "[plt]": in the PLT,
 * target unknown.  Only x86-64 is decoded; other machines get no stubs.
 *
 * Origins (sp_sym.origin, SP_SYM_SYNTH set on every stub): a name from a
 * relocation's symbol is SP_FO_DYNSYM, or SP_FO_SYMTAB when the relocations
 * link .symtab (a static executable's IFUNCs); an IFUNC's name has the
 * origin of the table it was found in; "[plt]" is SP_FO_NONE: no symbol's
 * name.
 */
#ifndef SP_PLT_H
#define SP_PLT_H

#include <stddef.h>

#include "symtab.h"

struct sp_elf;

struct sp_plt {
	struct sp_sym *syms;	/* one per stub, by address */
	size_t n;
	char *names;		/* the block of their "TARGET@plt" names */
};

/*
 * Reads the stubs of e into p, which must be zeroed: the code through
 * sp_elf_at(), relocations and their symbols by section headers.  own (may
 * be NULL) is the file's symbol table, of origin own_origin, which names
 * IFUNC targets.  Returns 0 (p->n 0 when e has no PLT or is no x86-64
 * file) or -ENOMEM; either way p is to be released.
 */
int sp_plt_read(struct sp_plt *p, struct sp_elf *e, const struct sp_symtab *own,
		unsigned own_origin);

/* Frees what p holds and zeroes it. */
void sp_plt_release(struct sp_plt *p);

#endif
