#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sp-spool.bats: spool files from real recordings: lossless round trips,
# info and verify, several spools as one stream, a writer killed mid-way,
# a full disk, and damaged files (docs/spool.md).

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

SP_SPOOL="$SP_BIN/sp-spool/sp-spool"

setup_file() {
	require_tools
	[[ -x $SP_SPOOL ]] || fail "sp-spool is not built at $SP_SPOOL: run make"
	need_perf_events
	build_workloads
	D=$BATS_FILE_TMPDIR
	# released once sp-record attached: 2 s of CPU time (WL_CLOCK=cpu),
	# recorded to its end: about 2000 samples however loaded the machine
	WL_CLOCK=cpu start_target --go wl-deep 2
	{
		"$SP_RECORD" -p "$TARGET_PID" -F 999 2>"$D/record.err" | tee "$D/s.raw" |
			"$SP_UNWIND" 2>/dev/null | "$SP_SPOOL" write "$D/s.spool" 2>"$D/write.err" ||
			true
	} 3>&- &
	pid=$!
	recording_started "$D/s.raw" "$pid"
	release_target
	wait "$pid" || true
	[[ -s $D/s.raw && -s $D/s.spool ]] ||
		fail "cannot record: $(cat "$D/record.err" "$D/write.err")"
	"$SP_UNWIND" <"$D/s.raw" >"$D/s.unw" 2>/dev/null || true
}

setup() {
	require_tools
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
}

no_sanitizer_report() {
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' <<<"$1"; then
		fail "sanitizer report: $1"
	fi
}

@test "sp-spool: options and their exit statuses" {
	# args | status | where the answer goes | what it must contain
	local bad=0 text
	while IFS='|' read -r args want where re; do
		# shellcheck disable=SC2086
		run --separate-stderr "$SP_SPOOL" $args </dev/null
		text=$output
		[[ $where == stderr ]] && text=$stderr
		if ((status != want)); then
			echo "# sp-spool $args: exit $status, want $want"
		elif ! [[ $text =~ $re ]]; then
			echo "# sp-spool $args: $where does not match /$re/: $text"
		else
			continue
		fi
		bad=$((bad + 1))
	done <<'EOF'
-h|0|stdout|usage: sp-spool write
--help|0|stdout|Exit status: 0 ok, 1 partial
-V|0|stdout|^sp-spool [0-9]+\.[0-9]+
|64|stderr|^sp-spool: missing command
frobnicate x|64|stderr|^sp-spool: unknown command 'frobnicate'
write|64|stderr|^sp-spool: write takes one FILE
write a b|64|stderr|^sp-spool: write takes one FILE
cat|64|stderr|^sp-spool: cat takes one FILE or more
info|64|stderr|^sp-spool: info takes one FILE
verify|64|stderr|^sp-spool: verify takes one FILE or more
write -l 10 x|64|stderr|^sp-spool: invalid level '10': must be 0..9
write -b 12 x|64|stderr|^sp-spool: invalid block size '12'
cat --json x|64|stderr|^sp-spool: --json goes with info
cat -l 6 x|64|stderr|^sp-spool: -l goes with write
info --plain x|64|stderr|^sp-spool: --plain goes with write
verify -q x|64|stderr|^sp-spool: -q goes with write
info -Z x|64|stderr|^sp-spool: unknown option '-Z'
info /nonexistent.spool|2|stderr|^sp-spool: cannot open '/nonexistent.spool': No such file
EOF
	((bad == 0)) || fail "$bad option cases failed"
}

@test "sp-spool: cat gives back the unwound stream byte for byte" {
	run sh -c "'$SP_SPOOL' cat '$D/s.spool' >'$T/back.unw'"
	assert_success
	cmp "$D/s.unw" "$T/back.unw"
}

@test "sp-spool: the spooled recording folds as the live one" {
	"$SP_UNWIND" <"$D/s.raw" 2>/dev/null | "$SP_SYMBOLIZE" 2>/dev/null |
		"$SP_FOLD" >"$T/live.folded"
	"$SP_SPOOL" cat "$D/s.spool" | "$SP_SYMBOLIZE" 2>/dev/null |
		"$SP_FOLD" >"$T/spool.folded"
	[[ -s $T/live.folded ]] || fail "the live pipeline folded nothing"
	diff -u "$T/live.folded" "$T/spool.folded"
	grep -q 'descend;descend' "$T/spool.folded"
}

@test "sp-spool: info prints the counts, and valid JSON with --json" {
	local samples
	run --separate-stderr "$SP_SPOOL" info "$D/s.spool"
	assert_success
	no_sanitizer_report "$stderr"
	for key in 'samples' 'lost events' 'processes' 'threads' 'distinct stacks' \
		'time span' 'file size' 'bytes per sample' 'compression ratio'; do
		[[ $output == *"$key:"* ]] || fail "no '$key' in: $output"
	done
	samples=$(sed -n 's/^samples: *//p' <<<"$output")
	((samples >= 500)) || fail "only $samples samples in 2 s of CPU time at 999 Hz"
	run --separate-stderr "$SP_SPOOL" info --json "$D/s.spool"
	assert_success
	python3 -m json.tool <<<"$output" >/dev/null || fail "not JSON: $output"
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])
for k in ("samples", "lost", "processes", "threads", "stacks", "span_ns",
          "file_size", "bytes_per_sample", "compression_ratio"):
    assert k in d, k
assert d["samples"] == int(sys.argv[2]), d
assert d["complete"] is True
assert d["compression_ratio"] > 1
' "$output" "$samples"
}

@test "sp-spool: verify passes a good spool" {
	run --separate-stderr "$SP_SPOOL" verify "$D/s.spool"
	assert_success
	assert_output --regexp "s.spool: ok: [0-9]+ blocks, [0-9]+ records, [0-9]+ samples"
}

@test "sp-spool: two spools are one stream with the samples of both" {
	local one two
	"$SP_SPOOL" write -q "$T/b.spool" <"$D/s.unw"
	"$SP_SPOOL" cat "$D/s.spool" | "$SP_SYMBOLIZE" 2>/dev/null |
		"$SP_FOLD" >"$T/one.folded"
	run sh -c "'$SP_SPOOL' cat '$D/s.spool' '$T/b.spool' | '$SP_SYMBOLIZE' | '$SP_FOLD' >'$T/two.folded'"
	assert_success
	no_sanitizer_report "$output"
	one=$(fold_count "$T/one.folded")
	two=$(fold_count "$T/two.folded")
	((one > 0 && two == 2 * one)) || fail "one spool $one samples, two spools $two"
}

@test "sp-spool: a writer killed with SIGKILL leaves a spool cut after its last block" {
	need_perf_events
	build_workloads
	start_target wl-deep 120
	# sp-unwind writes 256 KiB at a time: sample fast enough to fill that;
	# killed once a block follows the spool's header (128 bytes)
	"$SP_RECORD" -p "$TARGET_PID" -d 120 -F 9999 2>/dev/null 3>&- |
		"$SP_UNWIND" -q 2>/dev/null 3>&- |
		"$SP_SPOOL" write "$T/k.spool" 2>/dev/null 3>&- &
	local spool=$!
	wait_until 60 "sp-spool to write a block" file_has "$T/k.spool" 129
	kill -KILL "$spool"
	wait "$spool" || true
	for cmd in info verify; do
		run --separate-stderr "$SP_SPOOL" "$cmd" "$T/k.spool"
		((status == 1)) || fail "$cmd exited $status: $stderr"
		[[ ${stderr_lines[-1]} =~ ^sp-spool:\ \'.*k.spool\'\ is\ cut\ at\ byte\ [0-9]+\ after ]] ||
			fail "$cmd: no cut message: $stderr"
	done
	run sh -c "'$SP_SPOOL' cat '$T/k.spool' >'$T/k.unw'"
	((status == 1)) || fail "cat exited $status: $output"
	assert_output --partial "is cut at byte"
	run sh -c "'$SP_SYMBOLIZE' <'$T/k.unw' >/dev/null"
	((status <= 1)) || fail "the cut spool's stream does not symbolize: $output"

	# a pause in the input (the fifo stays open, nothing more comes):
	# after a second of quiet what came before it is written in blocks
	mkfifo "$T/in"
	"$SP_SPOOL" write "$T/p.spool" <"$T/in" 2>/dev/null 3>&- &
	spool=$!
	exec 5>"$T/in"
	head -c 60000 "$D/s.unw" >&5
	wait_until 30 "sp-spool to write what came before the pause" \
		file_has "$T/p.spool" 129
	kill -KILL "$spool"
	wait "$spool" || true
	exec 5>&-
	run sh -c "'$SP_SPOOL' cat '$T/p.spool' | '$SP_SYMBOLIZE' | '$SP_FOLD' >'$T/p.folded'"
	assert_output --partial "is cut at byte"
	(($(fold_count "$T/p.folded") > 100)) || fail "the samples before the kill are lost"
}

@test "sp-spool: a full disk is an error, not a short file" {
	run --separate-stderr sh -c "exec '$SP_SPOOL' write /dev/full <'$D/s.unw'"
	assert_equal "$status" 2
	assert_equal "${#stderr_lines[@]}" 1
	[[ $stderr == "sp-spool: cannot write '/dev/full': No space left on device" ]] ||
		fail "unexpected message: $stderr"
}

@test "sp-spool: write refuses the raw stream and names the stage it lacks" {
	run --separate-stderr sh -c "exec '$SP_SPOOL' write '$T/r.spool' <'$D/s.raw'"
	assert_equal "$status" 2
	assert_equal "$stderr" "sp-spool: 'stdin' is a raw stream: pipe it into sp-unwind first"
}

@test "sp-spool: damaged spools: one line, the byte and block, exit 2 (1 when cut)" {
	local good=$D/s.spool size b0=128 zsize cmd bad=0 name w_info w_cat w_verify want re
	size=$(stat -c %s "$good")
	zsize=$(le32 "$good" $((b0 + 28)))

	: >"$T/empty"
	head -c 70000 /dev/urandom >"$T/random"
	cp "$good" "$T/version99" && put_le32 "$T/version99" 8 99
	cp "$good" "$T/hsize" && put_le32 "$T/hsize" 12 7
	head -c 60 "$good" >"$T/short-header"
	cp "$good" "$T/header-crc" && put_le32 "$T/header-crc" 40 12345
	head -c $((b0 + 30)) "$good" >"$T/short-block-header"
	head -c $((b0 + 56 + zsize / 2)) "$good" >"$T/short-block"
	head -c $((size - 30)) "$good" >"$T/short-trailer"
	cp "$good" "$T/flip" &&
		printf '\x5a' | dd of="$T/flip" bs=1 seek=$((b0 + 56 + 7)) conv=notrunc status=none
	cp "$good" "$T/lying-size" && put_le32 "$T/lying-size" $((b0 + 28)) 999999
	cp "$good" "$T/lying-trailer" && put_le32 "$T/lying-trailer" $((size - 16)) 64

	# file | exit status of info | of cat | of verify | ERE for the one stderr line;
	# info reads the trailer, not the blocks: damage inside them is verify's
	while IFS='|' read -r name w_info w_cat w_verify re; do
		for cmd in info cat verify; do
			want=w_$cmd
			want=${!want}
			run --separate-stderr sh -c "exec '$SP_SPOOL' $cmd '$T/$name' >/dev/null"
			no_sanitizer_report "$stderr"
			if ((status != want)); then
				echo "# $cmd $name: exit $status, want $want: $stderr"
			elif ((status == 0)); then
				continue
			elif ((${#stderr_lines[@]} != 1)); then
				echo "# $cmd $name: ${#stderr_lines[@]} lines on stderr: $stderr"
			elif ! [[ $stderr =~ ^sp-spool:\ $re ]]; then
				echo "# $cmd $name: /$re/ does not match: $stderr"
			else
				continue
			fi
			bad=$((bad + 1))
		done
	done <<EOF
empty|2|2|2|empty file, expected a spool at byte 0 of
random|2|2|2|not a spool \(bad magic\) at byte 0 of
version99|2|2|2|spool version 99 is not supported .* at byte 8 of
hsize|2|2|2|bad spool header size 7.* at byte 12 of
short-header|2|2|2|truncated spool header: need 128 bytes, have 60
header-crc|2|2|2|bad spool header checksum at byte 0 of
short-block-header|1|1|1|'.*short-block-header' is cut at byte 128 after the header: the file ends inside the header of block 0
short-block|1|1|1|'.*short-block' is cut at byte 128 after the header: the file ends inside block 0
short-trailer|1|1|1|'.*short-trailer' is cut at byte [0-9]+ after block [0-9]+: the file ends inside the trailer
flip|0|2|2|bad checksum in block 0 at byte 128 of
lying-size|0|2|2|bad header checksum in block 0 at byte 128 of
lying-trailer|2|2|2|bad trailer size at byte [0-9]+ of
EOF
	run --separate-stderr sh -c "exec '$SP_SPOOL' info '$D/s.unw'"
	assert_equal "$status" 2
	[[ $stderr =~ "is an unwound stream, not a spool" ]] || fail "$stderr"
	((bad == 0)) || fail "$bad damaged-file cases failed"
}
