/* SPDX-License-Identifier: MIT */
/*
 * alive.h: which processes of a stream are alive, by the rule of
 * docs/streams.md (section 5.3.1), for the readers that keep something per
 * process and must let it go once nothing can refer to it.
 *
 * The table follows the threads of each process from its FORK, COMM and
 * EXIT records: a process ends at the EXIT of its last thread (not of its
 * main thread alone), and is forgotten SP_ALIVE_LINGER_NS of stream time
 * after that, since records stamped before its end may still come that
 * late, or at once when a FORK gives its pid to a new process.  Its owner
 * hears of each process forgotten through a callback and drops what it
 * keeps for it; readers that apply the same records forget the same
 * processes at the same records.  It costs a hash lookup per record it
 * follows, none per sample.
 */
#ifndef SP_ALIVE_H
#define SP_ALIVE_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"

/* How long, in the time of the records, an ended process is kept. */
#define SP_ALIVE_LINGER_NS 1000000000ull

struct sp_alive;

/*
 * Called with each process forgotten, while its threads are still known
 * (sp_alive_threads()), before the record that made it so is taken in.
 */
typedef void sp_alive_forget_fn(void *arg, uint32_t pid);

/* Returns an empty table calling forget(arg, pid); NULL when out of memory. */
struct sp_alive *sp_alive_new(sp_alive_forget_fn *forget, void *arg);

/* Free the table; forget is not called. */
void sp_alive_free(struct sp_alive *a);

/*
 * Follow a record (FORK, COMM, EXIT, MMAP, IMAGE; PERFMAP and PYCODE,
 * which only make their process known; other types are ignored), which
 * must have passed sp_rec_check_common(): forget the processes that ended
 * SP_ALIVE_LINGER_NS or more before its time, and the one whose pid a FORK
 * gives to a new process; then take in what it says.  Every reader must
 * give it the same records of a stream, so that all forget the same
 * processes at the same records.  Returns 0 or -ENOMEM.
 */
int sp_alive_apply(struct sp_alive *a, const struct sp_rec_hdr *rec);

/*
 * Process pid is named by a record the table does not follow (a SAMPLE, a
 * STACK): known from now on, with its main thread alive, if it was not.
 * Returns 0 or -ENOMEM.
 */
int sp_alive_see(struct sp_alive *a, uint32_t pid);

/* Whether pid is known: alive, or ended and not forgotten yet. */
int sp_alive_known(const struct sp_alive *a, uint32_t pid);

/* Whether pid has ended (no thread left) and is not forgotten yet. */
int sp_alive_ended(const struct sp_alive *a, uint32_t pid);

/*
 * The threads of pid alive, in no order: *n of them (0 for a process not
 * known), valid until the next call that changes the table.
 */
const uint32_t *sp_alive_threads(const struct sp_alive *a, uint32_t pid,
				 size_t *n);

/* Processes known. */
size_t sp_alive_count(const struct sp_alive *a);

#endif
