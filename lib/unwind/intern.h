/* SPDX-License-Identifier: MIT */
/*
 * intern.h: one ID per distinct frame list of a process.
 *
 * A table holds the stacks of one process: a hash table over (pid, end
 * reason and flags, kernel frames, user frames and their flags, Python
 * frames) whose
 * entries point into one growing arena, so that it goes with its process.
 * The tables of a stream share one counter, and IDs are handed out in order
 * of first appearance: the same input always gives the same IDs, and no
 * two stacks get the same ID, even of two processes that had the same pid
 * one after the other.
 */
#ifndef SP_INTERN_H
#define SP_INTERN_H

#include <stdint.h>

struct sp_intern;

/* Returns a new, empty table; NULL when out of memory. */
struct sp_intern *sp_intern_new(void);
void sp_intern_free(struct sp_intern *t);

struct sp_stack_key {
	uint32_t pid;
	uint8_t end;		/* enum sp_unw_end: below 8 */
	uint8_t flags;		/* SP_STACK_*: below 0x20 */
	uint16_t nr_kernel, nr_user;
	const uint64_t *kernel_ips;	/* leaf first */
	const uint64_t *user_ips;	/* leaf first */
	const uint8_t *uflags;
	uint16_t nr_py;
	const uint64_t *py;		/* Python frames, innermost first */
};

/*
 * Returns the ID (>= 1) of the stack in t, with *is_new set if it was
 * added by this call: its ID is then ++*last, last being the counter that
 * the tables of a stream share (0 before the first stack).  Returns 0 when
 * out of memory or out of IDs.
 */
uint32_t sp_intern_stack(struct sp_intern *t, const struct sp_stack_key *k,
			 uint32_t *last, int *is_new);

/* Distinct stacks in t. */
uint64_t sp_intern_count(const struct sp_intern *t);

#endif
