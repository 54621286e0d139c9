/* SPDX-License-Identifier: MIT */
/*
 * procs.h: the processes of a recording as its records describe them: names,
 * and address spaces built from MMAP and IMAGE records.
 *
 * sp-unwind and sp-symbolize each replay the stream's records into a
 * struct sp_procs and then ask, per frame, which mapping holds an address and
 * which ELF file and load bias stand behind it.  Lookups are binary searches
 * in sorted arrays; records that change the arrays are rare.
 */
#ifndef SP_PROCS_H
#define SP_PROCS_H

#include <stdint.h>
#include "format/records.h"
#include "elfcache.h"

enum sp_map_kind {
	SP_MAP_FILE,		/* backed by an ELF file we could open */
	SP_MAP_UNREADABLE,	/* backed by a file we cannot read as ELF */
	SP_MAP_ANON,		/* anonymous executable memory: JIT code */
	SP_MAP_IMAGE,		/* [vdso] with its bytes from an IMAGE record */
	SP_MAP_SPECIAL,		/* [vsyscall], [stack] and friends */
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
};

struct sp_proc;
struct sp_procs;

/* Returns a new table using cache (not owned), NULL when out of memory. */
struct sp_procs *sp_procs_new(struct sp_elf_cache *cache);
void sp_procs_free(struct sp_procs *p);

/*
 * Apply a record of format/records.h (MMAP, COMM, FORK, EXIT, IMAGE); other types
 * are ignored.  The record must have passed sp_rec_check_common().
 * Returns 0 or -ENOMEM.
 */
int sp_procs_apply(struct sp_procs *p, const struct sp_rec_hdr *rec);

/*
 * The executable mappings of proc, sorted by address and disjoint: *n of
 * them, valid until the next record is applied.
 */
const struct sp_map *sp_proc_maps(const struct sp_proc *proc, size_t *n);

/* The process, created empty on first use (NULL only when out of memory). */
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

/* Per-process slot for a user of the table (the unwinder's address space). */
void *sp_proc_user(const struct sp_proc *proc);
void sp_proc_set_user(struct sp_proc *proc, void *data,
		      void (*release)(void *data));

#endif
