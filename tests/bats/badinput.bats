#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# badinput.bats: every stage meets damaged, foreign and hostile input with
# one line on stderr that names the tool and the stream ('stdin') and, for
# binary damage, the byte where it is; exit status 2; never a crash or a
# sanitizer report.
#
# The streams are cut from one short real recording made in setup_file:
# raw (sp-record), unwound (sp-unwind of it), symbolized (sp-symbolize of
# that).  Binary offsets follow lib/base/stream.h: the stream header's size is
# the u32 at byte 12, a record is {u32 type, u32 size, payload}.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

setup_file() {
	require_tools
	need_perf_events
	build_workloads
	D=$BATS_FILE_TMPDIR
	# 1 s of CPU time (WL_CLOCK=cpu), all recorded: about 500 samples
	WL_CLOCK=cpu start_target --go wl-single 1
	record_released "$D/good.raw" -F 499
	[[ -s $D/good.raw ]] || fail "cannot record: $stderr"
	"$SP_UNWIND" <"$D/good.raw" >"$D/good.unw" 2>/dev/null || true
	"$SP_SYMBOLIZE" <"$D/good.unw" >"$D/good.sym" 2>/dev/null || true
	[[ -s $D/good.unw && -s $D/good.sym ]] ||
		fail "cannot make the unwound and symbolized streams"
}

setup() {
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
}

# Damaged copies of the binary stream GOOD, written to $T/NAME; each is
# announced as "NAME|EXPECTED-ERE" on stdout for check_cases.  An expected
# ERE is matched against the one stderr line after the "tool: " prefix.
make_binary_cases() {
	local good=$1 kind=$2 hsize rsize sample

	hsize=$(le32 "$good" 12)
	rsize=$(le32 "$good" $((hsize + 4)))

	cp "$good" "$T/version99"
	put_le32 "$T/version99" 8 99
	echo "version99|version 99 .*at byte 8 of 'stdin'"

	head -c 12 "$good" >"$T/short-fixed-header"
	echo "short-fixed-header|truncated.* at byte 12 of 'stdin'"

	head -c $((hsize - 8)) "$good" >"$T/short-header"
	echo "short-header|truncated.* at byte $((hsize - 8)) of 'stdin'"

	head -c $((hsize + 4)) "$good" >"$T/short-record-header"
	echo "short-record-header|truncated record.* at byte $hsize of 'stdin'"

	head -c $((hsize + rsize / 2 + 4)) "$good" >"$T/short-record"
	echo "short-record|truncated record.* at byte $hsize of 'stdin'"

	cp "$good" "$T/size-unaligned"
	put_le32 "$T/size-unaligned" $((hsize + 4)) $((rsize + 4))
	echo "size-unaligned|size.* at byte $hsize of 'stdin'"

	cp "$good" "$T/size-huge"
	put_le32 "$T/size-huge" $((hsize + 4)) $((0xfffff8))
	echo "size-huge|at byte $hsize of 'stdin'"

	cp "$good" "$T/size-zero"
	put_le32 "$T/size-zero" $((hsize + 4)) 0
	echo "size-zero|size.* at byte $hsize of 'stdin'"

	# a record that claims only its fixed part: what it carries overflows
	# it (the filename of an MMAP, the parts of a SAMPLE or STACK)
	cp "$good" "$T/size-short"
	put_le32 "$T/size-short" $((hsize + 4)) 8
	echo "size-short|at byte $hsize of 'stdin'"

	if [[ $kind == raw ]]; then
		sample=$(first_record "$good" 1) || fail "no SAMPLE in $good"
		cp "$good" "$T/sample-short"
		put_le32 "$T/sample-short" $((sample + 4)) 56
		echo "sample-short|at byte $sample of 'stdin'"
	else
		sample=$(first_record "$good" 9) || fail "no STACK in $good"
		cp "$good" "$T/stack-short"
		put_le32 "$T/stack-short" $((sample + 4)) 24
		echo "stack-short|at byte $sample of 'stdin'"
	fi
}

# Inputs every stage must refuse, whatever it reads; binary readers also
# say that the damage is at byte 0.
make_common_cases() {
	local at="'stdin'"
	[[ $1 == binary ]] && at=" at byte 0 of 'stdin'"

	: >"$T/empty"
	echo "empty|empty input.*$at"

	printf 'NOTASTRM%0120d' 0 >"$T/bad-magic"
	echo "bad-magic|$at"

	head -c 65536 /dev/urandom >"$T/random"
	echo "random|$at"
}

# check_cases TOOL < "NAME|ERE" lines: run TOOL on each $T/NAME as stdin and
# report every case that breaks the contract, then fail if any did.
check_cases() {
	local tool=$1 name re bad=0 line
	while IFS='|' read -r name re; do
		run_io "$tool" "$T/$name" "$T/$name.out"
		line=${stderr_lines[0]:-}
		if ((status != 2)); then
			echo "# $name: exit $status, want 2: $stderr"
		elif ((${#stderr_lines[@]} != 1)); then
			echo "# $name: ${#stderr_lines[@]} lines on stderr, want 1:"
			printf '#   %s\n' "${stderr_lines[@]}"
		elif [[ $stderr == *Sanitizer* || $stderr == *"runtime error"* ]]; then
			echo "# $name: sanitizer report: $stderr"
		elif [[ $line != "$(basename "$tool"): "* ]]; then
			echo "# $name: does not start with the tool name: $line"
		elif [[ $line != *"'stdin'"* ]]; then
			echo "# $name: does not name 'stdin': $line"
		elif ! [[ ${line#*: } =~ $re ]]; then
			echo "# $name: does not match /$re/: $line"
		else
			continue
		fi
		bad=$((bad + 1))
	done
	((bad == 0)) || fail "$bad bad-input cases broke the contract"
}

@test "sp-unwind refuses damaged, foreign and random input" {
	{
		make_common_cases binary
		make_binary_cases "$D/good.raw" raw
		cp "$D/good.unw" "$T/unwound"
		echo "unwound|'stdin' is an unwound stream: pipe it into sp-symbolize"
		cp "$D/good.sym" "$T/symbolized"
		echo "symbolized|'stdin' is a symbolized stream: pipe it into sp-fold"
	} >"$T/cases"
	check_cases "$SP_UNWIND" <"$T/cases"
}

# A raw stream with stack tails (TAIL records, type 13: lib/format/tail.h;
# start at byte 24, len at 32, kept at 36), damaged in each of its checks.
@test "sp-unwind refuses damaged TAIL records" {
	local tail tail2 len size
	# a stack of 125 KB, a copy of 8 KiB: every sample has a tail
	WL_CLOCK=cpu start_target --go wl-tail 0.3
	record_released "$T/tail.raw" -F 499 --stack-size 8192
	[[ -s $T/tail.raw ]] || fail "cannot record: $stderr"
	tail=$(first_record "$T/tail.raw" 13) || fail "no TAIL record: $stderr"
	len=$(le32 "$T/tail.raw" $((tail + 32)))
	# the next TAIL record
	size=$(stat -c %s "$T/tail.raw")
	tail2=$((tail + $(le32 "$T/tail.raw" $((tail + 4)))))
	while ((tail2 + 8 <= size)) && (($(le32 "$T/tail.raw" "$tail2") != 13)); do
		tail2=$((tail2 + $(le32 "$T/tail.raw" $((tail2 + 4)))))
	done
	((tail2 + 40 <= size)) || fail "a single TAIL record"
	{
		cp "$T/tail.raw" "$T/tail-short"
		put_le32 "$T/tail-short" $((tail + 4)) 32
		echo "tail-short|TAIL record too short at byte $tail of 'stdin'"

		cp "$T/tail.raw" "$T/tail-kept-over"
		put_le32 "$T/tail-kept-over" $((tail + 36)) $((len + 8))
		echo "tail-kept-over|TAIL keeps more bytes than it has at byte $tail of 'stdin'"

		cp "$T/tail.raw" "$T/tail-long"
		put_le32 "$T/tail-long" $((tail + 32)) $((0x1000008))
		echo "tail-long|TAIL longer than 16 MiB at byte $tail of 'stdin'"

		cp "$T/tail.raw" "$T/tail-wrap"
		put_le32 "$T/tail-wrap" $((tail + 24)) $((0xffffff00))
		put_le32 "$T/tail-wrap" $((tail + 28)) $((0xffffffff))
		echo "tail-wrap|TAIL range wraps at byte $tail of 'stdin'"

		cp "$T/tail.raw" "$T/tail-bytes"
		put_le32 "$T/tail-bytes" $((tail + 32)) $((len + 4096))
		echo "tail-bytes|TAIL bytes exceed its record size at byte $tail of 'stdin'"

		# the first tail of a thread keeps bytes of none before it
		cp "$T/tail.raw" "$T/tail-kept-none"
		put_le32 "$T/tail-kept-none" $((tail + 36)) "$len"
		echo "tail-kept-none|TAIL keeps bytes its thread's previous tail does not hold at byte $tail of 'stdin'"

		# the next one moved 4 GiB up: its kept bytes are not the first's
		cp "$T/tail.raw" "$T/tail-kept-moved"
		put_le32 "$T/tail-kept-moved" $((tail2 + 28)) \
			$(($(le32 "$T/tail.raw" $((tail2 + 28))) + 1))
		echo "tail-kept-moved|TAIL keeps bytes its thread's previous tail does not hold at byte $tail2 of 'stdin'"
	} >"$T/cases"
	(($(le32 "$T/tail.raw" $((tail2 + 36))) > 0)) ||
		fail "the second TAIL keeps nothing of the first"
	check_cases "$SP_UNWIND" <"$T/cases"
	# undamaged, it unwinds, and no TAIL goes on
	run_io "$SP_UNWIND" "$T/tail.raw" "$T/tail.unw"
	((status <= 1)) || fail "sp-unwind: exit $status: $stderr"
	assert_equal "$(raw_count "$T/tail.unw" 13) TAIL records" "0 TAIL records"
}

@test "sp-symbolize refuses damaged, foreign and random input" {
	{
		make_common_cases binary
		make_binary_cases "$D/good.unw" unwound
		cp "$D/good.raw" "$T/raw"
		echo "raw|'stdin' is a raw stream: pipe it into sp-unwind"
		cp "$D/good.sym" "$T/symbolized"
		echo "symbolized|'stdin' is a symbolized stream: pipe it into sp-fold"
	} >"$T/cases"
	check_cases "$SP_SYMBOLIZE" <"$T/cases"
}

@test "sp-fold refuses damaged, foreign and random input" {
	{
		make_common_cases text
		# the symbolized header's first line carries its version: make
		# it 99 (the first number 1 standing alone on that line)
		sed -E '1s/(^|[^0-9.])1([^0-9.]|$)/\199\2/' "$D/good.sym" >"$T/version99"
		if cmp -s "$D/good.sym" "$T/version99"; then
			fail "no version 1 on the first line of the symbolized stream: $(head -1 "$D/good.sym")"
		fi
		echo "version99|version 99"
	} >"$T/cases"
	check_cases "$SP_FOLD" <"$T/cases"
}

# sp-fold given a raw or unwound stream in a file (here its standard input)
# unwinds and names it itself: damaged ones are told as by sp-unwind and
# sp-symbolize.
@test "sp-fold refuses damaged raw and unwound input as sp-unwind and sp-symbolize do" {
	make_binary_cases "$D/good.raw" raw >"$T/cases"
	check_cases "$SP_FOLD" <"$T/cases"
	make_binary_cases "$D/good.unw" unwound >"$T/cases"
	check_cases "$SP_FOLD" <"$T/cases"
}

@test "the good streams themselves pass each stage" {
	run_io "$SP_UNWIND" "$D/good.raw" "$T/u"
	[[ $status -le 1 ]] || fail "sp-unwind: exit $status: $stderr"
	run_io "$SP_SYMBOLIZE" "$D/good.unw" "$T/s"
	[[ $status -le 1 ]] || fail "sp-symbolize: exit $status: $stderr"
	run_io "$SP_FOLD" "$D/good.sym" "$T/f"
	assert_success
	[[ -s $T/f ]] || fail "sp-fold printed nothing for a real recording"
}
