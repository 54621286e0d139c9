/* SPDX-License-Identifier: MIT */
/* test-idset: sets of IDs count each once, from 1 to the largest pid. */
#include <stdlib.h>

#include "base/idset.h"
#include "unit.h"

int main(void)
{
	struct sp_idset s = { 0 };
	uint32_t i;
	int ok;

	CHECK(!sp_idset_has(&s, 1));
	CHECK(sp_idset_add(&s, 1) == 1);
	CHECK(sp_idset_add(&s, 1) == 0);
	CHECK(sp_idset_has(&s, 1) && !sp_idset_has(&s, 2));
	CHECK(s.n == 1);
	/* the largest pid the kernel gives (PID_MAX_LIMIT - 1), and beyond */
	CHECK(sp_idset_add(&s, 4194303) == 1);
	CHECK(sp_idset_add(&s, UINT32_MAX) == 1);
	CHECK(sp_idset_has(&s, 4194303) && sp_idset_has(&s, UINT32_MAX));
	CHECK(!sp_idset_has(&s, 4194302) && !sp_idset_has(&s, 0));
	CHECK(s.n == 3);
	/* reused IDs count once: a page's worth, twice, and its neighbours */
	for (i = 30000, ok = 1; i < 30000 + 2 * SP_IDSET_PAGE; i++)
		ok &= sp_idset_add(&s, i) == 1;
	for (i = 30000; i < 30000 + 2 * SP_IDSET_PAGE; i += 7)
		ok &= sp_idset_add(&s, i) == 0 && sp_idset_has(&s, i);
	CHECK(ok);
	CHECK(!sp_idset_has(&s, 29999) &&
	      !sp_idset_has(&s, 30000 + 2 * SP_IDSET_PAGE));
	CHECK(s.n == 3 + 2 * SP_IDSET_PAGE);
	sp_idset_release(&s);
	CHECK(s.n == 0 && !sp_idset_has(&s, 1));
	CHECK(sp_idset_add(&s, 0) == 1 && sp_idset_has(&s, 0));
	sp_idset_release(&s);
	return unit_done("test-idset");
}
