/* SPDX-License-Identifier: MIT */
/*
 * intern.h: one ID per distinct frame list of a process.
 *
 * A hash table over (pid, end reason and flags, kernel frames, user frames and their
 * flags) whose entries point into one growing arena; IDs are handed out in
 * order of first appearance, so the same input always gives the same IDs.
 */
#ifndef SP_INTERN_H
#define SP_INTERN_H

#include <stdint.h>

struct sp_intern;

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
};

/*
 * Returns the ID (>= 1) of the stack, with *is_new set if it was added by
 * this call; 0 when out of memory.
 */
uint32_t sp_intern_stack(struct sp_intern *t, const struct sp_stack_key *k,
			 int *is_new);

/* Distinct stacks so far. */
uint64_t sp_intern_count(const struct sp_intern *t);

#endif
