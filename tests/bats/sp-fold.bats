#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sp-fold.bats: folding hand-written symbolized streams (docs/streams.md)
# into flamegraph.pl's folded lines, its options, and the input it refuses.

load common

setup() {
	[[ -x $SP_FOLD ]] || fail "sp-fold is not built at $SP_FOLD: run make"
	T=$BATS_TEST_TMPDIR
	# Two processes named alike, a thread, a hidden start frame, a kernel
	# and a JIT frame, names flamegraph.pl would misread, and a sample of a
	# thread whose stack had no user frames.
	tab=$'\t'
	sed "s/ *| */$tab/g" >"$T/in.sym" <<'EOF_SYM'
# stackpulse symbolized 1
event | cpu-clock | freq | 99
comm | 0 | 10 | 10 | my prog | exec
comm | 0 | 10 | 11 | worker | -
comm | 0 | 20 | 20 | my prog | -
stack | 10 | 1 | 4 | complete
frame | 10 | 1 | 0 | kernel | kallsyms | - | 0xffffffff81001010 | do_syscall_64 | [kernel] | - | -
frame | 10 | 1 | 1 | native | symtab | - | 0x401108 | leaf | /bin/prog | - | -
frame | 10 | 1 | 2 | native | symtab | - | 0x401120 | main | /bin/prog | - | -
frame | 10 | 1 | 3 | native | symtab | hidden | 0x401020 | _start | /bin/prog | - | -
stack | 10 | 2 | 3 | truncated
frame | 10 | 2 | 0 | jit | perf-map | - | 0x7f0000001010 | py::hot:<stdin> | [anon] | - | -
frame | 10 | 2 | 1 | native | symtab | - | 0x401200 | a;b | /bin/prog | - | -
frame | 10 | 2 | 2 | native | none | - | 0x401300 | [prog]+0x1300 | /bin/prog | - | -
stack | 20 | 1 | 3 | complete
frame | 20 | 1 | 0 | native | symtab | - | 0x401108 | leaf | /bin/prog | - | -
frame | 20 | 1 | 1 | native | symtab | - | 0x401120 | main | /bin/prog | - | -
frame | 20 | 1 | 2 | native | symtab | hidden | 0x401020 | _start | /bin/prog | - | -
stack | 20 | 2 | 2 | complete
frame | 20 | 2 | 0 | native | symtab | - | 0x401400 | foo 12 | /bin/prog | - | -
frame | 20 | 2 | 1 | native | symtab | - | 0x401120 | x\t | /bin/prog | - | -
stack | 20 | 3 | 0 | noregs
sample | 1 | 10 | 10 | 0 | 1000 | 1
sample | 2 | 10 | 10 | 0 | 1000 | 1
sample | 3 | 10 | 11 | 1 | 3000 | 2
sample | 4 | 20 | 20 | 0 | 1000 | 1
sample | 5 | 20 | 20 | 0 | 1000 | 2
sample | 6 | 20 | 20 | 0 | 1000 | 3
lost | 7 | 4
summary | samples=6 | lost=4 | stacks=5
EOF_SYM
}

@test "sp-fold: options and their exit statuses" {
	# args | status | stream | ERE the stream must match
	local bad=0 args want where re text
	while IFS='|' read -r args want where re; do
		# shellcheck disable=SC2086
		run --separate-stderr "$SP_FOLD" $args <"$T/in.sym"
		text=$output
		[[ $where == stderr ]] && text=$stderr
		if ((status != want)); then
			echo "# sp-fold $args: exit $status, want $want ($stderr)"
		elif ! [[ $text =~ $re ]]; then
			echo "# sp-fold $args: $where does not match /$re/: $text"
		else
			continue
		fi
		bad=$((bad + 1))
	done <<'EOF_CASES'
-h|0|stdout|^usage: sp-fold .*Exit status
--help|0|stdout|--top N
-V|0|stdout|^sp-fold [0-9]+\.[0-9]+
--bogus|64|stderr|try 'sp-fold --help'
--top|64|stderr|^sp-fold: option .--top. needs a value
--top 0|64|stderr|^sp-fold: invalid --top '0': must be 1\.\.1000000
--top x|64|stderr|^sp-fold: invalid --top 'x'
a b|64|stderr|^sp-fold: too many arguments
/nonexistent/in.sym|2|stderr|^sp-fold: cannot open '/nonexistent/in.sym': No such file
-o /nonexistent/dir/out|2|stderr|^sp-fold: cannot open '/nonexistent/dir/out'
EOF_CASES
	((bad == 0)) || fail "$bad option cases failed"
}

@test "sp-fold: folds root first, merges alike stacks, sorts by count then bytes" {
	cat >"$T/want" <<'EOF_WANT'
my_prog;main;leaf;do_syscall_64_[k] 2
my_prog 1
my_prog;main;leaf 1
my_prog;x;foo_12 1
worker;[prog];a:b;py::hot:<stdin>_[j] 1
EOF_WANT
	run_io "$SP_FOLD" "$T/in.sym" "$T/out"
	assert_success
	[[ -z $stderr ]] || fail "unexpected stderr: $stderr"
	diff -u "$T/want" "$T/out"
}

@test "sp-fold --pid, --tid and --hidden" {
	cat >"$T/want.pid" <<'EOF_WANT'
my_prog-10;main;leaf;do_syscall_64_[k] 2
my_prog-20 1
my_prog-20;main;leaf 1
my_prog-20;x;foo_12 1
worker-10;[prog];a:b;py::hot:<stdin>_[j] 1
EOF_WANT
	run "$SP_FOLD" --pid -o "$T/out.pid" "$T/in.sym"
	assert_success
	diff -u "$T/want.pid" "$T/out.pid"

	cat >"$T/want.tid" <<'EOF_WANT'
my_prog-10/10;_start;main;leaf;do_syscall_64_[k] 2
my_prog-20/20 1
my_prog-20/20;_start;main;leaf 1
my_prog-20/20;x;foo_12 1
worker-10/11;[prog];a:b;py::hot:<stdin>_[j] 1
EOF_WANT
	run "$SP_FOLD" --tid --hidden -o "$T/out.tid" "$T/in.sym"
	assert_success
	diff -u "$T/want.tid" "$T/out.tid"
}

@test "sp-fold --weight counts periods" {
	run "$SP_FOLD" --weight "$T/in.sym"
	assert_success
	assert_line --index 0 'worker;[prog];a:b;py::hot:<stdin>_[j] 3000'
	assert_line --index 1 'my_prog;main;leaf;do_syscall_64_[k] 2000'
}

@test "sp-fold --top N: self and total per function" {
	cat >"$T/want" <<'EOF_WANT'
# top 3 by self, of 6 samples
      self   self%      total  total%  function
         2  33.33%          2  33.33%  do_syscall_64_[k]
         1  16.67%          1  16.67%  foo_12
         1  16.67%          3  50.00%  leaf

# top 3 by total, of 6 samples
      self   self%      total  total%  function
         1  16.67%          3  50.00%  leaf
         0   0.00%          3  50.00%  main
         2  33.33%          2  33.33%  do_syscall_64_[k]

# stack ends, of 6 samples
   samples   share  end
         4  66.67%  complete
         1  16.67%  truncated
         1  16.67%  noregs
EOF_WANT
	run "$SP_FOLD" --top 3 -o "$T/out" "$T/in.sym"
	assert_success
	diff -u "$T/want" "$T/out"
}

@test "sp-fold output is what flamegraph.pl reads: stack, one space, count" {
	run_io "$SP_FOLD" "$T/in.sym" "$T/out"
	assert_success
	# flamegraph.pl: ^(.*)\s+?(\d+(?:\.\d*)?)$, and no stack may itself
	# end in whitespace and a number
	run awk '!/^[^ ].* [0-9]+$/ { print "bad: " $0 }
		{ sub(/ [0-9]+$/, ""); if ($0 ~ /[ \t][0-9.]+$/) print "count-like: " $0 }' "$T/out"
	assert_output ''
}

@test "sp-fold skips lines of kinds it does not know and comments" {
	{
		head -n 2 "$T/in.sym"
		printf 'inline\t10\t1\t0\tsomething new\n# a comment\n'
		tail -n +3 "$T/in.sym"
	} >"$T/future.sym"
	run_io "$SP_FOLD" "$T/in.sym" "$T/want"
	run_io "$SP_FOLD" "$T/future.sym" "$T/out"
	assert_success
	diff -u "$T/want" "$T/out"
}

@test "sp-fold stops quietly when its reader goes away" {
	for ((i = 1; i <= 3000; i++)); do
		printf 'stack\t1\t%d\t1\troot\nframe\t1\t%d\t0\tnative\tsymtab\t-\t0x1\tf%d\t-\t-\t-\nsample\t1\t1\t1\t0\t1\t%d\n' \
			"$i" "$i" "$i" "$i"
	done >"$T/body"
	{ echo '# stackpulse symbolized 1'; cat "$T/body"; printf 'summary\tsamples=3000\n'; } >"$T/big.sym"
	run bash -c '"$1" "$2" | head -n 1 >/dev/null; echo "status=${PIPESTATUS[0]}"' _ "$SP_FOLD" "$T/big.sym"
	assert_output 'status=0'
}

@test "sp-fold refuses bad input with the line and exit 2" {
	# name | ERE for the one stderr line
	local bad=0 name re
	: >"$T/empty"
	printf 'hello\nworld\n' >"$T/magic"
	printf '# stackpulse symbolized 2\nsummary\tsamples=0\n' >"$T/future"
	printf 'SPRAW\0\0\0\1\0\0\0\20\0\0\0' >"$T/raw"
	printf 'SPUNWND\0\1\0\0\0\130\0\0\0' >"$T/unwound"
	head -n 20 "$T/in.sym" >"$T/truncated"
	printf '# stackpulse symbolized 1\nsummary\tsamples=0' >"$T/nonewline"
	{ head -n 24 "$T/in.sym"; printf 'sample\t9\t10\tten\t0\t1\t1\n'; } >"$T/badsample"
	{ head -n 6 "$T/in.sym"; sed -n 8p "$T/in.sym"; } >"$T/order"
	{ head -n 24 "$T/in.sym"; printf 'sample\t9\t10\t10\t0\t1\t77\n'; } >"$T/undefined"
	{ cat "$T/in.sym"; printf 'lost\t1\t1\n'; } >"$T/after"
	{ head -n 24 "$T/in.sym"; printf 'sample\t1\t\\q\t1\t0\t1\t1\n'; } >"$T/escape"
	head -c 4096 /dev/urandom >"$T/random"
	while IFS='|' read -r name re; do
		run --separate-stderr "$SP_FOLD" <"$T/$name"
		if ((status != 2)); then
			echo "# $name: exit $status, want 2 ($stderr)"
		elif ((${#stderr_lines[@]} != 1)); then
			echo "# $name: want one line on stderr: $stderr"
		elif ! [[ $stderr =~ ^sp-fold:\ $re ]]; then
			echo "# $name: stderr does not match /$re/: $stderr"
		elif [[ -n $output ]]; then
			echo "# $name: printed output: $output"
		else
			continue
		fi
		bad=$((bad + 1))
	done <<'EOF_CASES'
empty|empty input, expected a symbolized stream at byte 0 of 'stdin'
magic|not a symbolized stream \(bad magic line.* at line 1 of 'stdin'
future|symbolized stream version 2 is not supported .*upgrade stackpulse
raw|bad stream header size 16: must be a multiple of 8 in [0-9]+\.\.[0-9]+ at byte 12 of 'stdin'
unwound|truncated stream header: need 88 bytes, have 16 at byte 16 of 'stdin'
truncated|truncated stream: no summary line at line 21 of 'stdin'
nonewline|truncated line \(no newline\) at line 2 of 'stdin'
badsample|bad sample line at line 25 of 'stdin': TID is not a number
order|frame 10/1 #1 out of order: expected 10/1 #0 at line 7 of 'stdin'
undefined|sample of undefined stack 10/77 at line 25 of 'stdin'
after|line after the summary line at line 31 of 'stdin'
escape|bad sample line at line 25 of 'stdin': bad escape
random|.*'stdin'
EOF_CASES
	((bad == 0)) || fail "$bad bad-input cases failed"
}

# A raw or unwound stream in a file: sp-fold unwinds and names it itself,
# and must give what the pipeline gives, byte for byte, in every format.
@test "sp-fold RAW-FILE: unwinds and names in-process, as sp-unwind | sp-symbolize | sp-fold" {
	local f args
	need_perf_events
	build_workloads
	start_target wl-single 8
	run sp_record -p "$TARGET_PID" -d 1 -F 999 -o "$T/run.raw"
	assert_success
	"$SP_UNWIND" -q --cache-dir "$T/c1" <"$T/run.raw" >"$T/run.unw"
	"$SP_SYMBOLIZE" --cache-dir "$T/c1" <"$T/run.unw" >"$T/run.sym"
	for args in "" "--tid --hidden" "--names full --weight" "--top 5" \
		"-f pprof" "-f speedscope"; do
		# shellcheck disable=SC2086
		"$SP_FOLD" $args "$T/run.sym" >"$T/want" || fail "sp-fold $args failed"
		for f in "$T/run.raw" "$T/run.unw"; do
			# shellcheck disable=SC2086
			"$SP_FOLD" --cache-dir "$T/c2" $args "$f" >"$T/got" 2>"$T/err" ||
				{ cat "$T/err"; fail "sp-fold $args $f failed"; }
			cmp -s "$T/want" "$T/got" ||
				fail "sp-fold $args $(basename "$f") differs from the pipeline's"
			[[ ! -s $T/err ]] || { cat "$T/err"; fail "sp-fold $args $f warned"; }
		done
	done
	# the stack of the workload, and the symbol cache for the next run
	"$SP_FOLD" "$T/run.sym" >"$T/want"
	grep -q "^wl-single;main;run;outer_a;middle_a;leaf_a;" "$T/want" ||
		fail "no main;run;outer_a;middle_a;leaf_a stack"
	[[ -n $(find "$T/c2/buildid" -name symbols | head -1) ]] ||
		fail "no symbol cache written in $T/c2"
	# folded stacks show no lines and are named without: their symbol
	# cache is a variant of its own, beside the one pprof's and
	# speedscope's runs wrote, which sp-symbolize names everything from
	[[ -n $(find "$T/c2/buildid" -name symbols-nolines | head -1) ]] ||
		fail "no symbol cache of folded stacks in $T/c2: $(find "$T/c2/buildid")"
	# (all but start-up glue, which sp-fold names by its symbol alone:
	# it leaves glue out, and reads no DWARF for it)
	"$SP_SYMBOLIZE" --cache-dir "$T/c2" --stats <"$T/run.unw" >"$T/again.sym" 2>"$T/err"
	cmp -s "$T/run.sym" "$T/again.sym" || fail "sp-symbolize from sp-fold's cache differs"
	grep -Eq " [1-9][0-9]* addresses named from them" "$T/err" ||
		fail "sp-symbolize named nothing from sp-fold's cache: $(cat "$T/err")"
	"$SP_SYMBOLIZE" --cache-dir "$T/c2" --stats <"$T/run.unw" >"$T/again.sym" 2>"$T/err"
	cmp -s "$T/run.sym" "$T/again.sym" || fail "sp-symbolize from its own cache differs"
	grep -q " 0 DWARF opened" "$T/err" || fail "sp-symbolize read DWARF again: $(cat "$T/err")"
	# standard input that is a file is a file
	"$SP_FOLD" --cache-dir "$T/c2" <"$T/run.raw" >"$T/got"
	cmp -s "$T/want" "$T/got" || fail "sp-fold < RAW differs from the pipeline's"
	# --every cuts the same stacks into windows
	mkdir "$T/w1" "$T/w2"
	"$SP_FOLD" --every 1s -o "$T/w1" "$T/run.sym" 2>/dev/null
	"$SP_FOLD" --cache-dir "$T/c2" --every 1s -o "$T/w2" "$T/run.raw" 2>/dev/null
	diff -r "$T/w1" "$T/w2" || fail "sp-fold --every RAW differs from the pipeline's"
}

@test "sp-fold RAW-FILE: bad and cut input as sp-unwind tells it; a pipe is told to be a file" {
	need_perf_events
	build_workloads
	start_target wl-single 8
	run sp_record -p "$TARGET_PID" -d 1 -F 99 -o "$T/run.raw"
	assert_success
	head -c $(($(stat -c %s "$T/run.raw") - 100)) "$T/run.raw" >"$T/cut.raw"
	run --separate-stderr "$SP_UNWIND" -q "$T/cut.raw"
	assert_failure 2
	want=${stderr#sp-unwind: }
	run --separate-stderr "$SP_FOLD" "$T/cut.raw"
	assert_failure 2
	[[ -z $output ]] || fail "sp-fold folded a cut stream: $output"
	[[ $stderr == "sp-fold: $want" ]] || fail "sp-fold: '$stderr', sp-unwind: '$want'"
	[[ $want =~ at\ byte\ [0-9]+\ of\ \'$T/cut.raw\' ]] || fail "no byte offset: $want"
	run --separate-stderr bash -c 'cat "$1" | "$2"' _ "$T/run.raw" "$SP_FOLD"
	assert_failure 2
	[[ $stderr == "sp-fold: 'stdin' is a raw stream: give it to sp-fold as a file, which it unwinds and symbolizes itself, or pipe it into sp-unwind and sp-symbolize first" ]] ||
		fail "$stderr"
	# options for naming frames do nothing to a stream named already
	"$SP_UNWIND" -q <"$T/run.raw" | "$SP_SYMBOLIZE" >"$T/run.sym"
	run --separate-stderr "$SP_FOLD" --no-inline "$T/run.sym"
	assert_success
	[[ $stderr == "sp-fold: the options of naming frames are for a raw or unwound input: '$T/run.sym' is named already" ]] ||
		fail "$stderr"
}
