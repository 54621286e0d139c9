/* SPDX-License-Identifier: MIT */
/*
 * symbolize.h: turn the addresses of an unwound stack into named frames.
 *
 * User addresses go through the process table (struct sp_procs) to a
 * mapping: ELF files and the [vdso] image by .symtab else .dynsym, JIT code
 * and addresses in no mapping by /tmp/perf-PID.map; kernel addresses by
 * /proc/kallsyms.  Return addresses are looked up at address - 1 so a call
 * at the very end of a function is not blamed on the next one.  Stacks come
 * once per (pid, ID), so the work that repeats is per address: results are
 * cached by (ELF file, address), and the kernel and perf-map tables are
 * loaded once, lazily, when the first frame needs them.
 */
#ifndef SP_SYMBOLIZE_H
#define SP_SYMBOLIZE_H

#include <stdint.h>

#include "procs.h"
#include "stream.h"
#include "symtext.h"
#include "unwound.h"

struct sp_symbolizer;

/*
 * Returns a symbolizer over procs (not owned; it and its ELF cache must
 * outlive the symbolizer), NULL when out of memory.
 */
struct sp_symbolizer *sp_symbolizer_new(struct sp_procs *procs);
void sp_symbolizer_free(struct sp_symbolizer *s);

/*
 * Read kernel symbols from path instead of /proc/kallsyms, and perf maps
 * from dir instead of /tmp (for tests and for copies taken from another
 * machine).  Call before the first lookup.  Returns 0 or -ENOMEM.
 */
int sp_symbolizer_set_kallsyms(struct sp_symbolizer *s, const char *path);
int sp_symbolizer_set_perf_map_dir(struct sp_symbolizer *s, const char *dir);

/*
 * Apply a record of stream.h (MMAP, COMM, FORK, EXIT, IMAGE) to the process
 * table and to the thread names.  Returns 1 and fills *comm when the record
 * names a thread: a COMM, or a FORK whose new thread inherits its parent's
 * name (comm->name valid until the next call); 0 when it names none;
 * -ENOMEM.  The record must have passed sp_rec_check_common().
 */
int sp_symbolizer_apply(struct sp_symbolizer *s, const struct sp_rec_hdr *rec,
			struct sp_st_comm *comm);

/*
 * Resolve one user address of pid; precise is set for an exact IP (a
 * leaf), clear for a return address.  Fills *f; its strings belong to the
 * symbolizer and live as long as it.  Returns 0 or -ENOMEM.
 */
int sp_symbolize_user(struct sp_symbolizer *s, uint32_t pid, uint64_t addr,
		      int precise, struct sp_frame *f);

/* Resolve a kernel address, as sp_symbolize_user(). */
int sp_symbolize_kernel(struct sp_symbolizer *s, uint64_t addr, int precise,
			struct sp_frame *f);

/*
 * Resolve every frame of a parsed STACK record, leaf first: its kernel
 * frames, then its user frames, into frames[nr_kernel + nr_user], and
 * remember (pid, ID) as defined.  Returns 0 or -ENOMEM.
 */
int sp_symbolize_stack(struct sp_symbolizer *s,
		       const struct sp_unw_stack_view *v,
		       struct sp_frame *frames);

/* Whether a STACK of (pid, id) was resolved by sp_symbolize_stack(). */
int sp_symbolizer_has_stack(const struct sp_symbolizer *s, uint32_t pid,
			    uint32_t id);

struct sp_symbolize_stats {
	uint64_t stacks;	/* distinct (pid, ID) */
	uint64_t frames;
	uint64_t unresolved;	/* frames with origin none */
	uint64_t no_kallsyms;	/* kernel frames with no kernel symbols */
	uint64_t perf_map_loads;
};

void sp_symbolizer_stats(const struct sp_symbolizer *s,
			 struct sp_symbolize_stats *st);

/* Whether name is start-up glue that flame graphs leave out (_start, ...). */
int sp_symbol_hidden(const char *name);

#endif
