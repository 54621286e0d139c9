/* SPDX-License-Identifier: MIT */
/* test-demangle.c: C++ and Rust (legacy, v0) demangling; plain names stay. */
#include <stdlib.h>
#include <string.h>

#include "elf/debuginfo.h"
#include "elf/demangle.h"
#include "unit.h"

static void want(const char *mangled, const char *expect)
{
	char *d = sp_demangle(mangled);

	if (!expect) {
		CHECK(d == NULL);
	} else {
		CHECK_STR(d, expect);
	}
	free(d);
}

int main(void)
{
	char hex[41];

	want("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	want("_RNvCs1234_7mycrate3foo", "mycrate::foo");
	want("_RNvNtCs9ltgdHTiPiY_4core3ptr13drop_in_place",
	     "core::ptr::drop_in_place");
	want("_ZN2ns3fooIiEEvT_", "void ns::foo<int>(int)");
	want("_ZNSt6vectorIiSaIiEE9push_backERKi",
	     "std::vector<int, std::allocator<int> >::push_back(int const&)");
	want("_Z3addii", "add(int, int)");
	want("main", NULL);
	want("_Zbogus", NULL);
	want("", NULL);
	CHECK(!sp_is_mangled("__libc_start_main"));
	CHECK(sp_is_mangled("_ZN1a1bE"));
	/* gnu_debuglink's CRC is zlib's CRC-32: "123456789" -> cbf43926 */
	CHECK(sp_debuglink_crc("123456789", 9) == 0xcbf43926u);
	sp_build_id_hex((const uint8_t *)"\x01\xab\xff", 3, hex);
	CHECK_STR(hex, "01abff");
	return unit_done("test-demangle");
}
