/* SPDX-License-Identifier: MIT */
/* test-hashtab: interned strings keep their index; maps find, add, delete. */
#include <stdio.h>
#include <stdlib.h>

#include "base/hashtab.h"
#include "unit.h"

int main(void)
{
	struct sp_strtab t = { 0 };
	struct sp_u64map m = { 0 };
	struct sp_u64slot *slot;
	char buf[32];
	int i, ok, is_new;

	CHECK(sp_strtab_intern(&t, "main") == 0);
	CHECK(sp_strtab_intern(&t, "leaf") == 1);
	CHECK(sp_strtab_intern(&t, "main") == 0);
	CHECK(sp_strtab_intern(&t, "") == 2);
	for (i = 0, ok = 1; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "f%d", i);
		ok &= sp_strtab_intern(&t, buf) == 3 + i;
	}
	CHECK(ok);
	CHECK(sp_strtab_intern(&t, "f12345") == 3 + 12345);
	CHECK_STR(t.strs[1], "leaf");
	CHECK(t.n == 20003);
	sp_strtab_release(&t);
	CHECK(t.n == 0 && sp_strtab_intern(&t, "again") == 0);
	sp_strtab_release(&t);

	CHECK(sp_u64map_find(&m, 7) == NULL);
	slot = sp_u64map_get(&m, 7, &is_new);
	CHECK(slot && is_new && slot->val == 0);
	slot->val = 70;
	CHECK(sp_u64map_get(&m, 7, &is_new)->val == 70 && !is_new);
	for (i = 0, ok = 1; i < 50000; i++) {
		slot = sp_u64map_get(&m, (uint64_t)i << 32 | 3, NULL);
		ok &= slot != NULL;
		if (slot)
			slot->val = (uint64_t)i;
	}
	CHECK(ok);
	/* delete every other key: the rest must still be found */
	for (i = 0; i < 50000; i += 2)
		sp_u64map_del(&m, (uint64_t)i << 32 | 3);
	sp_u64map_del(&m, 999);	/* absent: nothing happens */
	for (i = 0, ok = 1; i < 50000; i++) {
		slot = sp_u64map_find(&m, (uint64_t)i << 32 | 3);
		ok &= i % 2 ? slot && slot->val == (uint64_t)i : !slot;
	}
	CHECK(ok);
	CHECK(m.n == 25001);
	CHECK(sp_u64map_find(&m, 7)->val == 70);
	sp_u64map_release(&m);
	return unit_done("test-hashtab");
}
