/* SPDX-License-Identifier: MIT */
/*
 * frame.h: what a symbolized frame is: its kind, where its name came from,
 * its flags.  The vocabulary of the symbolized stream (symtext.h writes the
 * names below), of the symbolizer's sources, and of the public API's
 * struct sp_perf_frame.
 */
#ifndef SP_FRAME_H
#define SP_FRAME_H

#include <stdint.h>

/* What a frame is; the text names are "native", "kernel", ... */
enum sp_frame_kind {
	SP_FK_NATIVE = 0,	/* machine code of a mapped file or image */
	SP_FK_KERNEL,
	SP_FK_JIT,		/* anonymous executable memory */
	SP_FK_UNKNOWN,		/* in no mapping at all */
	SP_FK_INLINE,		/* a function inlined at this frame's address */
	SP_FK_INTERP,		/* an interpreter's glue between its own frames */
	SP_FK_SYNTHETIC,	/* not code: where a cut stack ends ("[truncated]") */
	SP_FK_INTERPRETED,	/* a function the interpreter runs (Python) */
	SP_FK_MAX
};

/* Where the function name came from: "symtab", "dynsym", ... "none". */
enum sp_frame_origin {
	SP_FO_NONE = 0,
	SP_FO_SYMTAB,
	SP_FO_DYNSYM,
	SP_FO_PERFMAP,
	SP_FO_VDSO,
	SP_FO_KALLSYMS,
	SP_FO_DEBUGLINK,	/* a debug file named by .gnu_debuglink */
	SP_FO_BUILDID,		/* a debug file found by build-id */
	SP_FO_MINIDEBUG,	/* .gnu_debugdata ("minidebuginfo") */
	SP_FO_JITDUMP,		/* a jit-PID.dump file */
	SP_FO_GOPCLNTAB,	/* Go's function table (.gopclntab) */
	SP_FO_PYCODE,		/* a Python code object the recorder read */
	SP_FO_MAX
};

/* Frame flags */
#define SP_SYMF_HIDDEN	0x1	/* glue that sp-fold leaves out ("hidden") */
#define SP_SYMF_NO_BUILDID 0x2	/* no file with the recorded build-id: the
				   frame is "[unknown build-id HEX]"
				   ("no-build-id"; "stale" in streams of
				   stackpulse 0.1, read as the same) */
#define SP_SYMF_NAME_ONLY 0x4	/* start-up glue named by its symbol alone,
				   no DWARF read (SP_SYM_GLUE_NAME_ONLY);
				   not written in streams */

/* One resolved frame.  NULL strings and line 0 are written as "-". */
struct sp_frame {
	uint64_t addr;		/* the address as unwound (a return address) */
	const char *function;	/* never NULL when written */
	const char *module;	/* mapping path, "[vdso]", "[kernel]", "[anon]" */
	const char *file;	/* source file, from DWARF or jitdump */
	uint32_t line;		/* source line, 0 unknown */
	const char *symbol;	/* the name as the file has it (mangled),
				   NULL when it is function's or unknown */
	uint32_t decl_line;	/* the function's first line, 0 unknown */
	uint8_t kind;		/* enum sp_frame_kind */
	uint8_t origin;		/* enum sp_frame_origin */
	uint16_t flags;		/* SP_SYMF_* */
};

/* Text names of kinds and origins ("native", "symtab", ...); "?" out of range. */
const char *sp_frame_kind_name(unsigned kind);
const char *sp_frame_origin_name(unsigned origin);

#endif
