#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sp-unwind.bats: options, exit statuses, and the end-of-run report
#
#	sp-unwind: N samples, N stacks: N complete, N truncated, N noinfo, N error, N spliced
#
# which sp-unwind prints on stderr as its last line (", N depth, N noregs"
# before the spliced count when there are any).  Stack tails have their own
# file, stacktail.bats.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

REPORT_RE='^sp-unwind: ([0-9]+) samples, ([0-9]+) stacks: ([0-9]+) complete, ([0-9]+) truncated, ([0-9]+) noinfo, ([0-9]+) error(, [0-9]+ depth, [0-9]+ noregs)?, ([0-9]+) spliced$'

setup() {
	require_tools
	T=$BATS_TEST_TMPDIR
}

# unwind_report RAW: run sp-unwind on RAW, check its exit status (0, or 1
# for a partial result), parse its last stderr line into SAMPLES STACKS
# COMPLETE TRUNCATED NOINFO ERROR SPLICED.
unwind_report() {
	run_io "$SP_UNWIND" "$1" "$T/out.unw"
	((status <= 1)) || fail "sp-unwind exited $status: $stderr"
	[[ ${stderr_lines[-1]:-} =~ $REPORT_RE ]] ||
		fail "no end-of-run report as the last line on stderr: $stderr"
	SAMPLES=${BASH_REMATCH[1]} STACKS=${BASH_REMATCH[2]}
	COMPLETE=${BASH_REMATCH[3]} TRUNCATED=${BASH_REMATCH[4]}
	NOINFO=${BASH_REMATCH[5]} ERROR=${BASH_REMATCH[6]}
	SPLICED=${BASH_REMATCH[8]}
	((COMPLETE + TRUNCATED + NOINFO + ERROR <= SAMPLES)) ||
		fail "ends add up to more than the samples: ${stderr_lines[-1]}"
	((SPLICED <= COMPLETE)) ||
		fail "more spliced stacks than complete ones: ${stderr_lines[-1]}"
	((STACKS >= 1 && STACKS <= SAMPLES)) ||
		fail "implausible stack count: ${stderr_lines[-1]}"
}

@test "sp-unwind: options and their exit statuses" {
	# args | status | where the answer goes | what it must contain
	local bad=0
	while IFS='|' read -r args want where re; do
		# shellcheck disable=SC2086
		run --separate-stderr "$SP_UNWIND" $args </dev/null
		text=$output
		[[ $where == stderr ]] && text=$stderr
		if ((status != want)); then
			echo "# sp-unwind $args: exit $status, want $want"
		elif ! [[ $text =~ $re ]]; then
			echo "# sp-unwind $args: $where does not match /$re/: $text"
		else
			continue
		fi
		bad=$((bad + 1))
	done <<'EOF'
-h|0|stdout|[Uu]sage: .*sp-unwind
--help|0|stdout|[Uu]sage: .*sp-unwind
--help|0|stdout|64
-V|0|stdout|[0-9]+\.[0-9]+
--version|0|stdout|[0-9]+\.[0-9]+
--no-such-option|64|stderr|^sp-unwind: 
-Z|64|stderr|^sp-unwind: 
EOF
	((bad == 0)) || fail "$bad option cases failed"
}

@test "sp-unwind: the end-of-run report counts how stacks ended" {
	need_perf_events
	build_workloads
	# 2 s of CPU time (WL_CLOCK=cpu), all recorded: about 2000 samples
	WL_CLOCK=cpu start_target --go wl-single 2
	record_released "$T/single.raw" -F 999
	assert_success
	unwind_report "$T/single.raw"
	((SAMPLES >= 500)) || fail "only $SAMPLES samples in 2 s of CPU time at 999 Hz"
	((COMPLETE * 100 >= SAMPLES * 95)) ||
		fail "only $COMPLETE of $SAMPLES samples unwound to the root"
	# three leaves, a handful of stacks besides (the clock check)
	((STACKS >= 3)) || fail "only $STACKS distinct stacks"
}

@test "sp-unwind: a 1024-byte stack copy truncates a deep stack" {
	need_perf_events
	build_workloads
	WL_CLOCK=cpu start_target --go wl-deep 2 40
	# without stack tails, which would finish it from the live process
	record_released "$T/deep.raw" -F 999 --stack-size 1024 --stack-tail 0
	assert_success
	unwind_report "$T/deep.raw"
	((TRUNCATED * 100 >= SAMPLES * 90)) ||
		fail "only $TRUNCATED of $SAMPLES samples truncated: ${stderr_lines[-1]}"
	((SPLICED == 0)) || fail "spliced stacks without tails: ${stderr_lines[-1]}"

	# the leaf end of a truncated stack is still right
	sp_replay "$T/deep.raw" "$T/deep.folded"
	assert_pipeline_ok "$T/deep.folded"
	assert_share "$T/deep.folded" 'descend;descend;deep_leaf(;|$)' 90
}

@test "a stack deeper than its copy ends [truncated] under its frames, counted in every summary" {
	need_perf_events
	build_workloads
	WL_CLOCK=cpu start_target --go wl-deep 2 40
	# without stack tails, which would finish it from the live process
	record_released "$T/deep.raw" -F 999 --stack-size 2048 --stack-tail 0
	assert_success
	unwind_report "$T/deep.raw"
	((TRUNCATED * 100 >= SAMPLES * 90)) ||
		fail "only $TRUNCATED of $SAMPLES samples truncated: ${stderr_lines[-1]}"
	((COMPLETE + TRUNCATED + NOINFO + ERROR == SAMPLES)) ||
		fail "ends do not add up to the samples: ${stderr_lines[-1]}"

	run_io "$SP_SYMBOLIZE" "$T/out.unw" "$T/deep.sym"
	assert_success
	# every stack line says how it ended; a cut one ends in a synthetic frame
	awk -F'\t' '
		$1 == "stack" { want = $4; end = $5; n = 0 }
		$1 == "frame" && ++n == want {
			cut = end != "complete" && end != "noregs"
			if (cut != ($5 == "synthetic")) bad++
			if (end == "truncated" && $9 != "[truncated]") bad++
		}
		END { exit bad > 0 }' "$T/deep.sym" ||
		fail "a stack's last frame does not say how it ended"
	grep -q "^summary.*	truncated=$TRUNCATED	" "$T/deep.sym" ||
		fail "symbolized summary does not count $TRUNCATED truncated: $(tail -1 "$T/deep.sym")"

	run_io "$SP_FOLD" "$T/deep.sym" "$T/deep.folded"
	assert_success
	# drawn under [truncated], never as a tower of its own
	assert_share "$T/deep.folded" '^wl-deep;\[truncated\];descend;' 90
	if grep -q '^wl-deep;descend' "$T/deep.folded"; then
		fail "a cut stack starts at descend: $(grep -m1 '^wl-deep;descend' "$T/deep.folded")"
	fi
	run "$SP_FOLD" --top 5 "$T/deep.sym"
	assert_success
	[[ $output =~ $'\n'\ *$TRUNCATED\ +[0-9.]+%\ \ truncated ]] ||
		fail "--top does not count $TRUNCATED truncated samples: $output"
}

@test "sp-unwind: a 16 KiB stack copy unwinds the same deep stack to the root" {
	need_perf_events
	build_workloads
	WL_CLOCK=cpu start_target --go wl-deep 2 40
	record_released "$T/deep.raw" -F 999 --stack-size 16384
	assert_success
	unwind_report "$T/deep.raw"
	((COMPLETE * 100 >= SAMPLES * 95)) ||
		fail "only $COMPLETE of $SAMPLES samples unwound to the root: ${stderr_lines[-1]}"
	sp_replay "$T/deep.raw" "$T/deep.folded"
	assert_pipeline_ok "$T/deep.folded"
	# descend(40) .. descend(0): 41 frames (mawk has no {41})
	chain=$(printf 'descend;%.0s' {1..41})
	assert_share "$T/deep.folded" "(^|;)main;run;${chain}deep_leaf(;|\$)" 90
}

# sp-unwind/nosigmask.c makes libunwind's signal blocking a no-op.  That is
# right only while the program catches no signal, and only in the tools
# that unwind, sp-unwind and sp-fold (given a raw stream): check that they
# export their sigprocmask (so libunwind binds to it), that nothing else
# built here defines one, and that each, paused after it has unwound a
# recording, has no signal handler installed.
@test "sp-unwind: its no-op sigprocmask stays its own, and it catches no signal" {
	local f pid w i nr fd cgt st held
	for f in "$SP_UNWIND" "$SP_FOLD"; do
		readelf -W --dyn-syms "$f" |
			awk '$8 ~ /^sigprocmask(@|$)/ && $7 != "UND" { f = 1 } END { exit !f }' ||
			fail "$f exports no sigprocmask: libunwind blocks signals twice a frame"
	done
	for f in "$SP_RECORD" "$SP_SYMBOLIZE" "$SP_BIN/sp-spool/sp-spool" \
		"$SP_BIN/lib/libstackpulse.a" "$SP_BIN/lib/libstackpulse.so"; do
		[[ -e $f ]] || fail "$f is not built"
		! nm -g --defined-only "$f" 2>/dev/null | grep -qw sigprocmask ||
			fail "$f defines sigprocmask: only sp-unwind and sp-fold may (sp-unwind/nosigmask.c)"
	done

	need_perf_events
	build_workloads
	start_target wl-single 8
	run sp_record -p "$TARGET_PID" -d 1 -F 999 -o "$T/single.raw"
	assert_success
	mkfifo "$T/in"
	# the sanitizers' own handlers for faults are not sp-unwind's
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0 \
		"$SP_UNWIND" -q -o "$T/out.unw" <"$T/in" 3>&- &
	pid=$!
	exec {w}>"$T/in"
	cat "$T/single.raw" >&"$w"
	# all is written: once sp-unwind blocks in read(0), it has read it all
	for ((i = 0; i < 3000; i++)); do
		read -r nr fd _ <"/proc/$pid/syscall" 2>/dev/null &&
			[[ $nr == 0 && $fd == 0x0 ]] && break
		sleep 0.01
	done
	cgt=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$pid/status")
	exec {w}>&-
	wait "$pid" && st=0 || st=$?
	((st == 0)) || fail "sp-unwind exited $st"
	((i < 3000)) || fail "sp-unwind did not wait for more input within 30 s"
	[[ -s $T/out.unw ]] || fail "sp-unwind wrote nothing"
	# but glibc's own 32 and 33 (thread cancellation, set*id across
	# threads), which a program gets with its first thread and which
	# only pthread_cancel and setuid send
	((16#$cgt & ~16#180000000)) &&
		fail "sp-unwind catches signals (SigCgt $cgt): libunwind's signal blocking, a no-op in sp-unwind/nosigmask.c, would be needed"

	# sp-fold opens its output once it has unwound and folded all of it:
	# a FIFO with no reader holds it there, in openat(2) (257), which
	# lasts for as long as no open of a file it reads does
	mkfifo "$T/fold.out"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0 \
		"$SP_FOLD" --cache-dir "$T/cache" -o "$T/fold.out" "$T/single.raw" 3>&- &
	pid=$!
	held=0
	for ((i = 0; i < 3000 && held < 5; i++)); do
		read -r nr _ <"/proc/$pid/syscall" 2>/dev/null || nr=
		[[ $nr == 257 ]] && held=$((held + 1)) || held=0
		sleep 0.01
	done
	cgt=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$pid/status")
	cat "$T/fold.out" >"$T/fold.folded"
	wait "$pid" && st=0 || st=$?
	((st == 0)) || fail "sp-fold exited $st"
	((held >= 5)) || fail "sp-fold did not open its output within 30 s"
	grep -q "main;run;" "$T/fold.folded" || fail "sp-fold folded no stack of the target"
	((16#$cgt & ~16#180000000)) &&
		fail "sp-fold catches signals (SigCgt $cgt): libunwind's signal blocking, a no-op in sp-unwind/nosigmask.c, would be needed"
	true
}
