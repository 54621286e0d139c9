#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sp-symbolize.bats: unwound streams built byte by byte (by a perl helper
# below, following lib/format/records.h and lib/format/unwound.h) turned into the
# symbolized text stream of docs/streams.md; options; bad input.

load common

setup_file() {
	D=$BATS_FILE_TMPDIR
	# a program whose functions have known addresses: not PIE, bias 0
	printf '%s\n' 'int __attribute__((noinline)) leaf_fn(int x) { return x * 3; }' \
		'int main(int c, char **v) { return leaf_fn(c); }' >"$D/prog.c"
	"${WL_CC:-cc}" -no-pie -O0 -o "$D/prog" "$D/prog.c"
	printf '%s\n' 'ffffffff81000000 T _stext' 'ffffffff81001000 T do_syscall_64' \
		'ffffffff81002000 d some_data' $'ffffffffc0000000 t ext4_read\t[ext4]' \
		>"$D/kallsyms"
	mkdir -p "$D/maps"
	printf '7f0000001000 100 py::hot:<stdin>\n' >"$D/maps/perf-100.map"
}

setup() {
	[[ -x $SP_SYMBOLIZE ]] || fail "sp-symbolize is not built at $SP_SYMBOLIZE: run make"
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
}

# mkstream OUT: the stream described on stdin (see mkstream.pl's keywords).
mkstream() {
	perl "$BATS_TEST_DIRNAME/mkstream.pl" >"$1"
}

# nm_addr NAME: the address of NAME in the test program, as 0x hex.
nm_addr() {
	command -v nm >/dev/null || skip "needs nm (binutils)"
	printf '0x%x' "0x$(nm "$D/prog" | awk -v n="$1" '$3 == n { print $1 }')"
}

symbolize() {
	run --separate-stderr "$SP_SYMBOLIZE" --kallsyms "$D/kallsyms" \
		--perf-map-dir "$D/maps" "$@"
}

@test "sp-symbolize: options and their exit statuses" {
	local bad=0 args want where re text
	while IFS='|' read -r args want where re; do
		# shellcheck disable=SC2086
		run --separate-stderr "$SP_SYMBOLIZE" $args </dev/null
		text=$output
		[[ $where == stderr ]] && text=$stderr
		if ((status != want)); then
			echo "# sp-symbolize $args: exit $status, want $want ($stderr)"
		elif ! [[ $text =~ $re ]]; then
			echo "# sp-symbolize $args: $where does not match /$re/: $text"
		else
			continue
		fi
		bad=$((bad + 1))
	done <<'EOF_CASES'
-h|0|stdout|^usage: sp-symbolize .*Exit status
--help|0|stdout|--perf-map-dir DIR
-V|0|stdout|^sp-symbolize [0-9]+\.[0-9]+
--bogus|64|stderr|try 'sp-symbolize --help'
-o|64|stderr|^sp-symbolize: option .-o. needs a value
a b|64|stderr|^sp-symbolize: too many arguments
/nonexistent/in.unw|2|stderr|^sp-symbolize: cannot open '/nonexistent/in.unw': No such file
EOF_CASES
	((bad == 0)) || fail "$bad option cases failed"
}

@test "sp-symbolize: map lines of executable mappings, and of what a fork inherits" {
	mkstream "$T/in.unw" <<EOF_IN
header cpu-clock freq 99
comm 100 100 prog exec
mmap 100 0x400000 0x10000 0 5 $D/prog 0a0b0c
mmap 100 0x600000 0x1000 0 3 /data
fork 200 100 200 100
fork 100 100 101 100
summary 0 0
EOF_IN
	symbolize -o "$T/out" "$T/in.unw"
	assert_success
	tab=$'\t'
	# the data mapping (not executable) and the thread get none
	grep '^map' "$T/out" | cut -f3- >"$T/maps"
	assert_equal "$(cat "$T/maps")" "100${tab}0x400000${tab}0x410000${tab}0x0${tab}0a0b0c${tab}$D/prog
200${tab}0x400000${tab}0x410000${tab}0x0${tab}0a0b0c${tab}$D/prog"
}

@test "sp-symbolize: a gone line for each process and thread it lets go, after its last line, before its pid's next process" {
	mkstream "$T/in.unw" <<EOF_IN
header cpu-clock freq 99
comm 100 100 prog exec
mmap 100 0x400000 0x10000 0 5 $D/prog
fork 200 100 200 100 10
stack 200 1 complete - 0x401000
sample 20 200 200 1
fork 200 200 201 200 30
exit 200 200 201 200 40
exit 200 100 200 100 50
fork 300 100 300 100 60
exit 300 100 300 100 70
fork 300 100 300 100 80
stack 300 1 complete - 0x401000
sample 90 300 300 1
fork 400 100 400 100 1000000051
stack 100 1 complete - 0x401000
sample 1000000060 100 100 1
summary 3 0
EOF_IN
	symbolize -o "$T/out" "$T/in.unw"
	[[ $status == 0 ]] || fail "exit $status: $stderr"
	# 200's thread 201 went at its exit; 200 ended at 50 and went a second
	# later; 300's pid was given to a new process at once; 100 and the new
	# 300 live on
	run grep '^gone' "$T/out"
	assert_output $'gone\t40\t200\t201\ngone\t80\t300\ngone\t1000000051\t200'
	# after a gone line no stack, frame or sample of its pid until a new
	# process has it (its comm and map lines, at its fork)
	awk -F'\t' '$1 == "gone" && NF == 3 { g[$3] = 1; next }
		$1 == "gone" { next }
		$1 == "comm" || $1 == "map" { delete g[$3]; next }
		($1 == "sample" ? $3 : $2) in g { print "after gone: " $0; bad = 1 }
		END { exit bad }' "$T/out" || fail "$(cat "$T/out")"
	grep -n $'^map\t80\t300\t' "$T/out" | cut -d: -f1 >"$T/map300"
	[[ $(grep -n $'^gone\t80\t300$' "$T/out" | cut -d: -f1) -lt $(cat "$T/map300") ]] ||
		fail "the new 300's map line came before the old one's gone line: $(cat "$T/out")"
	# a reader that keeps nothing per process folds it alike without them
	"$SP_FOLD" --pid <"$T/out" >"$T/with"
	grep -v '^gone' "$T/out" | "$SP_FOLD" --pid >"$T/without"
	cmp "$T/with" "$T/without" || fail "$(diff "$T/with" "$T/without")"
	assert_equal "$(wc -l <"$T/with")" 3
}

@test "sp-symbolize names ELF, kernel, perf-map and unmapped frames" {
	local leaf main start
	leaf=$(nm_addr leaf_fn) main=$(nm_addr main) start=$(nm_addr _start)
	mkstream "$T/in.unw" <<EOF_IN
header cpu-clock freq 99
comm 100 100 prog exec
fork 100 100 101 100
mmap 100 0x400000 0x10000 0 5 $D/prog
stack 100 1 truncated 0xffffffff81001010,0xffffffffc0000010 $((leaf + 2)),$((main + 8)),$((start + 4)),0x7f0000001010,0x12345 10000
sample 11 100 100 1
sample 12 100 101 1
stack 100 2 noregs 0x10 -
sample 13 100 101 2
lost 7
summary 3 2
EOF_IN
	tab=$'\t'
	sed "s/ *| */$tab/g" >"$T/want" <<EOF_WANT
# stackpulse symbolized 1
event | cpu-clock | freq | 99
start | 0 | 0
comm | 1 | 100 | 100 | prog | exec
comm | 2 | 100 | 101 | prog | -
map | 1 | 100 | 0x400000 | 0x410000 | 0x0 | - | $D/prog
stack | 100 | 1 | 8 | truncated | -
frame | 100 | 1 | 0 | kernel | kallsyms | - | 0xffffffff81001010 | do_syscall_64 | [kernel] | - | -
frame | 100 | 1 | 1 | kernel | kallsyms | - | 0xffffffffc0000010 | ext4_read | [ext4] | - | -
frame | 100 | 1 | 2 | native | symtab | - | $(printf 0x%x $((leaf + 2))) | leaf_fn | $D/prog | - | -
frame | 100 | 1 | 3 | native | symtab | - | $(printf 0x%x $((main + 8))) | main | $D/prog | - | -
frame | 100 | 1 | 4 | native | symtab | hidden | $(printf 0x%x $((start + 4))) | _start | $D/prog | - | -
frame | 100 | 1 | 5 | jit | perf-map | - | 0x7f0000001010 | py::hot:<stdin> | - | - | -
frame | 100 | 1 | 6 | unknown | none | - | 0x12345 | [unknown] | - | - | -
frame | 100 | 1 | 7 | synthetic | none | - | 0x0 | [truncated] | - | - | -
sample | 11 | 100 | 100 | 0 | 1000 | 1
sample | 12 | 100 | 101 | 0 | 1000 | 1
stack | 100 | 2 | 1 | noregs | -
frame | 100 | 2 | 0 | kernel | none | - | 0x10 | [kernel] | [kernel] | - | -
sample | 13 | 100 | 101 | 0 | 1000 | 2
lost | 3 | 7
summary | samples=3 | lost=0 | stacks=2 | threads=1 | processes=1 | duration_ns=0 | frames=9 | unresolved=2 | complete=0 | truncated=2 | noinfo=0 | error=0 | depth=0 | noregs=1 | spliced=0 | no_build_id=0
EOF_WANT
	symbolize -o "$T/out" "$T/in.unw"
	assert_success
	[[ -z $stderr ]] || fail "unexpected stderr: $stderr"
	diff -u "$T/want" "$T/out"

	run_io "$SP_FOLD" "$T/out" "$T/folded"
	assert_success
	cat >"$T/want.folded" <<'EOF_WANT'
prog;[truncated];[unknown];py::hot:<stdin>_[j];main;leaf_fn;ext4_read_[k];do_syscall_64_[k] 2
prog;[kernel]_[k] 1
EOF_WANT
	diff -u "$T/want.folded" "$T/folded"
}

@test "sp-symbolize: a version 1 stream's end 0 stays 'root', vouched for by nobody" {
	mkstream "$T/v1.unw" <<'EOF_IN'
header cpu-clock freq 99 1
stack 5 1 root - 0x1000
stack 5 2 truncated - 0x1000
sample 1 5 5 1
sample 2 5 5 2
summary 2 2
EOF_IN
	symbolize -o "$T/v1.sym" "$T/v1.unw"
	assert_success
	grep -qP '^stack\t5\t1\t1\troot\t-$' "$T/v1.sym" ||
		fail "end 0 of a version 1 stream is not 'root': $(grep '^stack' "$T/v1.sym")"
	grep -qP '^stack\t5\t2\t2\ttruncated\t-$' "$T/v1.sym" ||
		fail "no [truncated] frame on a cut stack: $(grep '^stack' "$T/v1.sym")"
	grep -qP '^summary\t.*\tcomplete=0\ttruncated=1\t' "$T/v1.sym" ||
		fail "an unproven end was counted: $(tail -1 "$T/v1.sym")"
}

@test "sp-symbolize without kernel symbols: [kernel] frames, a warning, exit 1" {
	mkstream "$T/in.unw" <<'EOF_IN'
header cpu-clock freq 99
stack 5 1 noregs 0xffffffff81001010 -
sample 1 5 5 1
summary 1 1
EOF_IN
	printf '0000000000000000 T do_syscall_64\n' >"$T/zero"
	run --separate-stderr "$SP_SYMBOLIZE" --kallsyms "$T/zero" "$T/in.unw"
	assert_failure 1
	[[ $stderr =~ ^sp-symbolize:\ no\ kernel\ symbols\ in\ .*1\ kernel\ frames\ are\ \[kernel\]$ ]] ||
		fail "stderr: $stderr"
	assert_line --partial $'kernel\tnone\t-\t0xffffffff81001010\t[kernel]'
}

@test "sp-symbolize stops quietly when its reader goes away" {
	{
		echo 'header cpu-clock freq 99'
		for ((i = 1; i <= 2000; i++)); do
			echo "stack 9 $i root - 0x$((1000 + i))"
		done
		echo 'summary 0 2000'
	} | mkstream "$T/in.unw"
	run bash -c '"$1" "$2" | head -n 1 >/dev/null; echo "status=${PIPESTATUS[0]}"' _ "$SP_SYMBOLIZE" "$T/in.unw"
	assert_output 'status=0'
}

@test "sp-symbolize refuses bad input with the byte and exit 2" {
	local bad=0 name re
	: >"$T/empty"
	printf 'NOTMAGIC\1\0\0\0\130\0\0\0' >"$T/magic"
	printf 'SPRAW\0\0\0\1\0\0\0\20\0\0\0' >"$T/raw"
	printf '# stackpulse symbolized 1\nsummary\tsamples=0\n' >"$T/symbolized"
	mkstream "$T/good" <<'EOF_IN'
header cpu-clock freq 99
comm 5 5 x
stack 5 1 root - 0x1000
sample 1 5 5 1
summary 1 1
EOF_IN
	# header 88 bytes, COMM 48 at 88, STACK 40 at 136, SAMPLE 40 at 176,
	# SUMMARY 120 at 216
	cp "$T/good" "$T/future"
	put_le32 "$T/future" 8 99
	head -c 40 "$T/good" >"$T/short-header"
	head -c 92 "$T/good" >"$T/short-record-header"
	head -c 160 "$T/good" >"$T/short-record"
	cp "$T/good" "$T/lying-size"
	put_le32 "$T/lying-size" 92 $((0xfffff8))
	cp "$T/good" "$T/unaligned"
	put_le32 "$T/unaligned" 92 52
	cp "$T/good" "$T/stack-short"
	put_le32 "$T/stack-short" 140 24
	cp "$T/good" "$T/comm-short"
	put_le32 "$T/comm-short" 92 8
	head -c 216 "$T/good" >"$T/no-summary"
	mkstream "$T/undefined" <<'EOF_IN'
header cpu-clock freq 99
stack 5 1 root - 0x1000
sample 1 5 5 2
summary 1 1
EOF_IN
	mkstream "$T/after" <<'EOF_IN'
header cpu-clock freq 99
summary 0 0
lost 1
EOF_IN
	head -c 4096 /dev/urandom >"$T/random"
	while IFS='|' read -r name re; do
		run --separate-stderr "$SP_SYMBOLIZE" --kallsyms /dev/null <"$T/$name"
		if ((status != 2)); then
			echo "# $name: exit $status, want 2 ($stderr)"
		elif ((${#stderr_lines[@]} != 1)); then
			echo "# $name: want one line on stderr: $stderr"
		elif ! [[ $stderr =~ ^sp-symbolize:\ $re ]]; then
			echo "# $name: stderr does not match /$re/: $stderr"
		elif grep -qE 'AddressSanitizer|runtime error' <<<"$stderr"; then
			echo "# $name: sanitizer report: $stderr"
		else
			continue
		fi
		bad=$((bad + 1))
	done <<'EOF_CASES'
empty|empty input.* at byte 0 of 'stdin'
magic|not a unwound stream \(bad magic\) at byte 0 of 'stdin'
raw|'stdin' is a raw stream: pipe it into sp-unwind
symbolized|'stdin' is a symbolized stream: pipe it into sp-fold
future|unwound stream version 99 .*at byte 8 of 'stdin'
short-header|truncated stream header.* of 'stdin'
short-record-header|truncated record header.* at byte 88 of 'stdin'
short-record|truncated record.* at byte 136 of 'stdin'
lying-size|truncated record.* at byte 88 of 'stdin'
unaligned|bad record size 52.* at byte 88 of 'stdin'
stack-short|STACK frames exceed its record size at byte 136 of 'stdin'
comm-short|COMM record too short at byte 88 of 'stdin'
no-summary|truncated stream: no SUMMARY record at byte 216 of 'stdin'
undefined|SAMPLE of undefined stack 5/2 at byte 128 of 'stdin'
after|record after the SUMMARY record at byte 208 of 'stdin'
random|.*'stdin'
EOF_CASES
	((bad == 0)) || fail "$bad bad-input cases failed"
}
