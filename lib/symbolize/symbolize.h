/* SPDX-License-Identifier: MIT */
/*
 * symbolize.h: turn the addresses of an unwound stack into named frames.
 *
 * User addresses go through the process table (struct sp_procs) to a
 * mapping.  ELF files and the [vdso] image are named by .symtab, else by a
 * separate debug file (build-id directories, .gnu_debuglink), else by
 * MiniDebugInfo, else by .dynsym; their DWARF (the file's own or the debug
 * file's) expands an address into its inline chain, innermost first, with
 * source file and line.  C++ and Rust names are demangled.  JIT code and
 * addresses in no mapping are named by the process's jitdump file (found
 * through its MMAP record) and /tmp/perf-PID.map; kernel addresses by
 * kallsyms.  Each of these is a source (source.h), asked in that order.
 * Every source names a return address by the rule of base/symrule.h: the
 * symbol holding address - 1, else the one holding the address.
 *
 * Stacks come once per (pid, ID), so the work that repeats is per address:
 * results are cached by (ELF file, address), each module's debug files and
 * DWARF are opened once and indexed for binary search, and the kernel, perf
 * map and jitdump tables are loaded once, lazily, when the first frame
 * needs them.  The file behind a mapping is the one with the build-id its
 * MMAP record holds (elf/locate.h: the build-id cache, the path, a build-id
 * debug file), never another build found at its path: when there is none,
 * its frames are "[unknown build-id HEX]" (SP_UNKNOWN_BUILDID_DIGITS digits
 * of the recorded build-id), flagged no-build-id, and its file is listed by
 * sp_symbolizer_missing().
 */
#ifndef SP_SYMBOLIZE_H
#define SP_SYMBOLIZE_H

#include <stdint.h>

#include "elf/procs.h"
#include "format/records.h"
#include "format/symtext.h"
#include "format/unwound.h"

struct sp_symbolizer;

/*
 * Returns a symbolizer over procs (not owned; it and its ELF cache must
 * outlive the symbolizer, and it has no other symbolizer), NULL when out of
 * memory.  When procs forgets a process (elf/procs.h), the symbolizer
 * forgets its stacks, thread names, perf map and jitdumps too.
 */
struct sp_symbolizer *sp_symbolizer_new(struct sp_procs *procs);

/* The process table the symbolizer was made over. */
struct sp_procs *sp_symbolizer_procs(const struct sp_symbolizer *s);

/*
 * Call fn(arg, pid, 0) each time the symbolizer has forgotten process pid,
 * and fn(arg, pid, tid) each time it has forgotten a thread that ended
 * while its process lives on, from within the record applied (NULL: no
 * one).
 */
void sp_symbolizer_on_gone(struct sp_symbolizer *s,
			   void (*fn)(void *arg, uint32_t pid, uint32_t tid),
			   void *arg);
void sp_symbolizer_free(struct sp_symbolizer *s);

/*
 * Read kernel symbols from path instead of /proc/kallsyms, and perf maps
 * from dir instead of /tmp (for tests and for copies taken from another
 * machine).  Call before the first lookup.  Returns 0 or -ENOMEM.
 */
int sp_symbolizer_set_kallsyms(struct sp_symbolizer *s, const char *path);
int sp_symbolizer_set_perf_map_dir(struct sp_symbolizer *s, const char *dir);

#define SP_SYM_NO_LINES		0x1	/* leave FILE and LINE empty */
#define SP_SYM_NO_INLINES	0x2	/* one frame per address */
#define SP_SYM_NO_DEMANGLE	0x4	/* names as in the symbol tables */
#define SP_SYM_NO_SYSTEM_DEBUG	0x8	/* do not search /usr/lib/debug */
/*
 * Start-up glue (sp_symbol_hidden()) named by its symbol alone, without
 * DWARF, lines or inlined frames: for outputs that leave hidden frames
 * out (sp-fold without --hidden), which then need no debug information
 * for them.  Glue sits deep in libc's DWARF (start_thread, clone3,
 * __libc_start_call_main), whose units before it cost most of a short
 * recording's first naming.
 */
#define SP_SYM_GLUE_NAME_ONLY	0x10

/* Set SP_SYM_* flags; call before the first lookup. */
void sp_symbolizer_set_flags(struct sp_symbolizer *s, unsigned flags);

/*
 * Keep what ELF files' addresses are named in the symbol cache under dir
 * (elf/symcache.h: DIR/buildid/ab/cdef.../symbols; NULL: none, the
 * default): an address of a build-id named before is named from it,
 * without the file's symbol tables or DWARF.  Call before the first
 * lookup.  Returns 0 or -ENOMEM.
 */
int sp_symbolizer_set_symbol_cache(struct sp_symbolizer *s, const char *dir);

/*
 * Write the symbol cache of every file with addresses its cache did not
 * name, each merged with what its cache held.  Returns 0, or the first
 * -errno (the others are still written).
 */
int sp_symbolizer_save_symbol_cache(struct sp_symbolizer *s);

/*
 * Search dir for debug files before /usr/lib/debug (see elf/debuginfo.h).
 * Call before the first lookup.  Returns 0 or -ENOMEM.
 */
int sp_symbolizer_add_debug_dir(struct sp_symbolizer *s, const char *dir);

/*
 * A kernel symbol captured at record time (a KSYM record: start, size or 0,
 * "name" or "name [module]"); once one is added, kallsyms files are not
 * read.  Returns 0 or -ENOMEM.
 */
int sp_symbolizer_add_ksym(struct sp_symbolizer *s, uint64_t start,
			   uint64_t size, const char *name);

/*
 * Text of pid's perf map (perf-PID.map lines, len bytes, copied) taken by
 * the recorder at time (a PERFMAP record): used instead of the file, which
 * may be gone.  It adds to what earlier calls gave for pid, unless reset is
 * set (the file was rewritten).  An exec of pid stamped before time does
 * not drop it: the recorder read it from the new program.  Returns 0 or
 * -ENOMEM.
 */
int sp_symbolizer_add_perf_map(struct sp_symbolizer *s, uint32_t pid,
			       uint64_t time, const char *text, size_t len,
			       int reset);

/*
 * A code object of a Python process, from a PYCODE record (checked by the
 * caller with sp_pycode_parse(), format/python.h): the STACK records after
 * it may name it.  Returns 0 or -ENOMEM.
 */
struct sp_pycode_view;
int sp_symbolizer_add_pycode(struct sp_symbolizer *s,
			     const struct sp_pycode_view *v);

/*
 * Apply a record of format/records.h (MMAP, COMM, FORK, EXIT, IMAGE) to the process
 * table and to the thread names.  Returns 1 and fills *comm when the record
 * names a thread: a COMM, or a FORK whose new thread inherits its parent's
 * name (comm->name valid until the next call); 0 when it names none;
 * -ENOMEM.  The record must have passed sp_rec_check_common().
 */
int sp_symbolizer_apply(struct sp_symbolizer *s, const struct sp_rec_hdr *rec,
			struct sp_st_comm *comm);

/*
 * Resolve one user address of pid; precise is set for an exact IP (a
 * leaf), clear for a return address.  Fills *f with the frame of the
 * function that holds the address (the outermost of its inline chain); its
 * strings belong to the symbolizer and live as long as it.  Returns 0 or
 * -ENOMEM.
 */
int sp_symbolize_user(struct sp_symbolizer *s, uint32_t pid, uint64_t addr,
		      int precise, struct sp_frame *f);

/*
 * Resolve one user address into its inline chain, innermost first (kind
 * inline), ending with the function that holds them: at most max frames
 * into f.  Returns the number of frames (at least 1) or -ENOMEM.
 */
int sp_symbolize_user_chain(struct sp_symbolizer *s, uint32_t pid,
			    uint64_t addr, int precise, struct sp_frame *f,
			    unsigned max);

/* Resolve a kernel address, as sp_symbolize_user(). */
int sp_symbolize_kernel(struct sp_symbolizer *s, uint64_t addr, int precise,
			struct sp_frame *f);

/*
 * Resolve every frame of a parsed STACK record, leaf first: its kernel
 * frames, then its user frames each expanded into its inline chain, and
 * mark interpreter glue between Python frames hidden.  *frames points to
 * *n frames owned by the symbolizer, valid until the next call.  Remembers
 * (pid, ID) as defined.  Returns 0 or -ENOMEM.
 */
int sp_symbolize_stack(struct sp_symbolizer *s,
		       const struct sp_unw_stack_view *v,
		       const struct sp_frame **frames, size_t *n);

/* Whether a STACK of (pid, id) was resolved by sp_symbolize_stack(). */
int sp_symbolizer_has_stack(const struct sp_symbolizer *s, uint32_t pid,
			    uint32_t id);

/*
 * How the STACK of (pid, id) ended (enum sp_unw_end), its SP_STACK_* flags
 * in *flags; -1 when it was not resolved.
 */
int sp_symbolizer_stack_end(const struct sp_symbolizer *s, uint32_t pid,
			    uint32_t id, unsigned *flags);

/*
 * A sample of stack (pid, id): counted against the first (leaf-most)
 * missing file its stack has a frame of, if any.  Returns 0, or -ENOENT
 * when no such stack was resolved.
 */
int sp_symbolizer_sample(struct sp_symbolizer *s, uint32_t pid, uint32_t id);

struct sp_symbolize_stats {
	uint64_t stacks;	/* distinct (pid, ID) */
	uint64_t frames;
	uint64_t unresolved;	/* frames with origin none */
	uint64_t no_kallsyms;	/* kernel frames with no kernel symbols */
	uint64_t perf_map_loads;
	uint64_t inline_frames;	/* frames of kind inline */
	uint64_t resolved;	/* distinct (module, address) resolutions */
	uint64_t modules;	/* ELF modules symbolized */
	uint64_t dwarf_opens;	/* modules whose DWARF was opened */
	uint64_t dwarf_units;	/* compilation units indexed */
	uint64_t dwarf_inflated;	/* bytes of compressed DWARF inflated */
	uint64_t dwarf_compressed;	/* of how many, uncompressed */
	uint64_t debug_files;	/* separate debug files and images opened */
	uint64_t jitdump_loads;
	uint64_t no_buildid_frames;	/* frames of files missing with their
					   recorded build-id */
	uint64_t symcache_files;	/* symbol cache files used */
	uint64_t symcache_hits;		/* addresses named from them */
	uint64_t symcache_stale;	/* files of other settings, replaced */
	uint64_t symcache_damaged;	/* files that did not check out */
	uint64_t symcache_written;	/* files written */
	uint64_t symcache_bytes;	/* bytes written */
};

void sp_symbolizer_stats(const struct sp_symbolizer *s,
			 struct sp_symbolize_stats *st);

/* Hex digits of a build-id in the name of a frame of a missing file. */
#define SP_UNKNOWN_BUILDID_DIGITS 12

/*
 * The files mapped with a build-id that no file at hand has with its code
 * (sp_procs_missing() of the table): *n of them, owned by the table.
 */
const struct sp_missing_file *sp_symbolizer_missing(const struct sp_symbolizer *s,
						    size_t *n);

/*
 * For missing file i: the frames of it resolved (named "[unknown build-id
 * HEX]", or from its debug file when debug_only) and the samples of
 * stacks with one (counted by sp_symbolizer_sample()).
 */
void sp_symbolizer_missing_counts(const struct sp_symbolizer *s, size_t i,
				  uint64_t *frames, uint64_t *samples);

/*
 * Whether name is start-up glue that flame graphs leave out (_start, ...);
 * the frames inlined into it are left out with it.
 */
int sp_symbol_hidden(const char *name);

/*
 * Whether name is CPython glue that runs between two Python frames
 * (_PyEval_EvalFrameDefault, PyObject_Vectorcall, ...).
 */
int sp_symbol_python_glue(const char *name);

#endif
