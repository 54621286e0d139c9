/* SPDX-License-Identifier: MIT */
/*
 * test-intern: stack IDs are stable, distinct per frame list and per pid,
 * and unique across the tables of one stream.
 */
#include <stdlib.h>

#include "format/unwound.h"
#include "unwind/intern.h"
#include "unit.h"

int main(void)
{
	struct sp_intern *t = sp_intern_new();
	uint64_t k1[] = { 0xffffffff81000000ull };
	uint64_t u1[] = { 0x401000, 0x401100, 0x401200 };
	uint64_t u2[] = { 0x401000, 0x401100, 0x401300 };
	uint8_t f[] = { 1, 0, 0 }, g[] = { 1, 1, 0 };
	struct sp_stack_key a = { .pid = 100, .nr_user = 3, .user_ips = u1,
				  .uflags = f };
	struct sp_stack_key b = a, c = a, d = a, e = a, kk = a;
	uint32_t ida, id, last = 0;
	int is_new, i;

	CHECK(t != NULL);
	ida = sp_intern_stack(t, &a, &last, &is_new);
	CHECK(ida == 1 && is_new);
	CHECK(sp_intern_stack(t, &a, &last, &is_new) == ida && !is_new);
	b.user_ips = u2;
	CHECK(sp_intern_stack(t, &b, &last, &is_new) == 2 && is_new);
	c.pid = 101;		/* same frames, other process */
	CHECK(sp_intern_stack(t, &c, &last, &is_new) == 3 && is_new);
	d.uflags = g;		/* same addresses, other frame flags */
	CHECK(sp_intern_stack(t, &d, &last, &is_new) == 4 && is_new);
	e.end = 1;		/* same frames, ended differently */
	CHECK(sp_intern_stack(t, &e, &last, &is_new) == 5 && is_new);
	e.nr_user = 2;		/* a prefix is another stack */
	CHECK(sp_intern_stack(t, &e, &last, &is_new) == 6 && is_new);
	kk.nr_kernel = 1;
	kk.kernel_ips = k1;
	CHECK(sp_intern_stack(t, &kk, &last, &is_new) == 7 && is_new);
	kk.nr_user = 0;		/* kernel frames only */
	CHECK(sp_intern_stack(t, &kk, &last, &is_new) == 8 && is_new);
	CHECK(sp_intern_stack(t, &kk, &last, &is_new) == 8 && !is_new);
	kk.flags = SP_STACK_SPLICED;	/* the same, finished otherwise */
	CHECK(sp_intern_stack(t, &kk, &last, &is_new) == 9 && is_new);
	CHECK(sp_intern_count(t) == 9);

	/* many stacks: the table grows and every ID stays findable */
	for (i = 0; i < 50000; i++) {
		uint64_t u[2] = { 0x500000 + (uint64_t)i * 16, 0x401000 };
		uint8_t fl[2] = { 1, 0 };
		struct sp_stack_key x = { .pid = 7, .nr_user = 2,
					  .user_ips = u, .uflags = fl };

		id = sp_intern_stack(t, &x, &last, &is_new);
		if (id != (uint32_t)(10 + i) || !is_new)
			break;
	}
	CHECK(i == 50000);
	for (i = 0; i < 50000; i += 997) {
		uint64_t u[2] = { 0x500000 + (uint64_t)i * 16, 0x401000 };
		uint8_t fl[2] = { 1, 0 };
		struct sp_stack_key x = { .pid = 7, .nr_user = 2,
					  .user_ips = u, .uflags = fl };

		CHECK(sp_intern_stack(t, &x, &last, &is_new) == (uint32_t)(10 + i) &&
		      !is_new);
	}
	CHECK(sp_intern_stack(t, &a, &last, &is_new) == ida && !is_new);
	CHECK(sp_intern_count(t) == 50009 && last == 50009);

	/*
	 * A table of a process that came later with the same pid: the same
	 * stack is new to it and gets a new ID from the shared counter.
	 */
	{
		struct sp_intern *t2 = sp_intern_new();

		CHECK(t2 != NULL);
		CHECK(sp_intern_stack(t2, &a, &last, &is_new) == 50010 && is_new);
		CHECK(sp_intern_stack(t2, &a, &last, &is_new) == 50010 && !is_new);
		CHECK(sp_intern_stack(t, &a, &last, &is_new) == ida && !is_new);
		CHECK(sp_intern_count(t2) == 1);
		sp_intern_free(t2);
	}
	/* out of IDs: no stack is added, none is given 0 twice */
	last = UINT32_MAX;
	CHECK(sp_intern_stack(t, &b, &last, &is_new) == 2 && !is_new);
	e.nr_user = 1;
	CHECK(sp_intern_stack(t, &e, &last, &is_new) == 0 && !is_new);
	sp_intern_free(t);
	sp_intern_free(NULL);
	return unit_done("test-intern");
}
