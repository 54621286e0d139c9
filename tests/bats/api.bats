#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# api.bats: the public C API through the three tutorial programs of
# examples/, and a program outside the tree built against an installed
# libstackpulse with pkg-config.

load common
bats_require_minimum_version 1.5.0

EX="$SP_BIN/build/examples"

setup_file() {
	build_workloads
}

setup() {
	need_perf_events
	for e in attach launch histogram; do
		[[ -x $EX/$e ]] || fail "example $e not built: run 'make examples'"
	done
}

teardown() {
	stop_targets
}

@test "attach: records a running process into a spool and prints its first stacks" {
	start_target wl-single 10
	run "$EX/attach" "$TARGET_PID" 2 "$BATS_TEST_TMPDIR/a.spool"
	assert_success
	# ten samples, each with its pid and frames that reach main
	assert_equal "$(grep -c "^pid=$TARGET_PID tid=$TARGET_PID\$" <<<"$output")" 10
	assert_line --regexp '^  leaf_[abc]$'
	assert_equal "$(grep -c '^  main$' <<<"$output")" 10
	run "$SP_BIN/sp-spool/sp-spool" verify "$BATS_TEST_TMPDIR/a.spool"
	assert_success
}

@test "histogram: counts the stacks of a spool, most frequent first" {
	start_target wl-single 10
	run "$EX/attach" "$TARGET_PID" 3 "$BATS_TEST_TMPDIR/h.spool"
	assert_success
	run "$EX/histogram" "$BATS_TEST_TMPDIR/h.spool"
	assert_success
	# the designed heaviest stack comes first, root first
	assert_line --index 0 --regexp '^ +[0-9]+ main;run;outer_a;middle_a;leaf_a(;wl_burn)?$'
	# counts never increase down the list
	sort -k1,1nr -c <<<"$output"
	# and they add up to the spool's samples (at most 20 rows are shown)
	total=$(awk '{ n += $1 } END { print n }' <<<"$output")
	samples=$("$SP_BIN/sp-spool/sp-spool" info --json "$BATS_TEST_TMPDIR/h.spool" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["samples"])')
	((total <= samples && total * 100 >= samples * 95))
}

@test "launch: records a command from its start and reports its exit status" {
	# 1 s of CPU time (WL_CLOCK=cpu) at 199 Hz: about 200 samples, however
	# loaded the machine
	run env WL_CLOCK=cpu "$EX/launch" "$BATS_TEST_TMPDIR/l.spool" "$WL_DIR/wl-single" 1
	assert_success
	assert_output --regexp '^status=0 samples=[0-9]+ lost=0 stacks=[0-9]+$'
	n=$(sed -E 's/.*samples=([0-9]+).*/\1/' <<<"$output")
	((n > 100))
	run "$EX/histogram" "$BATS_TEST_TMPDIR/l.spool"
	assert_success
	assert_line --regexp ';main;run;outer_a;middle_a;leaf_a(;wl_burn)?$|^ +[0-9]+ main;run;outer_a;middle_a;leaf_a(;wl_burn)?$'

	run "$EX/launch" "$BATS_TEST_TMPDIR/l3.spool" sh -c 'exit 3'
	assert_output --regexp '^status=3 '
	run -127 "$EX/launch" "$BATS_TEST_TMPDIR/l4.spool" /nonexistent/program
	assert_failure 127
}

@test "make install puts tools, man pages, libraries, headers and pkg-config in place" {
	local root=$BATS_TEST_TMPDIR/root prefix=/opt/sp build=$BATS_TEST_TMPDIR/build
	run make -C "$SP_ROOT" --no-print-directory -j2 O="$build" \
		PREFIX="$prefix" DESTDIR="$root" install
	assert_success
	for f in bin/sp-record bin/sp-unwind bin/sp-symbolize bin/sp-fold \
		bin/sp-spool share/man/man1/sp-record.1 lib/libstackpulse.a \
		lib/libstackpulse.so.0 lib/libstackpulse.so \
		include/stackpulse/stackpulse.h lib/pkgconfig/stackpulse.pc; do
		[[ -e $root$prefix/$f ]] || fail "not installed: $prefix/$f"
	done
	run readelf -d "$root$prefix/lib/libstackpulse.so"
	assert_output --partial 'Library soname: [libstackpulse.so.0]'
	# the library never dies for its caller: no tool helpers in it
	run nm -D --defined-only "$root$prefix/lib/libstackpulse.so"
	refute_output --partial 'sp_die'
	refute_output --regexp ' T [^s]'	# only sp_ names are exported

	# only the public API is exported: what the installed headers declare
	local inc=$root$prefix/include/stackpulse
	grep -rhE '^[a-z].*\bsp_[a-z0-9_]+\(' "$inc" | grep -v '^static' |
		sed -E 's/.*\b(sp_[a-z0-9_]+)\(.*/\1/' | sort -u >"$BATS_TEST_TMPDIR/declared"
	nm -D --defined-only "$root$prefix/lib/libstackpulse.so" |
		awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u \
		>"$BATS_TEST_TMPDIR/exported"
	run diff -u "$BATS_TEST_TMPDIR/declared" "$BATS_TEST_TMPDIR/exported"
	assert_success
	grep -qx sp_perf_recorder_attach "$BATS_TEST_TMPDIR/exported"
	! grep -qE '^sp_(recorder_new|symbolize_stack|unwstream_new|ksyms_lookup)$' \
		"$BATS_TEST_TMPDIR/exported"
	# every installed header stands on its own
	for h in $(cd "$inc" && find . -name '*.h'); do
		printf '#include "%s"\n' "$h" >"$BATS_TEST_TMPDIR/h.c"
		run cc -std=c11 -D_GNU_SOURCE -Wall -Werror -I"$inc" -c -o /dev/null "$BATS_TEST_TMPDIR/h.c"
		assert_success
	done

	# a program outside the tree, built the way the README says
	sed -i "s|^prefix=.*|prefix=$root$prefix|; s|^libdir=.*|libdir=$root$prefix/lib|; s|^includedir=.*|includedir=$root$prefix/include|" \
		"$root$prefix/lib/pkgconfig/stackpulse.pc"
	cp "$SP_ROOT/examples/histogram.c" "$BATS_TEST_TMPDIR/outside.c"
	export PKG_CONFIG_PATH=$root$prefix/lib/pkgconfig
	run sh -c "cc -o '$BATS_TEST_TMPDIR/outside' '$BATS_TEST_TMPDIR/outside.c' \$(pkg-config --cflags --libs stackpulse)"
	assert_success
	start_target wl-single 10
	"$build/sp-record/sp-record" -p "$TARGET_PID" -d 1 2>/dev/null |
		"$build/sp-unwind/sp-unwind" -q |
		"$build/sp-spool/sp-spool" write -q "$BATS_TEST_TMPDIR/o.spool"
	LD_LIBRARY_PATH=$root$prefix/lib run "$BATS_TEST_TMPDIR/outside" "$BATS_TEST_TMPDIR/o.spool"
	assert_success
	assert_line --regexp 'main;run;outer_a;middle_a;leaf_a(;wl_burn)?$'
}
