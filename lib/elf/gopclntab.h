/* SPDX-License-Identifier: MIT */
/*
 * gopclntab.h: Go's own table of functions (.gopclntab), which a Go binary
 * keeps when it is stripped of its symbol table and DWARF (-ldflags='-s -w'):
 * the runtime needs it for its tracebacks, its profiler and its garbage
 * collector, so the linker never leaves it out.
 *
 * It maps a pc to its function (name, entry, end, funcID and flags) and,
 * through small run-length tables per function, to the source file and line
 * and to the stack pointer's distance from the function's entry (pcsp),
 * which is what the unwinder steps Go code by.  The layouts of Go 1.16 and
 * later are read (header magics 0xfffffffa: 1.16-1.17, 0xfffffff0:
 * 1.18-1.19, 0xfffffff1: 1.20 and later), for 64-bit little-endian files.
 *
 * The reader works on the file image in place: it checks the header and the
 * bounds of its sub-tables once, and every lookup checks every offset it
 * follows, so a damaged table gives no answer, never a read outside it.
 * Addresses are file vaddrs (as in the ELF program headers).
 */
#ifndef SP_GOPCLNTAB_H
#define SP_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

struct sp_gopclntab;

/* _func.flag bits (runtime/symtab.go funcFlag) */
#define SP_GOFUNC_TOPFRAME	0x1	/* the outermost frame of a stack */
#define SP_GOFUNC_SPWRITE	0x2	/* writes SP in a way pcsp cannot say */
#define SP_GOFUNC_ASM		0x4	/* written in assembly */

/* One function of the table. */
struct sp_gofunc {
	uint64_t entry, end;	/* [entry, end), file vaddrs */
	const char *name;	/* in the table, NUL-terminated; never NULL */
	uint8_t funcid;		/* _func.funcID: its values change between
				   Go versions, so match functions by name */
	uint8_t flag;		/* SP_GOFUNC_* (1.17 and later; 0 before) */
	uint64_t off;		/* where its _func is in the table */
};

/*
 * A table over the len bytes at data, which a file maps at file vaddr
 * vaddr.  relocs, when not NULL, holds nrelocs pairs (offset in the table,
 * value) sorted by offset: the R_X86_64_RELATIVE relocations of a PIE,
 * whose words in the file are not the values the loader writes there.
 * Neither is copied: both must outlive the table.  Returns NULL when the
 * bytes are no table of a known version or do not hold together (*err:
 * -EINVAL), or when out of memory (-ENOMEM).
 */
struct sp_gopclntab *sp_gopclntab_new(const uint8_t *data, size_t len,
				      uint64_t vaddr, const uint64_t *relocs,
				      size_t nrelocs, int *err);

/*
 * The table of an ELF file, whose whole image (size bytes, as mapped by
 * the ELF cache) is at image: its .gopclntab section, or
 * .data.rel.ro.gopclntab in a PIE, and the relocations of it.  NULL when
 * the file has none, or a damaged one.  The result refers to image.
 */
struct sp_gopclntab *sp_gopclntab_from_elf(Elf *elf, const uint8_t *image,
					   size_t size);

void sp_gopclntab_free(struct sp_gopclntab *t);

/* The Go version of the table's layout: 116, 118 or 120. */
unsigned sp_gopclntab_layout(const struct sp_gopclntab *t);

/*
 * The version of Go that built the file ("go1.19.8"), from .go.buildinfo
 * (Go 1.18 and later write it there inline); NULL when unknown.  Owned by
 * the table.
 */
const char *sp_gopclntab_go_version(const struct sp_gopclntab *t);

/* Number of functions in the table. */
uint64_t sp_gopclntab_nfunc(const struct sp_gopclntab *t);

/*
 * The function holding pc (a file vaddr; for a return address, pass
 * address - 1).  Returns 0 and fills *f, -ENOENT when no function of the
 * table holds pc, -EINVAL when the table is damaged there.
 */
int sp_gopclntab_find(const struct sp_gopclntab *t, uint64_t pc,
		      struct sp_gofunc *f);

/*
 * The pcsp value at pc in f: how far SP is below the return address
 * (SP at entry); CFA = SP + value + 8 on x86-64.  Returns 0 and sets *sp,
 * -ENOENT when the table does not cover pc, -EINVAL when it is damaged.
 */
int sp_gopclntab_pcsp(const struct sp_gopclntab *t, const struct sp_gofunc *f,
		      uint64_t pc, int32_t *sp);

/*
 * The source file and line of pc in f.  Returns 0 and sets both (*file
 * points into the table), -ENOENT when the table does not say, -EINVAL
 * when it is damaged.
 */
int sp_gopclntab_line(const struct sp_gopclntab *t, const struct sp_gofunc *f,
		      uint64_t pc, const char **file, uint32_t *line);

/*
 * Whether f ends every stack it is in: flagged TOPFRAME (runtime.goexit,
 * runtime.mstart, runtime.rt0_go, the signal handler's runtime.sigtramp),
 * or, in a Go 1.16 table, which has no flags, one of the first three by
 * name.
 */
int sp_gofunc_is_top(const struct sp_gopclntab *t, const struct sp_gofunc *f);

/*
 * Whether f is the assembly that switches to another stack before it calls
 * on, so that the frames above its callee are not on the stack its callee
 * runs on: runtime.systemstack, runtime.mcall, runtime.morestack (to the
 * thread's g0 stack), runtime.asmcgocall (to g0, for C code),
 * runtime.cgocallback (from g0 back to a goroutine's stack).  Their ABI
 * wrappers, which have the same names but are no assembly, are not.
 */
int sp_gofunc_is_switch(const struct sp_gopclntab *t,
			const struct sp_gofunc *f);

#endif
