/* SPDX-License-Identifier: MIT */
/*
 * source.h: the one shape of every symbol source, and the inside of struct
 * sp_symbolizer that the sources share.  For files of lib/symbolize/ only.
 *
 * A source answers questions about addresses: for a question (a process,
 * an address, whether it is exact or a return address, the mapping holding
 * it) it first finds the table that covers it (an ELF module with its
 * debug files and DWARF, a process's jitdump or perf map, the kernel's
 * symbols), loading it on first use, or says it has none; then it looks
 * the address up in that table and fills the frames of its inline chain,
 * innermost first, each saying where its name came from (its origin).
 * The symbolizer asks its sources in order and takes the first answer, so
 * a new source (Go's pclntab, Python code objects, debuginfod) is one new
 * file and one line in the list of symbolize.c.
 *
 * Each source keeps its state in its own part of struct sp_symbolizer,
 * touched only by its file.
 */
#ifndef SP_SOURCE_H
#define SP_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hashtab.h"
#include "elf/procs.h"
#include "format/records.h"
#include "symbolize.h"

#define SP_CHAIN_MAX 64		/* frames of one address's inline chain */

/* A question about one address. */
struct sp_symq {
	uint32_t pid;
	uint64_t addr;		/* as unwound */
	int precise;		/* the exact IP of a leaf, else a return address */
	int kernel;		/* a kernel address */
	const struct sp_map *map;	/* the user mapping holding it, or NULL */
	uint64_t vaddr;		/* addr in the mapped file (addr - bias) */
};

struct sp_source {
	const char *name;
	/*
	 * The table of this source that covers q, found or loaded on first
	 * use; NULL when it has none (then *err may say why it could not
	 * look: -ENOMEM).
	 */
	void *(*table)(struct sp_symbolizer *s, const struct sp_symq *q,
		       int *err);
	/*
	 * Name q from table: at most max frames into out, innermost first,
	 * with function, file, line, kind, origin and flags set (addr and
	 * module are the symbolizer's).  Returns how many, 0 when the table
	 * does not know the address, or -errno.
	 */
	int (*lookup)(struct sp_symbolizer *s, void *table,
		      const struct sp_symq *q, struct sp_frame *out,
		      unsigned max);
	/*
	 * The answer for (table, vaddr, precise) never changes: the
	 * symbolizer keeps it and asks once.
	 */
	int cacheable;
};

extern const struct sp_source sp_src_kernel;	/* src-kernel.c */
extern const struct sp_source sp_src_elf;	/* src-elf.c */
extern const struct sp_source sp_src_go;	/* src-go.c */
extern const struct sp_source sp_src_jitdump;	/* src-jitdump.c */
extern const struct sp_source sp_src_perfmap;	/* src-perfmap.c */

/* src-kernel.c: kallsyms, or the KSYM records of the stream */
struct src_kernel {
	char *path;		/* NULL: /proc/kallsyms */
	struct sp_ksyms *ks;	/* NULL until loaded */
	int captured;		/* ks holds KSYM records, never a file */
};

int src_kernel_add_record(struct sp_symbolizer *s, uint64_t start,
			  uint64_t size, const char *name);
void src_kernel_release(struct src_kernel *k);

/* src-elf.c: ELF modules, their debug files and DWARF */
struct src_module;

struct src_elf {
	struct sp_debug_finder *finder;	/* created on first use */
	char **debug_dirs;
	size_t ndebug_dirs, cap_dirs;
	struct sp_u64map index;		/* sp_elf pointer -> modules[] */
	struct src_module **modules;
	size_t nmodules, cap_modules;
	char *cache_dir;		/* of the symbol cache; NULL: none */
};

/*
 * Write the symbol cache of every module that answered an address its
 * cache file did not have (elf/symcache.h).  0, or the first -errno.
 */
int src_elf_save(struct sp_symbolizer *s);

int src_elf_add_debug_dir(struct src_elf *e, const char *dir);
void src_elf_stats(const struct src_elf *e, struct sp_symbolize_stats *st);
void src_elf_release(struct src_elf *e);

/* src-go.c: Go's function table, for Go code no symbol names */
struct sp_gopclntab;

/* Whether the table names q's address: src-elf then leaves it to src-go. */
int src_go_names(const struct sp_gopclntab *t, const struct sp_symq *q);

/*
 * Fill out's file and line from the table when it knows them (not with
 * SP_SYM_NO_LINES).  Returns 0 or -ENOMEM.
 */
int src_go_lines(struct sp_symbolizer *s, const struct sp_gopclntab *t,
		 const struct sp_symq *q, struct sp_frame *out);

/*
 * The name to show for a symbol of a Go file: as sp_sym_display_name(),
 * but without the ABI suffix the linker gives assembly functions that have
 * a wrapper (runtime.goexit.abi0 is runtime.goexit, as Go names it); then
 * *symbol is the name as the file has it.  NULL when out of memory.
 */
const char *src_go_symbol_name(struct sp_symbolizer *s, const char *raw,
			       const char **symbol);

/* src-jitdump.c: the jit-PID.dump files the processes mapped */
struct src_jitdump_ref;

struct src_jitdump {
	struct src_jitdump_ref *refs;
	size_t n, cap;
};

/* An MMAP record of a jit-PID.dump: the process writes one. */
int src_jitdump_note_mmap(struct sp_symbolizer *s, const struct sp_mmap_rec *m);
/* Process pid is gone: drop its dumps. */
void src_jitdump_forget(struct sp_symbolizer *s, uint32_t pid);
void src_jitdump_release(struct src_jitdump *j);

/* src-perfmap.c: /tmp/perf-PID.map, or the PERFMAP records of the stream */
struct src_perfmap_proc;

struct src_perfmap {
	char *dir;			/* NULL: /tmp */
	struct sp_u64map index;		/* pid -> procs[] */
	struct src_perfmap_proc *procs;
	size_t n, cap;
};

int src_perfmap_add_record(struct sp_symbolizer *s, uint32_t pid,
			   uint64_t time, const char *text, size_t len,
			   int reset);
/* Process pid is gone: drop its map. */
void src_perfmap_forget(struct sp_symbolizer *s, uint32_t pid);
/*
 * Process pid ran a new program at time: its JIT writes a new map (what
 * the recorder read after time is that map already).
 */
void src_perfmap_exec(struct sp_symbolizer *s, uint32_t pid, uint64_t time);
void src_perfmap_release(struct src_perfmap *p);

/* python.c: CPython's frames from PYCODE records and STACKs' Python part */
struct sp_pycode_view;
struct sp_unw_stack_view;
int sym_python_add_code(struct sp_symbolizer *s,
			const struct sp_pycode_view *v);
/*
 * Put the stack's Python frames in place of the interpreter's C frames
 * among s->out[first..*n): *n becomes the new count.  0 or -ENOMEM.
 */
int sym_python_merge(struct sp_symbolizer *s,
		     const struct sp_unw_stack_view *v, size_t first,
		     size_t *n);

/* missing.c: mappings whose file is not at hand (elf/procs.h) */
struct sym_missing {
	struct sym_missing_counts {
		uint64_t frames, samples;
	} *counts;			/* by sp_procs_missing() index */
	size_t cap;
	uint32_t stack_file;		/* index + 1 of the first file met in
					   the stack being symbolized, 0 */
};

/*
 * A frame of m, a mapping of a file missing with its code (m->missing):
 * count it against the file, and the stack being symbolized with it.
 * 0 or -ENOMEM.
 */
int sym_missing_note(struct sp_symbolizer *s, const struct sp_map *m);

/*
 * Name the frame f of an address in m, a SP_MAP_MISSING mapping:
 * "[unknown build-id HEX]", native, origin none, flag no-build-id.  0 or
 * -ENOMEM.
 */
int sym_missing_frame(struct sp_symbolizer *s, const struct sp_map *m,
		      struct sp_frame *f);

/* A sample of a stack whose first missing file is file (index + 1, 0 none). */
void sym_missing_sample(struct sp_symbolizer *s, uint32_t file);
void sym_missing_release(struct sym_missing *ms);

/* symbolize.c: the symbolizer and what it offers its sources */
struct sp_answers;
struct sp_symbolizer {
	struct sp_procs *procs;
	unsigned flags;			/* SP_SYM_* */
	struct sp_strtab strs;		/* every name and file, once */
	struct sp_u64map threads;	/* pid << 32 | tid -> name index */
	struct sp_u64map stacks;	/* pid << 32 | id seen; the IDs of a
					   process are in its SP_PROC_STACKS
					   slot too, to go with it */
	struct sp_u64map demangled;	/* interned name -> shown name */
	/*
	 * Answers of cacheable sources: tables maps a table to its entry of
	 * answers, whose maps (return addresses, exact ones) map a vaddr to
	 * first << 8 | count of its frames in pool.
	 */
	struct sp_u64map tables;
	struct sp_answers {
		struct sp_u64map at[2];
	} *answers;
	size_t nanswers, cap_answers;
	struct sp_frame *pool;
	size_t npool, cap_pool;
	struct sp_frame *out;		/* frames of the last stack */
	size_t cap_out;
	struct sp_symbolize_stats st;	/* every part counts here */

	struct src_kernel kernel;
	struct src_elf elf;
	struct src_jitdump jitdump;
	struct src_perfmap perfmap;
	struct sym_missing missing;
	void (*on_gone)(void *arg, uint32_t pid, uint32_t tid);
	void *gone_arg;
};

/*
 * The answers s keeps for a cacheable source's table: at[precise] maps a
 * vaddr to first << 8 | count of its frames in s->pool.  NULL when it has
 * none.
 */
const struct sp_answers *sp_sym_answers(const struct sp_symbolizer *s,
					const void *table);

/* s's copy of str, living as long as s; NULL when out of memory. */
const char *sp_sym_intern(struct sp_symbolizer *s, const char *str);
const char *sp_sym_internf(struct sp_symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The name to show for a symbol table's name: without its symbol version
 * (@GLIBC_2.34), demangled unless SP_SYM_NO_DEMANGLE; once per name.  When
 * symbol is not NULL, *symbol is the name without its version if it was
 * demangled into another, else NULL.
 */
const char *sp_sym_display_name(struct sp_symbolizer *s, const char *raw,
				const char **symbol);

/* "[libc.so.6]+0x1f0", or "[vsyscall]+0x0" for names already in brackets. */
const char *sp_sym_offset_name(struct sp_symbolizer *s, const char *module,
			       uint64_t off);

#endif
