#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# stacktail.bats: stacks deeper than the stack copy, finished from the live
# process (stack tails: lib/record/stacktail.c, lib/format/tail.h).
#
# wl-tail (tests/workloads/wl-tail.c) runs main -> run -> rec x 122 -> leaf,
# a stack of about 125 KB, twice what the default copy of 61440 bytes
# holds; in its changing mode two look-alike chains of varying depth take
# turns every 2 ms.  sp-unwind's report ends in ", N spliced": the
# samples whose stack was finished with a tail and then unwound completely.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

REPORT_RE='^sp-unwind: ([0-9]+) samples, [0-9]+ stacks: ([0-9]+) complete, ([0-9]+) truncated, .* ([0-9]+) spliced$'
TAILS_RE='^sp-record: stack tails: ([0-9]+) of ([0-9]+) samples deeper than their copy, ([0-9]+) bytes; ([0-9]+) changed at the seam$'
DEPTH=122

setup() {
	require_tools
	need_perf_events
	build_workloads
	T=$BATS_TEST_TMPDIR
}

# unwind_counts RAW: sp-unwind RAW; SAMPLES COMPLETE TRUNCATED SPLICED
# from its report.
unwind_counts() {
	run_io "$SP_UNWIND" "$1" "$T/counts.unw"
	((status <= 1)) || fail "sp-unwind exited $status: $stderr"
	[[ ${stderr_lines[-1]:-} =~ $REPORT_RE ]] ||
		fail "no report as the last line of sp-unwind: $stderr"
	SAMPLES=${BASH_REMATCH[1]} COMPLETE=${BASH_REMATCH[2]}
	TRUNCATED=${BASH_REMATCH[3]} SPLICED=${BASH_REMATCH[4]}
	echo "# $1: ${stderr_lines[-1]}"
}

# tail_counts ERR: TAILS DEEP TAIL_BYTES CHANGED from sp-record's stderr
# ERR (all 0 when it printed no stack-tail line).
tail_counts() {
	local line
	TAILS=0 DEEP=0 TAIL_BYTES=0 CHANGED=0
	line=$(grep '^sp-record: stack tails: [0-9]* of ' "$1") || return 0
	[[ $line =~ $TAILS_RE ]] || fail "bad stack-tail line: $line"
	TAILS=${BASH_REMATCH[1]} DEEP=${BASH_REMATCH[2]}
	TAIL_BYTES=${BASH_REMATCH[3]} CHANGED=${BASH_REMATCH[4]}
	echo "# $line"
}

# drop_records IN TYPE OUT: the stream IN without its records of TYPE.
drop_records() {
	# shellcheck disable=SC2016	# perl's variables
	perl -e '
		open(my $f, "<:raw", $ARGV[0]) or die "$ARGV[0]: $!\n";
		open(my $o, ">:raw", $ARGV[2]) or die "$ARGV[2]: $!\n";
		read($f, my $h, 16) == 16 or die "$ARGV[0]: no stream header\n";
		my $hs = unpack("x12 L", $h);
		read($f, my $rest, $hs - 16);
		print $o $h, $rest;
		while (read($f, my $r, 8) == 8) {
			my ($t, $size) = unpack("LL", $r);
			die "bad record size\n" if $size < 8;
			read($f, my $body, $size - 8);
			print $o $r, $body unless $t == $ARGV[1];
		}' "$1" "$2" "$3"
}

# wl_tail_chains FOLDED: check every stack of wl-tail that reaches main
# against the call structures the program has.  Whole: main;run, then
# DEPTH_LO..DEPTH_HI rec frames and leaf, or as many alt frames and
# alt_leaf (anything may follow the leaf: its inlined loop, the clock, the
# kernel).  Partial: main;run and up to DEPTH_HI frames of one chain, then
# nothing or the kernel (a sample while it descends or returns).  Neither
# chain nor leaf at all: start-up, the clock.  Anything else is wrong.
# Prints "ROOTED WHOLE PARTIAL WRONG" in samples, the wrong stacks on
# stderr.
wl_tail_chains() {
	awk -v lo="$DEPTH_LO" -v hi="$DEPTH_HI" '
		NF >= 2 {
			n = $NF
			s = substr($0, 1, length($0) - length(n) - 1)
			if (s !~ /^wl-tail;main;/)
				next
			rooted += n
			if (s !~ /(^|;)(rec|alt|leaf|alt_leaf)(;|$)/)
				next
			k = split(s, f, ";")
			r = 0; a = 0; i = 4
			if (f[3] == "run") {
				while (i <= k && f[i] == "rec") { r++; i++ }
				while (i <= k && f[i] == "alt") { a++; i++ }
			}
			d = r + a
			if (d >= lo && d <= hi &&
			    ((r && !a && f[i] == "leaf") ||
			     (a && !r && f[i] == "alt_leaf"))) {
				whole += n
				next
			}
			if (d >= 1 && d <= hi && !(r && a) &&
			    (i > k || f[i] ~ /_\[k\]$/)) {
				partial += n
				next
			}
			wrong += n
			print "wrong: " n " x " r " rec, " a " alt, then " f[i] > "/dev/stderr"
		}
		END { printf "%d %d %d %d\n", rooted, whole, partial, wrong }' "$1"
}

@test "stack tails: a stack twice the copy unwinds to main, exactly" {
	WL_CLOCK=cpu start_target --go wl-tail 2 "$DEPTH"
	# 2 s of CPU time at 499 Hz: about 1000 samples however loaded the
	# machine, every one 125 KB deep; a ring of 32 MiB holds 4 s of them,
	# so that a recorder starved by other tests loses none
	record_released "$T/deep.raw" -F 499 -m 8192
	assert_success
	tail_counts "$T/deep.raw.err"
	unwind_counts "$T/deep.raw"
	((SAMPLES >= 500)) || fail "only $SAMPLES samples"
	((SPLICED * 100 >= SAMPLES * 90)) ||
		fail "only $SPLICED of $SAMPLES samples spliced"
	((COMPLETE >= SPLICED)) || fail "$SPLICED spliced, $COMPLETE complete"

	# every stack that reaches main is main;run;rec x 122;leaf
	sp_replay "$T/deep.raw" "$T/deep.folded"
	assert_pipeline_ok "$T/deep.folded"
	DEPTH_LO=$DEPTH DEPTH_HI=$DEPTH
	read -r rooted whole partial wrong < <(wl_tail_chains "$T/deep.folded")
	echo "# $rooted samples reach main, $whole of them main;run;rec x $DEPTH;leaf"
	((wrong == 0)) || fail "$wrong samples reach main through a wrong chain"
	((whole * 100 >= SAMPLES * 90)) ||
		fail "only $whole of $SAMPLES samples main;run;rec x $DEPTH;leaf"

	# a tail repeated is not written again: the stream holds one TAIL per
	# finished sample, at a small fraction of the 64 KB a tail is
	((TAILS == SPLICED)) || fail "$TAILS tails for $SPLICED spliced stacks"
	assert_equal "$(raw_count "$T/deep.raw" 13) TAIL records" "$TAILS TAIL records"
	assert_equal "$(raw_count "$T/deep.raw" 13 bytes) bytes" "$TAIL_BYTES bytes"
	echo "# $((TAIL_BYTES / TAILS)) bytes of TAIL records per tail"
	((TAIL_BYTES <= TAILS * 1024)) ||
		fail "$TAIL_BYTES bytes for $TAILS tails of an unchanging stack"

	# the same recording without its TAIL records: cut where the copy ends
	drop_records "$T/deep.raw" 13 "$T/notail.raw"
	unwind_counts "$T/notail.raw"
	((SPLICED == 0)) || fail "$SPLICED stacks spliced without tails"
	((TRUNCATED * 100 >= SAMPLES * 90)) ||
		fail "only $TRUNCATED of $SAMPLES samples truncated without tails"
}

@test "stack tails: --stack-tail 0 leaves a deep stack cut at the copy" {
	WL_CLOCK=cpu start_target --go wl-tail 1 "$DEPTH"
	record_released "$T/off.raw" -F 499 -m 8192 --stack-tail 0
	assert_success
	refute_output --partial 'stack tails'
	assert_equal "$(raw_count "$T/off.raw" 13) TAIL records" "0 TAIL records"
	unwind_counts "$T/off.raw"
	((SAMPLES >= 250)) || fail "only $SAMPLES samples"
	((SPLICED == 0)) || fail "$SPLICED stacks spliced with tails off"
	((TRUNCATED * 100 >= SAMPLES * 90)) ||
		fail "only $TRUNCATED of $SAMPLES samples truncated"
}

@test "stack tails: a recorder not let read the process says why, its stacks cut" {
	# sp-record under a seccomp filter that answers process_vm_readv(2)
	# with EPERM, as Yama's ptrace scope or a security module may
	cat >"$T/noreadv.c" <<'C'
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	(void)argc;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 125;
	execv(getenv("NOREADV_EXEC"), argv);
	return 126;
}
C
	[[ $(uname -m) == x86_64 ]] || skip "the filter is written for x86_64"
	cc -O2 -o "$T/noreadv" "$T/noreadv.c"
	WL_CLOCK=cpu start_target --go wl-tail 1 "$DEPTH"
	NOREADV_EXEC=$SP_RECORD SP_RECORD=$T/noreadv \
		record_released "$T/denied.raw" -F 499 -m 8192
	assert_success
	grep -Eq '^sp-record: stack tails: [0-9]+ not read, their stacks cut: process_vm_readv was denied: .*seccomp filter may forbid it$' <<<"$output" ||
		fail "no word of the denial: $output"
	tail_counts "$T/denied.raw.err"
	((DEEP >= 250 && TAILS == 0)) ||
		fail "$TAILS tails of $DEEP deep stacks"
	assert_equal "$(raw_count "$T/denied.raw" 13) TAIL records" "0 TAIL records"
	unwind_counts "$T/denied.raw"
	((TRUNCATED * 100 >= SAMPLES * 90)) ||
		fail "only $TRUNCATED of $SAMPLES samples truncated"
}

@test "stack tails: a deep stack that keeps changing is never spliced wrongly" {
	WL_CLOCK=cpu start_target --go wl-tail 2 "$DEPTH" 1
	record_released "$T/vary.raw" -F 499 -m 8192
	assert_success
	tail_counts "$T/vary.raw.err"
	unwind_counts "$T/vary.raw"
	((SAMPLES >= 500)) || fail "only $SAMPLES samples"
	# the seam check refused the tails of stacks that had changed, and
	# kept those of the other samples of the chain that still ran
	((CHANGED >= 1)) || fail "no tail refused: the stack changed under every one"
	((SPLICED >= 1)) || fail "no stack spliced"

	# every stack that reaches main is one chain, of a depth it has
	sp_replay "$T/vary.raw" "$T/vary.folded"
	assert_pipeline_ok "$T/vary.folded"
	DEPTH_LO=$((DEPTH * 2 / 3)) DEPTH_HI=$DEPTH
	read -r rooted whole partial wrong < <(wl_tail_chains "$T/vary.folded")
	echo "# $rooted samples reach main: $whole through a whole chain, $partial part of one"
	((wrong == 0)) || fail "$wrong samples reach main through a mixed or wrong chain"
	((whole + partial >= SPLICED)) ||
		fail "$SPLICED spliced, but only $((whole + partial)) chains reach main"
}
