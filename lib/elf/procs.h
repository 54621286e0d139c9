/* SPDX-License-Identifier: MIT */
/*
 * procs.h: the processes of a recording as its records describe them: names,
 * and address spaces built from MMAP and IMAGE records.
 *
 * sp-unwind and sp-symbolize each replay the stream's records into a
 * struct sp_procs and then ask, per frame, which mapping holds an address and
 * which ELF file and load bias stand behind it.  Lookups are binary searches
 * in sorted arrays; records that change the arrays are rare.
 *
 * The file behind a mapping is the one with the build-id its MMAP record
 * holds, found by the lookup of locate.h (the build-id cache, the path,
 * debug files), never another build that happens to be at the path: a
 * mapping whose file is found nowhere is SP_MAP_MISSING, and one found
 * only as a debug file names frames but cannot be unwound through.  Both
 * are listed once per file by sp_procs_missing().
 *
 * The table follows what is alive, not what was ever seen: it forgets a
 * process when format/alive.h says, SP_ALIVE_LINGER_NS of stream time
 * after the EXIT of its last thread, or at once when a FORK gives its pid
 * to a new process (docs/streams.md, section 5.3.1).  Its users keep what
 * they know of a process in its user slots, which go with it, or hear of
 * it through sp_procs_on_forget().
 */
#ifndef SP_PROCS_H
#define SP_PROCS_H

#include <stdint.h>
#include "format/alive.h"
#include "format/records.h"
#include "elfcache.h"
#include "locate.h"

enum sp_map_kind {
	SP_MAP_FILE,		/* backed by an ELF file we could open */
	SP_MAP_UNREADABLE,	/* backed by a file we cannot read as ELF */
	SP_MAP_ANON,		/* anonymous executable memory: JIT code */
	SP_MAP_IMAGE,		/* [vdso] with its bytes from an IMAGE record */
	SP_MAP_SPECIAL,		/* [vsyscall], [stack] and friends */
	SP_MAP_MISSING,		/* a file whose recorded build-id no file
				   found has (replaced, deleted): no ELF */
};

struct sp_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;
	uint64_t bias;		/* address - file vaddr, when elf is set */
	struct sp_elf *elf;	/* NULL unless FILE or IMAGE; owned by cache */
	const char *name;	/* path or "[vdso]", owned by the sp_procs */
	uint32_t prot;
	enum sp_map_kind kind;
	uint8_t build_id_size;	/* its MMAP record's build-id; 0: none */
	uint8_t build_id[24];
	uint8_t from;		/* enum sp_elf_from: where elf was found */
	uint32_t missing;	/* index + 1 in sp_procs_missing() when no
				   file with the code of the recorded
				   build-id was found (MISSING, or elf is
				   a debug file); 0 otherwise */
};

/*
 * A file that was mapped with a build-id and is not at hand with its code:
 * nothing can be unwound through its mappings.
 */
struct sp_missing_file {
	const char *path;	/* as recorded, owned by the table */
	uint8_t build_id_size;
	uint8_t build_id[24];
	int debug_only;		/* a debug file of it names its frames */
};

struct sp_proc;
struct sp_procs;

/*
 * Returns a new table using cache (not owned) and a locator of its own with
 * the default sources (locate.h), NULL when out of memory.
 */
struct sp_procs *sp_procs_new(struct sp_elf_cache *cache);
void sp_procs_free(struct sp_procs *p);

/*
 * The lookup the table finds files with, to configure before the first
 * record is applied (the build-id cache's directory, debug roots).  Owned
 * by the table.
 */
struct sp_locator *sp_procs_locator(struct sp_procs *p);

/*
 * The files of MISSING mappings and of those whose file is a debug file,
 * once each (by path and build-id), in the order first met: *n of them,
 * owned by the table, valid until the next record is applied; a map's
 * missing field is its index + 1.
 */
const struct sp_missing_file *sp_procs_missing(const struct sp_procs *p,
					       size_t *n);

/*
 * Whether m is a mapping of a file whose recorded build-id was found with
 * no code (missing, or only its debug file): nothing can be unwound through
 * it.  m may be NULL.
 */
static inline int sp_map_no_buildid(const struct sp_map *m)
{
	return m && m->missing;
}

/*
 * Apply a record of format/records.h (MMAP, COMM, FORK, EXIT, IMAGE); other types
 * are ignored.  The record must have passed sp_rec_check_common().  First
 * forgets the processes sp_alive_apply() forgets: a struct sp_proc found
 * before may be gone after.  Returns 0 or -ENOMEM.
 */
int sp_procs_apply(struct sp_procs *p, const struct sp_rec_hdr *rec);

/* Which processes live: the table's, owned by it. */
struct sp_alive *sp_procs_alive(const struct sp_procs *p);

/*
 * Call fn(arg, proc) for each process the table forgets while records are
 * applied, before its user slots are released; NULL for none.  Not called
 * by sp_procs_free().
 */
void sp_procs_on_forget(struct sp_procs *p,
			void (*fn)(void *arg, struct sp_proc *proc),
			void *arg);

/* Processes in the table: alive, or ended and not forgotten yet. */
size_t sp_procs_count(const struct sp_procs *p);

/*
 * The executable mappings of proc, sorted by address and disjoint: *n of
 * them, valid until the next record is applied.
 */
const struct sp_map *sp_proc_maps(const struct sp_proc *proc, size_t *n);

/*
 * The whole file images of proc's mapped files (sp_proc_module()), sorted
 * by address and disjoint: *n of them, valid until the next record is
 * applied.
 */
const struct sp_map *sp_proc_modules(const struct sp_proc *proc, size_t *n);

/*
 * The process, created empty on first use, with its main thread (tid ==
 * pid) alive (sp_alive_see(); NULL only when out of memory).
 */
struct sp_proc *sp_procs_get(struct sp_procs *p, uint32_t pid);

/* The process if known, else NULL. */
struct sp_proc *sp_procs_find(const struct sp_procs *p, uint32_t pid);

uint32_t sp_proc_pid(const struct sp_proc *proc);

/* Process name (its main thread's comm), "" when unknown. */
const char *sp_proc_comm(const struct sp_proc *proc);

/*
 * Incremented whenever the process's address space is replaced (exec) or
 * loses mappings, so callers can drop what they cached about it.
 */
unsigned sp_proc_generation(const struct sp_proc *proc);

/* The executable mapping that holds addr, or NULL. */
const struct sp_map *sp_proc_map(const struct sp_proc *proc, uint64_t addr);

/*
 * The mapping whose ELF file image covers addr, including segments of a
 * mapped file that were not recorded (only executable mappings are): this is
 * how .eh_frame_hdr in a read-only segment is found.  NULL if none.
 */
const struct sp_map *sp_proc_module(const struct sp_proc *proc,
				    uint64_t addr);

/*
 * The jitdump file (jit-PID.dump) the process last mapped, as its MMAP
 * record names it; NULL when none.  Owned by the table, valid until the
 * next record is applied.
 */
const char *sp_proc_jitdump(const struct sp_proc *proc);

/*
 * Per-process slots for the users of the table; what a slot holds is
 * released with release(data) when the process is forgotten or the table
 * freed (and must not need the user then).
 */
enum sp_proc_slot {
	SP_PROC_UNWINDER,	/* the unwinder's address space */
	SP_PROC_STACKS,		/* the stacks interned or named for it */
	SP_PROC_PYCODE,		/* its Python code objects, by ID */
	SP_PROC_SLOTS
};

void *sp_proc_user(const struct sp_proc *proc, enum sp_proc_slot slot);
void sp_proc_set_user(struct sp_proc *proc, enum sp_proc_slot slot,
		      void *data, void (*release)(void *data));

#endif
