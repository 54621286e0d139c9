/* SPDX-License-Identifier: MIT */
/*
 * python.h: CPython's frames in the streams.
 *
 * The recorder reads the interpreter's frame chain inside each sample of a
 * CPython 3.11 to 3.13 (record/python.h) and writes it as a PYSTACK record
 * just before the sample (raw stream only; sp-unwind puts its frames into
 * the sample's STACK).  A frame names its code object by a per-process ID
 * that a PYCODE record defined earlier in the stream: the code object's
 * qualified name, file, first line and location table, read once from the
 * live process.  PYCODE records pass unchanged from the raw stream into
 * the unwound stream and a spool, so that the stream is symbolized
 * offline.  docs/streams.md is the grammar.
 */
#ifndef SP_FORMAT_PYTHON_H
#define SP_FORMAT_PYTHON_H

#include <stddef.h>

#include "records.h"

/* One code object of process pid: what names the frames that run it. */
struct sp_pycode_rec {
	struct sp_rec_hdr hdr;	/* SP_REC_PYCODE */
	uint64_t time;
	uint32_t pid;
	uint32_t id;		/* >= 1, unique within the process */
	uint64_t bytecode;	/* its address in the process: a frame's
				   instruction is at bytecode + offset */
	uint32_t firstlineno;
	uint32_t qualname_len;	/* bytes, without a NUL */
	uint32_t filename_len;
	uint32_t linetable_len;
	uint32_t pad[2];
	/*
	 * char qualname[qualname_len];	"Class.method", UTF-8
	 * char filename[filename_len];
	 * uint8_t linetable[linetable_len];	co_linetable (PEP 626/657)
	 * zero-padded to 8
	 */
};

#define SP_PYCODE_NAME_MAX 65536	/* bytes of a qualname or file name */

/* A frame of a PYSTACK record or of a STACK's Python part. */
#define SP_PYF_ENTRY	0x80000000u	/* the outermost frame of one run of
					   the interpreter's C function */
#define SP_PYF_SHIM	0x40000000u	/* no code: the C stack's entry
					   frame (3.12+), only a boundary */
#define SP_PYF_OFFSET	0x3fffffffu	/* byte offset of the instruction in
					   the code object's bytecode */
#define SP_PYF_NOOFF	SP_PYF_OFFSET	/* offset unknown */

/* The code ID of frame word f (0: the code object could not be read). */
static inline uint32_t sp_pyf_code(uint64_t f)
{
	return (uint32_t)(f >> 32);
}

static inline uint64_t sp_pyf_make(uint32_t code, uint32_t bits)
{
	return (uint64_t)code << 32 | bits;
}

/* PYSTACK and STACK: how the walk of the frame chain ended. */
#define SP_PYS_TRUNC	0x1	/* more frames than the walk's bound */
#define SP_PYS_FAULT	0x2	/* a read failed (a page not present) */

/* The Python frames of the sample that follows (raw stream only). */
struct sp_pystack_rec {
	struct sp_rec_hdr hdr;	/* SP_REC_PYSTACK */
	uint64_t time;		/* that of the sample */
	uint32_t pid, tid;
	uint16_t n;		/* frames */
	uint16_t flags;		/* SP_PYS_* */
	uint32_t pad;
	/* uint64_t frames[n];	innermost first: sp_pyf_make(code, bits) */
};

#define SP_PY_FRAMES_MAX 1024	/* frames a PYSTACK or STACK may carry */

_Static_assert(sizeof(struct sp_pycode_rec) == 56, "pycode layout");
_Static_assert(sizeof(struct sp_pystack_rec) == 32, "pystack layout");

/* A PYCODE record with its parts located. */
struct sp_pycode_view {
	const struct sp_pycode_rec *c;
	const char *qualname;	/* qualname_len bytes, not terminated */
	const char *filename;	/* filename_len bytes, not terminated */
	const uint8_t *linetable;
};

/* Check a PYCODE record and locate its parts; NULL when sound. */
const char *sp_pycode_parse(const struct sp_rec_hdr *rec,
			    struct sp_pycode_view *out);

/* Check a PYSTACK record; NULL when sound.  Its frames follow it. */
const char *sp_pystack_check(const struct sp_rec_hdr *rec);

/*
 * The line of the instruction at byte offset off of a code object's
 * bytecode, from its location table (3.11+, PEP 657's format): 0 when the
 * table says none, -1 when it is damaged or does not reach off.
 */
int sp_py_line(const uint8_t *table, size_t len, uint32_t firstlineno,
	       uint64_t off);

#endif
