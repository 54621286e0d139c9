# SPDX-License-Identifier: MIT
# common.bash: what every stackpulse bats file loads: where the tools are,
# the test workloads, targets killed at teardown, pipelines whose every
# stage's exit status is kept, and shares of folded output.
#
# No test waits a fixed time for a thing to happen: a target is started
# when it says it is ready (tests/workloads/wl.h: WL_READY), held until a
# recorder has attached when the test needs its work to come after that
# (WL_GO), and every wait is a poll with a bound far above what the step
# needs (wait_until).  Counts of samples that a test asserts come from a
# target's CPU-time budget (WL_CLOCK=cpu) recorded whole, not from a
# wall-clock window that load would thin out.
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
SP_FLAME="$SP_BIN/sp-flame/sp-flame"
WL_SRC="$SP_ROOT/tests/workloads"
WL_DIR="${SP_WORK:-$BATS_RUN_TMPDIR}/wl"
# no test reads or writes the caches of the user running it, nor those
# another test left: the build-id cache and the symbol cache live here
export XDG_CACHE_HOME="${BATS_TEST_TMPDIR:-$BATS_RUN_TMPDIR}/xdg"
# nor asks the debuginfod servers it uses (tests start their own)
unset DEBUGINFOD_URLS

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
sp_flame() { "$SP_FLAME" "$@"; }

# Fail (not skip) when a tool is missing: a missing tool is a broken build.
require_tools() {
	local t
	for t in "$SP_RECORD" "$SP_UNWIND" "$SP_SYMBOLIZE" "$SP_FOLD" "$SP_FLAME"; do
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

# build_workload_files SOURCE...: compile each tests/workloads source into
# $WL_DIR (-O2 -g -fomit-frame-pointer, with lib/ on the include path for
# those that write streams), only when it is missing or older than its
# source or the workload headers, so a test run builds each once.
build_workload_files() {
	local c bin tmp
	mkdir -p "$WL_DIR" || return 1
	for c in "$@"; do
		bin="$WL_DIR/$(basename "$c" .c)"
		if [[ ! -x $bin || $c -nt $bin || $WL_SRC/wl.h -nt $bin || $WL_SRC/wl-jit.h -nt $bin ]]; then
			tmp="$bin.tmp.$$"
			"${WL_CC:-cc}" -O2 -g -fomit-frame-pointer -pthread \
				-I"$SP_ROOT/lib" -o "$tmp" "$c" || return 1
			mv -f "$tmp" "$bin" || return 1
		fi
	done
}

# Compile tests/workloads/wl-*.c into $WL_DIR (build_workload_files).
build_workloads() {
	build_workload_files "$WL_SRC"/wl-*.c
}

# now_ms: the wall clock in milliseconds (for bounds on how long a thing
# took; the decimal separator of EPOCHREALTIME follows the locale).
now_ms() {
	local us=${EPOCHREALTIME//[!0-9]/}
	echo $((us / 1000))
}

# wait_until SECONDS WHAT CMD [ARGS...]: run CMD every 10 ms until it
# succeeds (exit status 0); fail, naming WHAT, if it has not after SECONDS,
# or at once if CMD exits with 2 or more: what it waits for cannot come
# (CMD says why, with fatal).  The bound only keeps a broken run from
# hanging: it is far above what any step needs.
wait_until() {
	local limit=$1 what=$2 end rc
	shift 2
	end=$(($(now_ms) + limit * 1000))
	while :; do
		"$@" && return 0
		rc=$?
		((rc == 1)) || fail "gave up waiting for $what"
		(($(now_ms) < end)) || fail "waited $limit s for $what"
		sleep 0.01
	done
}

# fatal MESSAGE: for the conditions of wait_until: say why what it waits
# for cannot come, and return 2.
fatal() {
	echo "# $*" >&2
	return 2
}

# file_has FILE BYTES: FILE holds at least BYTES bytes.
file_has() {
	local n
	n=$(stat -c %s "$1" 2>/dev/null) || return 1
	((n >= $2))
}

# target_ready PID FILE: the target created FILE (fatal if it died
# instead).
target_ready() {
	[[ -e $2 ]] && return 0
	if gone "$1"; then
		[[ -e $2 ]] && return 0
		fatal "target $1 died before it was ready: $(cat "${BATS_TEST_TMPDIR:-$BATS_FILE_TMPDIR}/target.err" 2>/dev/null)"
		return
	fi
	return 1
}

# target_execd PID PROGRAM: the target runs PROGRAM (fatal if it died).
target_execd() {
	[[ $(readlink "/proc/$1/exe" 2>/dev/null) == "$2" ]] && return 0
	target_ready "$1" /nonexistent
}

# start_cmd [--exec|--go] CMD [ARGS...]: run a target in the background,
# note it for stop_targets, and wait until it is ready: it has exec'd CMD
# and, being one of tests/workloads, created the file $WL_READY names once
# it reached its designed work (wl.h's wl_ready).  --exec waits for the
# exec only (a program that knows no handshake).  --go also sets $WL_GO:
# the workload then waits, before its designed work, until release_target;
# what it does after that happens after a recorder attached before it.
# Sets TARGET_PID and TARGET_GO (the file that releases it).  Variables
# assigned before the call reach the target: WL_CLOCK=cpu start_target ...
# In setup_file the files go to BATS_FILE_TMPDIR.
start_cmd() {
	local mode=ready want ready go='' dir=${BATS_TEST_TMPDIR:-$BATS_FILE_TMPDIR}
	case $1 in
	--exec | --go) mode=${1#--} && shift ;;
	esac
	TARGET_N=$((${TARGET_N:-0} + 1))
	ready=$dir/ready.$TARGET_N
	TARGET_GO=$dir/go.$TARGET_N
	[[ $mode == go ]] && go=$TARGET_GO
	WL_READY=$ready WL_GO=$go \
		"$@" >/dev/null 2>>"$dir/target.err" 3>&- &
	TARGET_PID=$!
	echo "$TARGET_PID" >>"$dir/targets"
	want=$(readlink -f "$(command -v "$1")")
	wait_until 30 "target $* to exec $want" \
		target_execd "$TARGET_PID" "$want"
	[[ $mode == exec ]] ||
		wait_until 30 "target $* to be ready ($ready)" \
			target_ready "$TARGET_PID" "$ready"
}

# fd_is PID FD FILE: descriptor FD of process PID is open on FILE (fatal
# when PID has ended).
fd_is() {
	[[ $(readlink "/proc/$1/fd/$2" 2>/dev/null) == "$3" ]] && return 0
	target_ready "$1" /nonexistent
}

# start_dd: start dd copying /dev/zero to /dev/null one byte at a time
# (nearly all of its time in read(2) and write(2)) and wait until it does.
start_dd() {
	start_cmd --exec dd if=/dev/zero of=/dev/null bs=1 count=4000000000
	wait_until 30 "dd to open /dev/zero" fd_is "$TARGET_PID" 0 /dev/zero
}

# release_target [GO]: let the target started with start_cmd --go (or the
# one whose go file is GO) begin its designed work.
# shellcheck disable=SC2120	# GO is for a target started before the last
release_target() {
	: >"${1:-$TARGET_GO}"
}

# start_target [--go] NAME [ARGS...]: start workload NAME (built by
# build_workloads), e.g. start_target wl-single 5.
start_target() {
	local opt=()
	[[ $1 == --go ]] && opt=(--go) && shift
	local name=$1
	shift
	[[ -x $WL_DIR/$name ]] || fail "workload $name not built: call build_workloads"
	start_cmd "${opt[@]}" "$WL_DIR/$name" "$@"
}

# kill_tree PID: SIGKILL PID and every process below it.
kill_tree() {
	local kid
	# shellcheck disable=SC2013	# the files are lines of PIDs
	for kid in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		kill_tree "$kid"
	done
	kill -KILL "$1" 2>/dev/null
}

# Kill every pipeline (sp_pipeline_start) and target this test (or
# setup_file) started (and their children), reap them and remove the perf
# maps they left.
stop_targets() {
	local pid kid dir=${BATS_TEST_TMPDIR:-$BATS_FILE_TMPDIR}
	if [[ -f $dir/pipelines ]]; then
		while read -r pid; do
			kill_tree "$pid"
			wait "$pid" 2>/dev/null
		done <"$dir/pipelines"
		rm -f "$dir/pipelines"
	fi
	[[ -f $dir/targets ]] || return 0
	while read -r pid; do
		# shellcheck disable=SC2013	# the file is one line of PIDs
		for kid in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
			kill -KILL "$kid" 2>/dev/null
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rm -f "/tmp/perf-$pid.map"
	done <"$dir/targets"
	rm -f "$dir/targets"
	return 0
}

teardown() {
	stop_targets
}

# what setup_file started (a target held by a setup_file that failed)
teardown_file() {
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
# name in PIPE_NAMES).  Check them with assert_pipeline_ok.  sp-record gets
# a 32 MiB ring (-m 8192; a later -m wins): behind three sanitized stages on
# a loaded machine it may wait on a full pipe for longer than the default
# 8 MiB holds at -F 999, and a lost event fails the pipeline.
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
	stage sp-record "$SP_RECORD" -m 8192 "${rec[@]}" |
		stage tee tee "$PIPE_OUT.raw" |
		stage sp-unwind "$SP_UNWIND" |
		stage sp-symbolize "$SP_SYMBOLIZE" |
		stage sp-fold "$SP_FOLD" "${fold[@]}" >"$PIPE_OUT"
	collect_stages sp-record tee sp-unwind sp-symbolize sp-fold
}

# sp_pipeline_start OUT RECORD-ARGS... [-- FOLD-ARGS...]: sp_pipeline in
# the background, its PID in PIPE_PID; then recording_started waits until
# sp-record has attached and sp_pipeline_wait until it is over.
sp_pipeline_start() {
	PIPE_OUT=$1
	sp_pipeline "$@" 3>&- &
	PIPE_PID=$!
	echo "$PIPE_PID" >>"$BATS_TEST_TMPDIR/pipelines"
}

# sp_pipeline_wait: wait for sp_pipeline_start's pipeline; sets PIPE_NAMES
# and PIPE_STATUS as sp_pipeline does.
sp_pipeline_wait() {
	wait "$PIPE_PID" || true
	collect_stages sp-record tee sp-unwind sp-symbolize sp-fold
}

# stream_begun RAW PID: the raw stream RAW holds its header, which sp-record
# writes once it has attached (and resumed the targets); fatal when PID,
# the recorder or its pipeline, has ended without one.
stream_begun() {
	file_has "$1" 120 && return 0
	if gone "$2"; then
		file_has "$1" 120 && return 0
		fatal "the recorder ended before it wrote a stream header to $1:" \
			"$(cat "$1.err" "${PIPE_OUT:-/nonexistent}".*.err 2>/dev/null)"
		return
	fi
	return 1
}

# recording_started [RAW PID]: wait until sp-record, whose stream goes to RAW
# (default: sp_pipeline_start's tee copy), has attached.
recording_started() {
	local raw=${1:-$PIPE_OUT.raw} pid=${2:-$PIPE_PID}
	wait_until 60 "sp-record to attach (a header in $raw)" \
		stream_begun "$raw" "$pid"
}

# attach_reported ERR PID: sp-record PID has written its attach report
# ("sp-record: attached N threads in X ms") to ERR, its stderr; fatal when
# PID ended without one.
attach_reported() {
	grep -q '^sp-record: attached ' "$1" 2>/dev/null && return 0
	if gone "$2"; then
		grep -q '^sp-record: attached ' "$1" 2>/dev/null && return 0
		fatal "sp-record ended without an attach report: $(cat "$1")"
		return
	fi
	return 1
}

# wait_attached ERR PID: wait until sp-record PID has attached in stop mode
# and resumed its targets, as its attach report on ERR says.
wait_attached() {
	wait_until 60 "sp-record's attach report in $1" attach_reported "$1" "$2"
}

# gone PID: process PID has ended: no thread of it is left but zombies (a
# main thread that exited before the others stays one until they have).
gone() {
	local f st
	for f in /proc/"$1"/task/*/stat; do
		st=$(sed -n 's/.*) \(.\) .*/\1/p' "$f" 2>/dev/null)
		[[ -z $st || $st == [ZX] ]] || return 1
	done
	return 0
}

# record_released RAW [ARGS...]: sp-record -p $TARGET_PID -o RAW ARGS...
# for a target started with start_cmd --go, which is released once
# sp-record has attached: without -d, the recording holds the whole of the
# target's designed work (with WL_CLOCK=cpu the same number of samples
# however loaded the machine).  Sets status (sp-record's exit status), and
# stderr and output (its stderr, also in RAW.err) as run would.
record_released() {
	local raw=$1 pid
	shift
	"$SP_RECORD" -p "$TARGET_PID" -o "$raw" "$@" 2>"$raw.err" 3>&- &
	pid=$!
	recording_started "$raw" "$pid"
	release_target
	status=0
	wait "$pid" || status=$?
	stderr=$(cat "$raw.err")
	output=$stderr
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

# same_without_memo RAW: sp-unwind writes the same unwound stream of RAW
# with and without what it takes from a thread's last stack (--no-memo).
same_without_memo() {
	local raw=$1
	run "$SP_UNWIND" -q -o "$raw.unw" "$raw"
	((status <= 1)) || fail "sp-unwind failed ($status): $output"
	run "$SP_UNWIND" -q --no-memo -o "$raw.nomemo.unw" "$raw"
	((status <= 1)) || fail "sp-unwind --no-memo failed ($status): $output"
	cmp "$raw.unw" "$raw.nomemo.unw" ||
		fail "sp-unwind wrote another stream of $raw with --no-memo"
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

# Go, for go tool pprof and Go test programs: sets GO or skips (fails in
# CI, which installs golang-go).
need_go() {
	GO=$(command -v go) && return 0
	[[ ${CI:-} == true ]] && fail "go is not installed: .ci/run installs golang-go"
	skip "needs go (Debian package golang-go)"
}

# The browser tests' npm packages (tests/browser): sets BROWSER_DIR or
# skips (fails in CI, which installs them).
need_browser() {
	BROWSER_DIR=$SP_ROOT/tests/browser
	local why=
	command -v node >/dev/null || why="node"
	[[ -x /usr/bin/chromium ]] || why="$why chromium (Debian package chromium)"
	[[ -d $BROWSER_DIR/node_modules/speedscope ]] ||
		why="$why the npm packages of tests/browser (npm ci there)"
	[[ -z $why ]] && return 0
	[[ ${CI:-} == true ]] && fail "missing:$why; .ci/run installs them"
	skip "needs$why"
}

# The frames of an SVG of sp-flame (one <g> per line, in the order of a
# walk of the tree, docs/formats.md), one per line:
#   depth TAB name TAB count TAB x TAB width TAB fill TAB label
# The depth comes from the rect's y against the root's ("all", the first
# frame), for frames of 16 pixels (sp-flame's default --height); names and
# labels stay XML-escaped.
svg_frames() {
	awk -v fh="${2:-16}" '
		/^<g><title>/ {
			t = $0; sub(/^<g><title>/, "", t); sub(/<\/title>.*/, "", t)
			name = t; sub(/ \([0-9.]+ [^(]*$/, "", name)
			count = substr(t, length(name) + 3); sub(/ .*/, "", count)
			y = attr("y"); if (n++ == 0) y0 = y
			label = ""
			if (match($0, /<text[^>]*>[^<]*<\/text>/)) {
				label = substr($0, RSTART, RLENGTH)
				sub(/^<text[^>]*>/, "", label); sub(/<\/text>$/, "", label)
			}
			d = (y0 - y) / fh; if (d < 0) d = -d
			printf "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", d, name, count,
				attr("x"), attr("width"), attr("fill"), label
		}
		function attr(a,   s) {
			if (!match($0, "<rect[^>]* " a "=\"[^\"]*\""))
				return ""
			s = substr($0, RSTART, RLENGTH); sub(/.*="/, "", s)
			return substr(s, 1, length(s) - 1)
		}' "$1"
}

# svg_paths SVG: "all;frame;...;frame COUNT SELF" per frame of an SVG of
# sp-flame: the path rebuilt from the depths of the walk, the cumulative
# count of the title, and what is left of it after its children.
svg_paths() {
	svg_frames "$1" | awk -F '\t' '
		{
			path[$1] = ($1 ? path[$1 - 1] ";" : "") $2
			p[NR] = path[$1]; c[NR] = $3; self[NR] = $3
			dec[NR] = index($3, ".") ? length($3) - index($3, ".") : 0
			if ($1) self[up[$1 - 1]] -= $3
			up[$1] = NR
		}
		END {
			for (i = 1; i <= NR; i++)
				printf "%s %s " "%." dec[i] "f\n", p[i], c[i], self[i]
		}'
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

# raw_count FILE TYPE [bytes]: how many records of TYPE the stream FILE
# (raw or unwound: the stream header's size is the u32 at byte 12) holds,
# or with "bytes" how many bytes they take.
raw_count() {
	# shellcheck disable=SC2016	# perl's variables
	perl -e '
		open(my $f, "<:raw", $ARGV[0]) or die "$ARGV[0]: $!\n";
		read($f, my $h, 16) == 16 or die "$ARGV[0]: no stream header\n";
		seek($f, unpack("x12 L", $h), 0);
		my $n = 0;
		while (read($f, my $r, 8) == 8) {
			my ($t, $size) = unpack("LL", $r);
			last if $size < 8;
			$n += $ARGV[2] eq "bytes" ? $size : 1 if $t == $ARGV[1];
			seek($f, $size - 8, 1);
		}
		print "$n\n";' "$1" "$2" "${3:-count}"
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

# The stream is whole: raw magic first, SUMMARY (type 10, 80 bytes) last.
assert_stream() {
	[[ $(head -c 5 "$1") == SPRAW ]] || fail "$1 is not a raw stream"
	[[ $(tail -c 80 "$1" | od -An -tu4 -N8 | tr -s ' ') == ' 10 80' ]] ||
		fail "$1 does not end with a summary record"
}

# child_runs PID PROGRAM: a child of PID has exec'd PROGRAM (fatal when PID
# has ended).
child_runs() {
	local kid
	if gone "$1"; then
		fatal "process $1 ended"
		return
	fi
	# shellcheck disable=SC2013	# the files are lines of PIDs
	for kid in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		[[ $(readlink "/proc/$kid/exe" 2>/dev/null) == "$2" ]] && return 0
	done
	return 1
}

# cpu_grew PID TICKS: PID has used more than TICKS clock ticks of CPU.
cpu_grew() {
	(($(cpu_ticks "$1") > $2))
}

# The CPU time of process PID in clock ticks (utime + stime).
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# The stream starts with the raw magic and a version 1 header of 120
# bytes, and ends with a SUMMARY record (type 10, size 80).
assert_stream_exact() {
	run sh -c "head -c 8 '$1' | od -An -c | tr -d ' '"
	assert_output 'SPRAW\0\0\0'
	run sh -c "od -An -tu4 -j8 -N8 '$1' | tr -s ' '"
	assert_output ' 1 120'
	run sh -c "tail -c 80 '$1' | od -An -tu4 -N8 | tr -s ' '"
	assert_output ' 10 80'
}
