/* SPDX-License-Identifier: MIT */
/*
 * jitdump.h: the jitdump files JITs write for profilers (perf's format:
 * tools/perf/Documentation/jitdump-specification.txt).
 *
 * A JIT that writes jit-PID.dump mmaps it executable so the profiler sees an
 * MMAP record naming it; the symbolizer reads the file afterwards.  It is a
 * header and records: CODE_LOAD (address, size, name, code bytes),
 * CODE_MOVE, DEBUG_INFO (source lines of the next load of an address),
 * UNWINDING_INFO (.eh_frame and .eh_frame_hdr of the next load) and CLOSE.
 * Every length is checked against the file; a record that does not fit ends
 * the parse with what came before it, as a JIT killed mid-write leaves it.
 */
#ifndef SP_JITDUMP_H
#define SP_JITDUMP_H

#include <stddef.h>
#include <stdint.h>

#define SP_JITDUMP_MAGIC 0x4A695444u	/* "JiTD" */

enum sp_jit_rec {
	SP_JIT_CODE_LOAD = 0,
	SP_JIT_CODE_MOVE = 1,
	SP_JIT_CODE_DEBUG_INFO = 2,
	SP_JIT_CODE_CLOSE = 3,
	SP_JIT_CODE_UNWINDING_INFO = 4,
};

struct sp_jit_line {
	uint64_t addr;
	const char *file;
	uint32_t line;
};

/* A piece of code as loaded (or moved); later loads of an address win. */
struct sp_jit_code {
	uint64_t addr, size;
	uint64_t index;		/* code_index: the JIT's id of the code */
	uint32_t seq;		/* order in the file */
	const char *name;
	const struct sp_jit_line *lines;	/* sorted by addr */
	size_t nlines;
	/*
	 * UNWINDING_INFO: unwind_size bytes, .eh_frame then the
	 * eh_frame_hdr_size bytes of .eh_frame_hdr at the end, as perf's
	 * genelf.c reads them and V8 and CPython write them (the
	 * specification's prose says the header comes first; producers do
	 * not).  NULL when the load had none.
	 */
	const uint8_t *unwind;
	uint64_t unwind_size, eh_frame_hdr_size, mapped_size;
};

struct sp_jitdump;

/* Is path named jit-PID.dump, as JITs name the file they mmap?  1 or 0. */
int sp_jitdump_is_path(const char *path);

/*
 * Parse len bytes of a jitdump (copied).  Returns the parsed dump, NULL on
 * a bad header (*err -EINVAL, or -EPROTONOSUPPORT for another byte order)
 * or -ENOMEM.
 */
struct sp_jitdump *sp_jitdump_parse(const void *data, size_t len, int *err);

/* Read and parse the file at path; NULL with *err -errno as above. */
struct sp_jitdump *sp_jitdump_load(const char *path, int *err);
void sp_jitdump_free(struct sp_jitdump *j);

/* The pid of the header, and the number of loads. */
uint32_t sp_jitdump_pid(const struct sp_jitdump *j);
size_t sp_jitdump_count(const struct sp_jitdump *j);

/* Bytes of the file that were parsed (records that fitted). */
size_t sp_jitdump_parsed(const struct sp_jitdump *j);

/* The code holding addr, the last loaded one where they overlap; NULL. */
const struct sp_jit_code *sp_jitdump_find(const struct sp_jitdump *j,
					  uint64_t addr);

/* The source line entry for addr in c (the last at or before it); NULL. */
const struct sp_jit_line *sp_jit_code_line(const struct sp_jit_code *c,
					   uint64_t addr);

#endif
