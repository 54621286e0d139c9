#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# memory.bats: what sp-unwind, sp-symbolize and sp-spool write keep follows
# the processes alive, not every process a stream ever had
# (docs/streams.md, section 5.3.1): their peak memory over 9000
# short-lived processes is that over 1000, and forgetting a process
# changes no output, whether its pid is reused or its threads outlive its
# main thread.
#
# The streams are raw streams built by tests/bats/mkraw.pl, so they are
# the same at every run and need no perf events: a shell-like parent forks
# children that exec wl-single (tests/workloads), are sampled three times
# each at its functions and exit, a hundred a second of stream time.  Peak
# memory is the tool's maximum resident set, from GNU time; under ASan
# (make check), freed memory is reused at once (quarantine_size_mb=0), so
# the peak counts what is kept, not what the sanitizer holds back.
# sp-record keeps a few bytes per thread, less than a peak can show over
# a recording this short: bench/soak.sh watches it over half an hour.

load common

SMALL=1000
LARGE=9000
# what 8000 more processes may add to a peak.  Keeping every process to
# the end adds 26 KB a process to sp-unwind, 1 KB to sp-symbolize and 180
# bytes (1.4 MB in all) to sp-spool write; runs differ by 0.3 MB.
BOUND_KB=1024

setup_file() {
	build_workloads || fail "cannot build the workloads"
	D=$BATS_FILE_TMPDIR
	wl_env
	describe_children >"$D/children.txt"
	N=$SMALL mkraw <"$D/children.txt" >"$D/small.raw"
	N=$LARGE mkraw <"$D/children.txt" >"$D/large.raw"
}

setup() {
	require_tools
	D=$BATS_FILE_TMPDIR
	T=$BATS_TEST_TMPDIR
	wl_env
}

# The file the children run, where they map it, and its functions, in the
# environment that mkraw.pl's expressions read.
wl_env() {
	export BIN=$WL_DIR/wl-single BASE=0x555555554000
	SIZE=$(stat -c %s "$BIN")
	LEAF_A=$(sym_addr "$BIN" leaf_a)
	LEAF_B=$(sym_addr "$BIN" leaf_b)
	LEAF_C=$(sym_addr "$BIN" leaf_c)
	RUN=$(sym_addr "$BIN" run)
	MAIN=$(sym_addr "$BIN" main)
	export SIZE LEAF_A LEAF_B LEAF_C RUN MAIN
}

mkraw() {
	perl "$BATS_TEST_DIRNAME/mkraw.pl"
}

# sym_addr BIN NAME: the address of NAME in BIN's .symtab, as 0x hex.
sym_addr() {
	printf '0x%x' "0x$(nm "$1" | awk -v n="$2" '$3 == n { print $1 }')"
}

# The children of the streams, for mkraw.pl: N processes forked by a
# parent (100), each execs wl-single, is sampled at leaf_a (returning into
# run), leaf_b and leaf_c (returning into main), and exits.
describe_children() {
	cat <<'EOF'
header 4096
comm 1000000 100 100 loop
mmap 1000000 100 {$ENV{BASE}} {$ENV{SIZE}} 0 {$ENV{BIN}}
repeat {$ENV{N}}
fork {2e9 + $i * 1e7} {1000 + $i} 100 {1000 + $i} 100
comm {2e9 + $i * 1e7 + 1} {1000 + $i} {1000 + $i} wl-single exec
mmap {2e9 + $i * 1e7 + 2} {1000 + $i} {$ENV{BASE}} {$ENV{SIZE}} 0 {$ENV{BIN}}
sample {2e9 + $i * 1e7 + 3} {1000 + $i} {1000 + $i} {hex($ENV{BASE}) + hex($ENV{LEAF_A})} 0x7ffd0000 {sprintf '0x%x,0', hex($ENV{BASE}) + hex($ENV{RUN}) + 16}
sample {2e9 + $i * 1e7 + 4} {1000 + $i} {1000 + $i} {hex($ENV{BASE}) + hex($ENV{LEAF_B})} 0x7ffd0000 {sprintf '0x%x,0', hex($ENV{BASE}) + hex($ENV{RUN}) + 32}
sample {2e9 + $i * 1e7 + 5} {1000 + $i} {1000 + $i} {hex($ENV{BASE}) + hex($ENV{LEAF_C}) + 4} 0x7ffd0000 {sprintf '0x%x,0', hex($ENV{BASE}) + hex($ENV{MAIN}) + 16}
exit {2e9 + $i * 1e7 + 6} {1000 + $i} 100 {1000 + $i} 100
end
summary {3 * $ENV{N}} {1 + $ENV{N}} {1 + $ENV{N}}
EOF
}

# peak_kb OUT CMD [ARGS...]: run CMD with the caller's standard input and
# output, write its peak resident set size in KiB to OUT, and return its
# exit status.
peak_kb() {
	local out=$1
	shift
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
		/usr/bin/time -o "$out" -f %M "$@" || return
	# GNU time writes "Command exited with ..." first when CMD fails
	tail -n 1 "$out" >"$out.kb" && mv "$out.kb" "$out"
}

need_gnu_time() {
	[[ -x /usr/bin/time ]] || skip "needs GNU time (/usr/bin/time, Debian package time)"
}

# flat NAME SMALL-KB LARGE-KB: the peak over LARGE processes is at most
# BOUND_KB above that over SMALL.
flat() {
	echo "# $1: $2 KiB over $SMALL processes, $3 KiB over $LARGE"
	(($3 - $2 <= BOUND_KB)) ||
		fail "$1 grew by $(($3 - $2)) KiB for $((LARGE - SMALL)) more processes (at most $BOUND_KB)"
}

@test "sp-unwind: peak memory over 9000 short-lived processes is that over 1000" {
	need_gnu_time
	local n
	for n in small large; do
		peak_kb "$T/$n.kb" "$SP_UNWIND" -q -o "$T/$n.unw" "$D/$n.raw" ||
			fail "sp-unwind failed on the $n stream"
	done
	flat sp-unwind "$(cat "$T/small.kb")" "$(cat "$T/large.kb")"
	# and it unwound them all, through the file of each
	run sp_unwind "$D/large.raw" -o /dev/null
	assert_success
	assert_output "sp-unwind: $((3 * LARGE)) samples, $((3 * LARGE)) stacks: 0 complete, $((3 * LARGE)) truncated, 0 noinfo, 0 error, 0 spliced"
}

@test "sp-symbolize: peak memory over 9000 short-lived processes is that over 1000" {
	need_gnu_time
	local n
	for n in small large; do
		sp_unwind -q -o "$T/$n.unw" "$D/$n.raw" || fail "sp-unwind failed"
		peak_kb "$T/$n.kb" "$SP_SYMBOLIZE" -o "$T/$n.sym" "$T/$n.unw" ||
			fail "sp-symbolize failed on the $n stream"
	done
	flat sp-symbolize "$(cat "$T/small.kb")" "$(cat "$T/large.kb")"
	# every sample named by its own process's file
	run sp_fold "$T/large.sym"
	assert_success
	assert_output - <<EOF
wl-single;[truncated];main;wl_arg_seconds_[i];wl_arg_[i];leaf_c;wl_burn_[i] $LARGE
wl-single;[truncated];run;leaf_a;wl_burn_[i] $LARGE
wl-single;[truncated];run;wl_now_[i];leaf_b;wl_burn_[i] $LARGE
EOF
}

@test "sp-spool write: peak memory over 9000 short-lived processes is that over 1000" {
	need_gnu_time
	local n
	for n in small large; do
		sp_unwind -q -o "$T/$n.unw" "$D/$n.raw" || fail "sp-unwind failed"
		# small blocks: the peak is not the block buffer filling up
		peak_kb "$T/$n.kb" "$SP_BIN/sp-spool/sp-spool" write -q -b 4096 \
			"$T/$n.spool" <"$T/$n.unw" ||
			fail "sp-spool write failed on the $n stream"
	done
	flat "sp-spool write" "$(cat "$T/small.kb")" "$(cat "$T/large.kb")"
	"$SP_BIN/sp-spool/sp-spool" cat "$T/large.spool" >"$T/back.unw"
	cmp "$T/large.unw" "$T/back.unw" || fail "the spool does not give back its stream"
}

# sample TIME PID TID FUNC RETURN: a sample line for mkraw.pl at the entry
# of FUNC of wl-single mapped at BASE, returning 16 bytes into RETURN.
sample() {
	printf 'sample %s %s %s %#x 0x7ffd0000 %#x,0\n' "$1" "$2" "$3" \
		$((BASE + $4)) $((BASE + $5 + 16))
}

# child TIME PID PROGRAM: the parent 100 forks PID, which execs PROGRAM
# (mapped at BASE).
child() {
	echo "fork $1 $2 100 $2 100"
	echo "comm $(($1 + 1)) $2 $2 $(basename "$3") exec"
	echo "mmap $(($1 + 2)) $2 $BASE $(stat -c %s "$3") 0 $3"
}

parent() {
	echo "header 4096"
	echo "comm 1000000 100 100 loop"
	echo "mmap 1000000 100 $BASE $SIZE 0 $BIN"
}

# reused PID PROGRAM: a child 200 samples leaf_a and exits; 1.5 s later
# another child comes and goes, which forgets 200; then child PID runs
# PROGRAM and is sampled at the same address.
reused() {
	parent
	child 1000000000 200 "$BIN"
	sample 1000000003 200 200 "$LEAF_A" "$RUN"
	echo "exit 1500000000 200 100 200 100"
	child 3000000000 300 "$BIN"
	echo "exit 3000000010 300 100 300 100"
	child 4000000000 "$1" "$2"
	sample 4000000003 "$1" "$1" "$LEAF_A" "$RUN"
	echo "exit 5000000000 $1 100 $1 100"
	echo "summary 2 3 3"
}

@test "a pid reused by a new process is symbolized as a new pid would be" {
	local prog
	# the same program again, and another one at the same addresses
	for prog in "$BIN" "$WL_DIR/wl-deep"; do
		reused 200 "$prog" | mkraw >"$T/reused.raw"
		reused 201 "$prog" | mkraw >"$T/fresh.raw"
		sp_unwind -q "$T/reused.raw" | sp_symbolize >"$T/reused.sym" ||
			fail "the stream that reuses pid 200 does not symbolize"
		sp_unwind -q "$T/fresh.raw" | sp_symbolize >"$T/fresh.sym" ||
			fail "the stream with pid 201 does not symbolize"
		sp_fold "$T/reused.sym" >"$T/reused.folded"
		sp_fold "$T/fresh.sym" >"$T/fresh.folded"
		diff -u "$T/fresh.folded" "$T/reused.folded" ||
			fail "pid 200 reused by $prog is named otherwise than pid 201"
		# the new process defined its stack anew, under another ID
		run grep -c '^stack	200	' "$T/reused.sym"
		assert_output 2
	done
	run grep -c 'leaf_a' "$T/reused.folded"
	assert_output 1		# wl-deep has no leaf_a: the first 200's
}

@test "a process lives on after its main thread exits, while a thread runs" {
	{
		parent
		child 1000000000 200 "$BIN"
		echo "fork 1000000010 200 200 201 200"
		echo "exit 2000000000 200 100 200 100"	# pthread_exit in main
		child 4000000000 300 "$BIN"
		echo "exit 4000000010 300 100 300 100"
		sample 5000000000 200 201 "$LEAF_A" "$RUN"
		echo "exit 6000000000 200 200 201 200"
		child 8000000000 301 "$BIN"
		echo "summary 1 4 3"
	} | mkraw >"$T/thread.raw"
	sp_unwind -q "$T/thread.raw" | sp_symbolize | sp_fold >"$T/thread.folded" ||
		fail "the stream does not symbolize"
	run cat "$T/thread.folded"
	assert_output "wl-single;[truncated];run;leaf_a;wl_burn_[i] 1"
}

@test "samples stamped before a process ended are its own for a second after" {
	{
		parent
		child 1000000000 200 "$BIN"
		echo "exit 2000000000 200 100 200 100"
		child 2500000000 300 "$BIN"
		sample 1900000000 200 200 "$LEAF_A" "$RUN"	# late, its own
		child 3000000000 301 "$BIN"
		# a second after the end: pid 200 is another, unknown process
		sample 1950000000 200 200 "$LEAF_B" "$RUN"
		echo "summary 2 4 4"
	} | mkraw >"$T/late.raw"
	sp_unwind -q "$T/late.raw" | sp_symbolize | sp_fold >"$T/late.folded" ||
		fail "the stream does not symbolize"
	run cat "$T/late.folded"
	# (the other process has no name: sp-fold let the old one's go with
	# it, at sp-symbolize's gone line)
	assert_output - <<'EOF'
[unknown];[no unwind info];[unknown] 1
wl-single;[truncated];run;leaf_a;wl_burn_[i] 1
EOF
}
