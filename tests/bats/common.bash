# SPDX-License-Identifier: MIT
# common.bash: what every stackpulse bats file loads: where the tools are,
# the test workloads, targets killed at teardown, pipelines whose every
# stage's exit status is kept, and shares of folded output.
#
# Environment:
#   SP_BIN   directory holding sp-*/sp-* (default: the work tree; make check
#            passes build/san)
#   SP_WORK  where to cache built workloads (default: $BATS_RUN_TMPDIR)
#   WL_CC    compiler for the workloads (default: cc)

# shellcheck disable=SC2034	# variables set here are read by the .bats files

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

SP_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
SP_BIN=${SP_BIN:-$SP_ROOT}
[[ $SP_BIN == /* ]] || SP_BIN=$PWD/$SP_BIN
SP_RECORD="$SP_BIN/sp-record/sp-record"
SP_UNWIND="$SP_BIN/sp-unwind/sp-unwind"
SP_SYMBOLIZE="$SP_BIN/sp-symbolize/sp-symbolize"
SP_FOLD="$SP_BIN/sp-fold/sp-fold"
WL_SRC="$SP_ROOT/tests/workloads"
WL_DIR="${SP_WORK:-$BATS_RUN_TMPDIR}/wl"

# The designed shares of wl-single (tests/workloads/wl-single.c), percent of
# samples, and how far a measurement may stray from them.
WL_SINGLE_SHARE_A=60	# main;run;outer_a;middle_a;leaf_a
WL_SINGLE_SHARE_B=30	# main;run;outer_b;leaf_b
WL_SINGLE_SHARE_C=10	# main;run;leaf_c
WL_SHARE_TOLERANCE=10

sp_record() { "$SP_RECORD" "$@"; }
sp_unwind() { "$SP_UNWIND" "$@"; }
sp_symbolize() { "$SP_SYMBOLIZE" "$@"; }
sp_fold() { "$SP_FOLD" "$@"; }

# Fail (not skip) when a tool is missing: a missing tool is a broken build.
require_tools() {
	local t
	for t in "$SP_RECORD" "$SP_UNWIND" "$SP_SYMBOLIZE" "$SP_FOLD"; do
		[[ -x $t ]] || fail "$(basename "$t") is not built at $t: run make"
	done
}

# Skip when this user cannot open perf events for another process.
need_perf_events() {
	local p
	p=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 4)
	if [[ $(id -u) != 0 ]] && ((p > 2)); then
		skip "needs root or CAP_PERFMON (kernel.perf_event_paranoid is $p)"
	fi
}

# Compile tests/workloads/wl-*.c into $WL_DIR, each only when it is missing
# or older than its source, so a test run builds them once.
build_workloads() {
	local c bin tmp
	mkdir -p "$WL_DIR" || return 1
	for c in "$WL_SRC"/wl-*.c; do
		bin="$WL_DIR/$(basename "$c" .c)"
		if [[ ! -x $bin || $c -nt $bin || $WL_SRC/wl.h -nt $bin || $WL_SRC/wl-jit.h -nt $bin ]]; then
			tmp="$bin.tmp.$$"
			"${WL_CC:-cc}" -O2 -g -fomit-frame-pointer -pthread \
				-o "$tmp" "$c" || return 1
			mv -f "$tmp" "$bin" || return 1
		fi
	done
}

# start_cmd CMD [ARGS...]: run a target in the background, note it for
# stop_targets, and wait until it has exec'd CMD.  Sets TARGET_PID.
start_cmd() {
	local want i
	"$@" >/dev/null 2>>"$BATS_TEST_TMPDIR/target.err" 3>&- &
	TARGET_PID=$!
	echo "$TARGET_PID" >>"$BATS_TEST_TMPDIR/targets"
	want=$(readlink -f "$(command -v "$1")")
	for ((i = 0; i < 200; i++)); do
		[[ $(readlink "/proc/$TARGET_PID/exe" 2>/dev/null) == "$want" ]] &&
			break
		kill -0 "$TARGET_PID" 2>/dev/null ||
			fail "target $* died at start: $(cat "$BATS_TEST_TMPDIR/target.err")"
		sleep 0.01
	done
	((i < 200)) || fail "target $* did not exec $want within 2 s"
	sleep "${TARGET_SETTLE:-0.1}"	# dynamic loading, reach the hot loop
}

# start_target NAME [ARGS...]: start workload wl-NAME (built by
# build_workloads), e.g. start_target wl-single 5.
start_target() {
	local name=$1
	shift
	[[ -x $WL_DIR/$name ]] || fail "workload $name not built: call build_workloads"
	start_cmd "$WL_DIR/$name" "$@"
}

# Kill every target this test started (and their children), reap them and
# remove the perf maps they left.
stop_targets() {
	local pid kid
	[[ -f $BATS_TEST_TMPDIR/targets ]] || return 0
	while read -r pid; do
		# shellcheck disable=SC2013	# the file is one line of PIDs
		for kid in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
			kill -KILL "$kid" 2>/dev/null
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rm -f "/tmp/perf-$pid.map"
	done <"$BATS_TEST_TMPDIR/targets"
	rm -f "$BATS_TEST_TMPDIR/targets"
	return 0
}

teardown() {
	stop_targets
}

# run_io CMD IN OUT: run CMD with stdin from IN and stdout to OUT, stderr
# kept apart in $stderr and $stderr_lines (binary output stays out of
# $output).
run_io() {
	# shellcheck disable=SC2016	# $0.. belong to the inner sh
	run --separate-stderr sh -c 'exec "$0" <"$1" >"$2"' "$@"
}

# The TID of the thread of process PID whose name is COMM.
thread_tid() {
	local f
	for f in /proc/"$1"/task/*/comm; do
		if [[ $(cat "$f" 2>/dev/null) == "$2" ]]; then
			basename "$(dirname "$f")"
			return 0
		fi
	done
	return 1
}

# Stage NAME: run the rest as one pipeline stage, its stderr in
# $PIPE_OUT.NAME.err and its exit status in $PIPE_OUT.NAME.status.  A failing
# stage is caught here, not by bats' ERR trap, so all stages are reported.
stage() {
	local name=$1 st=0
	shift
	"$@" 2>"$PIPE_OUT.$name.err" || st=$?
	echo "$st" >"$PIPE_OUT.$name.status"
}

# After a pipeline of stages: PIPE_NAMES and PIPE_STATUS as arrays.
collect_stages() {
	local name
	PIPE_NAMES=("$@")
	PIPE_STATUS=()
	for name in "$@"; do
		PIPE_STATUS+=("$(cat "$PIPE_OUT.$name.status" 2>/dev/null || echo lost)")
	done
}

# sp_pipeline OUT RECORD-ARGS... [-- FOLD-ARGS...]
# Run sp-record | tee OUT.raw | sp-unwind | sp-symbolize | sp-fold > OUT, each
# stage's stderr in OUT.<stage>.err, the statuses in PIPE_STATUS (by stage
# name in PIPE_NAMES).  Check them with assert_pipeline_ok.
sp_pipeline() {
	local rec=() fold=()
	PIPE_OUT=$1
	shift
	while (($#)) && [[ $1 != -- ]]; do
		rec+=("$1")
		shift
	done
	(($#)) && shift
	fold=("$@")
	stage sp-record "$SP_RECORD" "${rec[@]}" |
		stage tee tee "$PIPE_OUT.raw" |
		stage sp-unwind "$SP_UNWIND" |
		stage sp-symbolize "$SP_SYMBOLIZE" |
		stage sp-fold "$SP_FOLD" "${fold[@]}" >"$PIPE_OUT"
	collect_stages sp-record tee sp-unwind sp-symbolize sp-fold
}

# sp_replay RAW OUT [FOLD-ARGS...]: sp-unwind < RAW | sp-symbolize | sp-fold.
sp_replay() {
	local raw=$1
	PIPE_OUT=$2
	shift 2
	stage sp-unwind "$SP_UNWIND" <"$raw" |
		stage sp-symbolize "$SP_SYMBOLIZE" |
		stage sp-fold "$SP_FOLD" "$@" >"$PIPE_OUT"
	collect_stages sp-unwind sp-symbolize sp-fold
}

# Print the stages' stderr and the top of the folded output OUT.
show_pipeline() {
	local out=$1 i
	for ((i = 0; i < ${#PIPE_NAMES[@]}; i++)); do
		echo "# ${PIPE_NAMES[i]} exited ${PIPE_STATUS[i]}"
		[[ -f $out.${PIPE_NAMES[i]}.err ]] &&
			sed 's/^/#   /' "$out.${PIPE_NAMES[i]}.err" | head -20
	done
	echo "# top of $out:"
	show_folded "$out"
}

# assert_pipeline_ok OUT: sp-record, tee and sp-fold exited 0; sp-unwind and
# sp-symbolize 0 or 1 (1: some samples were left partial, as documented);
# OUT is not empty; no stage printed a sanitizer report.
assert_pipeline_ok() {
	local out=$1 i st name bad=
	for ((i = 0; i < ${#PIPE_NAMES[@]}; i++)); do
		name=${PIPE_NAMES[i]} st=${PIPE_STATUS[i]}
		case $name:$st in
		sp-unwind:[01] | sp-symbolize:[01] | *:0) ;;
		tee:141) ;;	# SIGPIPE: a later stage died, reported there
		*) bad="$bad $name=$st" ;;
		esac
		if [[ -f $out.$name.err ]] &&
			grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$out.$name.err"; then
			bad="$bad $name:sanitizer-report"
		fi
	done
	[[ -s $out ]] || bad="$bad empty-output"
	if [[ -n $bad ]]; then
		show_pipeline "$out"
		fail "pipeline failed:$bad"
	fi
}

# Folded lines are "frame;frame;... COUNT": the count is the last field.
# fold_count FILE [REGEX]: samples whose stack matches the ERE (all if none).
fold_count() {
	awk -v re="${2:-}" '
		NF >= 2 {
			n = $NF
			stack = substr($0, 1, length($0) - length(n) - 1)
			if (re == "" || stack ~ re)
				sum += n
		}
		END { printf "%d\n", sum }' "$1"
}

# fold_share FILE REGEX: percent (integer, rounded) of samples whose stack
# matches the ERE.
fold_share() {
	awk -v re="$2" '
		NF >= 2 {
			n = $NF
			stack = substr($0, 1, length($0) - length(n) - 1)
			all += n
			if (stack ~ re)
				sum += n
		}
		END { printf "%d\n", all ? sum * 100 / all + 0.5 : 0 }' "$1"
}

# The 15 heaviest stacks of a folded file, as comments for a failing test.
show_folded() {
	awk '{ print $NF "\t" $0 }' "$1" 2>/dev/null | sort -k1,1nr |
		head -15 | cut -f2- | sed 's/^/#   /'
}

# assert_share FILE REGEX MIN [MAX]: MIN <= share <= MAX (percent).
assert_share() {
	local file=$1 re=$2 min=$3 max=${4:-100} share
	share=$(fold_share "$file" "$re")
	if ((share < min || share > max)); then
		echo "# $(fold_count "$file") samples in $file; top stacks:"
		show_folded "$file"
		fail "share of /$re/ is $share%, want $min..$max%"
	fi
}

# assert_share_near FILE REGEX DESIGN: within WL_SHARE_TOLERANCE points.
assert_share_near() {
	assert_share "$1" "$2" $(($3 - WL_SHARE_TOLERANCE)) $(($3 + WL_SHARE_TOLERANCE))
}

# Python 3.12 or later with -X perf: sets PYTHON312 or skips.
need_python312() {
	local root p
	root=$(pyenv root 2>/dev/null || echo /root/.pyenv)
	p="$root/versions/3.12.1/bin/python3.12"
	[[ -x $p ]] || p=$(command -v python3.12) ||
		skip "needs python3.12 with -X perf support (not found at $root/versions/3.12.1/bin/python3.12 nor on PATH)"
	# the probe removes the perf map that -X perf makes it write
	"$p" -X perf -c '
import os, sys
ok = sys.is_stack_trampoline_active()
sys.deactivate_stack_trampoline()
try:
    os.unlink("/tmp/perf-%d.map" % os.getpid())
except OSError:
    pass
sys.exit(not ok)' 2>/dev/null ||
		skip "needs python3.12 with -X perf support ($p has none)"
	PYTHON312=$p
}

# node with --perf-basic-prof: sets NODE or skips.
need_node() {
	NODE=$(command -v node) || skip "needs node (not on PATH)"
}

# Little-endian integers in binary files, for damaging streams on purpose.
# le32 FILE OFFSET: print the u32 at OFFSET.
le32() {
	od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '
}

# put_le32 FILE OFFSET VALUE: overwrite 4 bytes in place.
put_le32() {
	local v=$3
	# shellcheck disable=SC2059
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((v & 255)) \
		$(((v >> 8) & 255)) $(((v >> 16) & 255)) $(((v >> 24) & 255)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# first_record FILE TYPE: byte offset of the first record of TYPE after the
# stream header (header_size at byte 12), or nothing.
first_record() {
	local file=$1 type=$2 off size len t
	len=$(stat -c %s "$file")
	off=$(le32 "$file" 12)
	while ((off + 8 <= len)); do
		t=$(le32 "$file" "$off")
		size=$(le32 "$file" $((off + 4)))
		if ((t == type)); then
			echo "$off"
			return 0
		fi
		((size >= 8)) || return 1
		off=$((off + size))
	done
	return 1
}
