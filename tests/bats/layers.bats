#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# layers.bats: tests/layers.sh, which make check runs, passes lib/ as it is
# and fails on an include that crosses layers (lib/README.md).

load common

setup() {
	cp -r "$SP_ROOT/lib" "$BATS_TEST_TMPDIR/lib"
	L=$BATS_TEST_TMPDIR/lib
}

@test "layers: lib/ as it is passes" {
	run sh "$SP_ROOT/tests/layers.sh" "$SP_ROOT/lib"
	assert_success
	assert_output 'layers: every include of lib/ is allowed'
}

@test "layers: a stage that includes another stage fails, naming the line" {
	sed -i '0,/^#include "/s//#include "record\/record.h"\n#include "/' "$L/fold/fold.c"
	run sh "$SP_ROOT/tests/layers.sh" "$L"
	assert_failure 1
	assert_line --regexp "^.*/fold/fold\.c:[0-9]+: fold/ may not include record/record\.h$"
}

@test "layers: a shared layer that includes a stage or os fails" {
	echo '#include "symbolize/symbolize.h"' >>"$L/elf/symtab.c"
	echo '#include "os/perf.h"' >>"$L/elf/buildid.c"
	echo '#include "format/raw.h"' >>"$L/base/grow.c"
	run sh "$SP_ROOT/tests/layers.sh" "$L"
	assert_failure 1
	assert_line --regexp 'elf/symtab\.c:[0-9]+: elf/ may not include symbolize/symbolize\.h$'
	assert_line --regexp 'elf/buildid\.c:[0-9]+: elf/ may not include os/perf\.h$'
	assert_line --regexp 'base/grow\.c:[0-9]+: base/ may not include format/raw\.h$'
}

@test "layers: a bare include of another folder's header fails" {
	echo '#include "io.h"' >>"$L/unwind/intern.c"
	run sh "$SP_ROOT/tests/layers.sh" "$L"
	assert_failure 1
	assert_line --regexp 'unwind/intern\.c:[0-9]+: "io\.h" is not in unwind/: name its folder$'
}
