#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# faults.bats: the fault matrix (docs/FAULTS.md): a reader that dies in the
# middle of a pipeline, signals to each stage, permission errors and their
# causes, damaged and cut spool end markers, write errors and full disks,
# a recorder killed while it holds 500 threads, fork and exec storms, a low
# descriptor limit, a spool read while it is written, a stream above 4 GiB.
# Workloads: tests/workloads/wl-*.c, lc-many.c and ft-*.c.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
# shellcheck disable=SC2016	# pipelines are text that pipeline_bg evals
load common

SP_SPOOL="$SP_BIN/sp-spool/sp-spool"
TOOLS=(sp-record sp-unwind sp-symbolize sp-fold sp-flame sp-spool)

setup_file() {
	local d=$BATS_FILE_TMPDIR

	# an unwound stream without perf events: 3 stacks, 60000 samples,
	# with the header of this version (a spool gives back that one)
	{
		echo "header cpu-clock freq 99"
		echo "comm 7 7 faults"
		echo "stack 7 1 complete - 0x401000,0x402000"
		echo "stack 7 2 complete - 0x401100,0x402000"
		echo "stack 7 3 truncated - 0x401200"
		for i in 1 2 3; do
			echo "samples 20000 7 $i"
		done
		echo "summary 60000"
	} | perl "$BATS_TEST_DIRNAME/mkstream.pl" >"$d/s0.unw"
	if ! "$SP_SPOOL" write -q "$d/s0.spool" <"$d/s0.unw" ||
		! "$SP_SPOOL" cat "$d/s0.spool" >"$d/s.unw"; then
		fail "cannot spool the made-up stream"
	fi
	# in 4 KiB blocks, and in 1 MiB blocks: a short trailer
	if ! "$SP_SPOOL" write -q -b 4096 "$d/s.spool" <"$d/s.unw" ||
		! "$SP_SPOOL" write -q "$d/d.spool" <"$d/s.unw"; then
		fail "cannot write a spool of the made-up stream"
	fi
}

setup() {
	require_tools
	[[ -x $SP_SPOOL ]] || fail "sp-spool is not built at $SP_SPOOL: run make"
	T=$BATS_TEST_TMPDIR
	D=$BATS_FILE_TMPDIR
	RECPID=
}

teardown() {
	if [[ -n $RECPID ]]; then
		kill -KILL "$RECPID" 2>/dev/null
		wait "$RECPID" 2>/dev/null
	fi
	stop_targets
}

# Build tests/workloads/wl-*.c, lc-many.c and ft-*.c (ft-bigraw with the
# stream headers of lib/) into $WL_DIR, each when missing or stale.
build_fault_workloads() {
	build_workloads && build_workload_files "$WL_SRC"/lc-many.c "$WL_SRC"/ft-*.c
}

# fstage NAME CMD [ARGS...]: one stage of a pipeline, run in the background
# of its subshell so that its PID is known: in $P.NAME.pid, its stderr in
# $P.NAME.err, its exit status in $P.NAME.status.  SIGINT and SIGQUIT,
# which bash ignores in what it starts in the background, are as in a
# terminal's pipeline again.
fstage() {
	local name=$1 pid st=0
	shift
	env --default-signal=INT,QUIT "$@" <&0 2>"$P.$name.err" &
	pid=$!
	echo "$pid" >"$P.$name.pid"
	wait "$pid" || st=$?
	echo "$st" >"$P.$name.status"
}

# pipeline_bg NAME... -- PIPELINE: run the shell text PIPELINE (stages
# written with fstage, $P set) in the background, noted for teardown;
# wait until each named stage has its PID file.  Sets PIPE_PID.
pipeline_bg() {
	local names=() n
	while [[ $1 != -- ]]; do
		names+=("$1")
		shift
	done
	shift
	eval "{ $1; } 3>&- &"
	PIPE_PID=$!
	echo "$PIPE_PID" >>"$T/pipelines"
	for n in "${names[@]}"; do
		wait_until 30 "stage $n to start" file_has "$P.$n.pid" 1
	done
}

# pid_of NAME: the PID of stage NAME.
pid_of() {
	cat "$P.$1.pid"
}

# status_of NAME: the exit status of stage NAME ("lost" if it has none).
status_of() {
	cat "$P.$1.status" 2>/dev/null || echo lost
}

# all_gone PID...: none of the processes is left but as a zombie.
all_gone() {
	local p
	for p in "$@"; do
		gone "$p" || return 1
	done
}

# read_at_least PID BYTES: process PID has read BYTES bytes (rchar of
# /proc/PID/io); fatal when it has ended.
read_at_least() {
	io_at_least "$1" rchar "$2"
}

# wrote_at_least PID BYTES: process PID has written BYTES bytes (wchar).
wrote_at_least() {
	io_at_least "$1" wchar "$2"
}

io_at_least() {
	local n
	n=$(awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/io" 2>/dev/null)
	[[ -n $n ]] || {
		fatal "process $1 ended"
		return
	}
	((n >= $3))
}

# The states of every thread of PID, one letter each (one process for
# all of them: a target may have 501).
thread_states() {
	awk '{ s = $0; sub(/.*\) /, "", s); printf "%s", substr(s, 1, 1) }' \
		/proc/"$1"/task/*/stat 2>/dev/null
}

# not_stopped PID: no thread of PID is stopped (T) or stopped by ptrace (t).
not_stopped() {
	[[ $(thread_states "$1") != *[Tt]* ]]
}

# all_traced PID N: the N threads of PID are all stopped by ptrace.
all_traced() {
	local s
	s=$(thread_states "$1")
	((${#s} == $2)) && [[ $s =~ ^t+$ ]]
}

# untraced PID: no thread of PID has a tracer.
untraced() {
	awk '$1 == "TracerPid:" && $2 != 0 { bad = 1 } END { exit bad }' \
		/proc/"$1"/task/*/status 2>/dev/null
}

# The number of descriptors process PID has open.
fd_count() {
	find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# assert_target_runs PID: the target lives, no thread is stopped or traced.
assert_target_runs() {
	kill -0 "$1" || fail "target $1 died"
	not_stopped "$1" || fail "target $1 left stopped: $(thread_states "$1")"
	untraced "$1" || fail "target $1 left traced"
}

# assert_clean FILE...: no sanitizer report in stderr files.
assert_clean() {
	local f
	for f in "$@"; do
		if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$f" 2>/dev/null; then
			cat "$f"
			fail "sanitizer report in $f"
		fi
	done
}

# The samples sp-record reported on its stderr ERR.
samples_of() {
	sed -n 's/^sp-record: \([0-9]*\) samples, .*/\1/p' "$1"
}

# show_stages NAME...: the status and stderr of each stage, for a failure.
show_stages() {
	local n
	for n in "$@"; do
		echo "# $n exited $(status_of "$n"):"
		sed 's/^/#   /' "$P.$n.err" 2>/dev/null | head -5
	done
}

# A reader dies ------------------------------------------------------------

# kill_in_pipeline VICTIM: in sp-record -p -F 99 -d 60 | sp-unwind |
# sp-symbolize | sp-fold, once data flows, SIGKILL stage VICTIM: every
# stage is gone within 5 s (the recording would run 60), those before it
# quietly (0), those after it with a one-line error (2) and sp-fold with no
# output; the target runs on, neither stopped nor traced.
kill_in_pipeline() {
	local victim=$1 n t0 ms before=1 st want
	local names=(rec unw sym fold) pids=()
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	P=$T/p
	pipeline_bg "${names[@]}" -- 'fstage rec "$SP_RECORD" -p "$TARGET_PID" -F 99 -d 60 |
		fstage unw "$SP_UNWIND" | fstage sym "$SP_SYMBOLIZE" |
		fstage fold "$SP_FOLD" -o "$P.folded"'
	for n in "${names[@]}"; do
		pids+=("$(pid_of "$n")")
	done
	wait_attached "$P.rec.err" "$(pid_of rec)"
	# samples flow through every stage: sp-symbolize writes to sp-fold
	wait_until 60 "sp-symbolize to write 4 KiB" wrote_at_least "$(pid_of sym)" 4096
	t0=$(now_ms)
	kill -KILL "$(pid_of "$victim")"
	wait_until 5 "the pipeline to end after $victim was killed" all_gone "${pids[@]}"
	ms=$(($(now_ms) - t0))
	wait "$PIPE_PID" || true
	echo "# $victim killed: the pipeline ended in $ms ms" >&3
	for n in "${names[@]}"; do
		st=$(status_of "$n")
		if [[ $n == "$victim" ]]; then
			want=137 before=0
		elif ((before)); then
			want=0
		else
			want=2
		fi
		if [[ $st != "$want" ]]; then
			show_stages "${names[@]}"
			fail "$n exited $st, want $want"
		fi
		if [[ $want == 2 ]] && ! [[ $(cat "$P.$n.err") =~ ^sp-[a-z]+:\ truncated\ .*\ at\ (byte|line)\ [0-9]+\ of\ \'stdin\'$ ]]; then
			show_stages "${names[@]}"
			fail "$n: not one line naming the cut input"
		fi
	done
	# the attach report, and nothing more: no summary of a dropped recording
	assert_equal "$(wc -l <"$P.rec.err")" 1
	[[ ! -e $P.folded ]] || fail "sp-fold wrote $P.folded from a cut stream"
	assert_target_runs "$TARGET_PID"
	assert_clean "$P".*.err
}

@test "SIGKILL of sp-fold mid-run: the pipeline ends within 5 s, the target runs on" {
	kill_in_pipeline fold
}

@test "SIGKILL of sp-symbolize mid-run: the pipeline ends within 5 s, the target runs on" {
	kill_in_pipeline sym
}

@test "SIGKILL of sp-unwind mid-run: the pipeline ends within 5 s, the target runs on" {
	kill_in_pipeline unw
}

@test "SIGKILL of sp-spool write at the end of a pipeline: the rest ends, the spool reads as cut" {
	local t0 ms
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	P=$T/p
	# -t 0.1: blocks come often, so the spool holds some when it is killed
	pipeline_bg rec unw spool -- 'fstage rec "$SP_RECORD" -p "$TARGET_PID" -F 99 -d 60 |
		fstage unw "$SP_UNWIND" | fstage spool "$SP_SPOOL" write -t 0.1 "$T/k.spool"'
	wait_attached "$P.rec.err" "$(pid_of rec)"
	wait_until 60 "sp-spool to write a block" file_has "$T/k.spool" 129
	t0=$(now_ms)
	kill -KILL "$(pid_of spool)"
	wait_until 5 "sp-record and sp-unwind to end" all_gone "$(pid_of rec)" "$(pid_of unw)"
	ms=$(($(now_ms) - t0))
	wait "$PIPE_PID" || true
	echo "# sp-spool write killed: the pipeline ended in $ms ms" >&3
	assert_equal "$(status_of rec) $(status_of unw) $(status_of spool)" "0 0 137"
	run --separate-stderr "$SP_SPOOL" verify "$T/k.spool"
	assert_equal "$status" 1
	[[ $stderr =~ ^sp-spool:\ \'.*k.spool\'\ is\ cut\ at\ byte\ [0-9]+\ after\ block\ [0-9]+: ]] ||
		fail "no cut after a block: $stderr"
	assert_target_runs "$TARGET_PID"
}

@test "head -c 100 after sp-unwind, after sp-symbolize: the pipeline ends once head has its bytes" {
	local t0 ms
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	P=$T/u
	pipeline_bg rec unw head -- 'fstage rec "$SP_RECORD" -p "$TARGET_PID" -F 99 -d 60 |
		fstage unw "$SP_UNWIND" | fstage head head -c 100 >/dev/null'
	wait_until 60 "head to get its 100 bytes" all_gone "$(pid_of head)"
	t0=$(now_ms)
	wait_until 5 "sp-record and sp-unwind to end after head" all_gone "$(pid_of rec)" "$(pid_of unw)"
	ms=$(($(now_ms) - t0))
	wait "$PIPE_PID" || true
	echo "# after sp-unwind: ended $ms ms after head" >&3
	assert_equal "$(status_of rec) $(status_of unw) $(status_of head)" "0 0 0"

	P=$T/s
	pipeline_bg rec unw sym head -- 'fstage rec "$SP_RECORD" -p "$TARGET_PID" -F 99 -d 60 |
		fstage unw "$SP_UNWIND" | fstage sym "$SP_SYMBOLIZE" |
		fstage head head -c 100 >/dev/null'
	wait_until 60 "head to get its 100 bytes" all_gone "$(pid_of head)"
	t0=$(now_ms)
	wait_until 5 "the stages before head to end" \
		all_gone "$(pid_of rec)" "$(pid_of unw)" "$(pid_of sym)"
	ms=$(($(now_ms) - t0))
	wait "$PIPE_PID" || true
	echo "# after sp-symbolize: ended $ms ms after head" >&3
	assert_equal "$(status_of rec) $(status_of unw) $(status_of sym) $(status_of head)" "0 0 0 0"
	assert_target_runs "$TARGET_PID"
	assert_clean "$T"/[us].*.err
}

# Signals ------------------------------------------------------------------

@test "SIGHUP ends a recording as SIGINT does: summary, a whole stream sp-unwind takes" {
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	"$SP_RECORD" -p "$TARGET_PID" -o "$T/h.raw" 2>"$T/h.err" 3>&- &
	RECPID=$!
	wait_attached "$T/h.err" "$RECPID"
	kill -HUP "$RECPID"
	status=0
	wait "$RECPID" || status=$?
	RECPID=
	assert_equal "$status" 0
	grep -qE '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, ' "$T/h.err" ||
		fail "no summary: $(cat "$T/h.err")"
	assert_stream "$T/h.raw"
	run_io "$SP_UNWIND" "$T/h.raw" "$T/h.unw"
	assert_success
	assert_target_runs "$TARGET_PID"
}

@test "launch: SIGHUP is passed to COMMAND, the stream is complete" {
	local sleep_bin
	sleep_bin=$(readlink -f "$(command -v sleep)")
	"$SP_RECORD" -o "$T/l.raw" -- sleep 300 2>"$T/l.err" 3>&- &
	RECPID=$!
	wait_until 30 "sp-record to run sleep" child_runs "$RECPID" "$sleep_bin"
	kill -HUP "$RECPID"
	status=0
	wait "$RECPID" || status=$?
	RECPID=
	assert_equal "$status" 129
	assert_stream "$T/l.raw"
	assert_clean "$T/l.err"
}

# signal_to_recorder SIG: sp-record -p | sp-unwind | sp-symbolize |
# sp-fold, SIG to sp-record alone once samples flow: every stage ends
# well and sp-fold counts every sample sp-record reported.
signal_to_recorder() {
	local sig=$1 names=(rec unw sym fold) n
	P=$T/$sig
	pipeline_bg "${names[@]}" -- 'fstage rec "$SP_RECORD" -p "$TARGET_PID" -F 99 |
		fstage unw "$SP_UNWIND" | fstage sym "$SP_SYMBOLIZE" |
		fstage fold "$SP_FOLD" -o "$P.folded"'
	wait_attached "$P.rec.err" "$(pid_of rec)"
	wait_until 60 "sp-unwind to read 64 KiB" read_at_least "$(pid_of unw)" 65536
	kill -"$sig" "$(pid_of rec)"
	wait "$PIPE_PID" || true
	# sp-unwind and sp-symbolize may say 1: some stacks left partial
	if ! [[ "$(status_of rec) $(status_of unw) $(status_of sym) $(status_of fold)" =~ ^0\ [01]\ [01]\ 0$ ]]; then
		show_stages "${names[@]}"
		fail "SIG$sig to sp-record: a stage failed"
	fi
	n=$(samples_of "$P.rec.err")
	((n > 0)) || fail "SIG$sig: no summary: $(cat "$P.rec.err")"
	assert_equal "SIG$sig: $(fold_count "$P.folded") samples folded" "SIG$sig: $n samples folded"
	assert_clean "$P".*.err
}

@test "SIGHUP, SIGINT or SIGTERM to sp-record in a pipeline: the later stages see the end and finish" {
	local sig
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	for sig in HUP INT TERM; do
		signal_to_recorder "$sig"
	done
	assert_target_runs "$TARGET_PID"
}

# signal_to_stage VICTIM SIG: SIG to stage VICTIM of sp-record -p |
# sp-unwind | sp-symbolize | sp-fold -o FILE: it dies of the signal
# (128 + SIG), the stages before it stop quietly within 5 s, those after
# it report the cut input (2), and FILE is never written.
signal_to_stage() {
	local victim=$1 sig=$2 names=(rec unw sym fold) pids=() n st want before=1
	P=$T/$victim.$sig
	pipeline_bg "${names[@]}" -- 'fstage rec "$SP_RECORD" -p "$TARGET_PID" -F 99 -d 60 |
		fstage unw "$SP_UNWIND" | fstage sym "$SP_SYMBOLIZE" |
		fstage fold "$SP_FOLD" -o "$P.folded"'
	for n in "${names[@]}"; do
		pids+=("$(pid_of "$n")")
	done
	wait_attached "$P.rec.err" "$(pid_of rec)"
	wait_until 60 "sp-symbolize to write 4 KiB" wrote_at_least "$(pid_of sym)" 4096
	kill -"$sig" "$(pid_of "$victim")"
	wait_until 5 "the pipeline to end after SIG$sig to $victim" all_gone "${pids[@]}"
	wait "$PIPE_PID" || true
	for n in "${names[@]}"; do
		st=$(status_of "$n")
		if [[ $n == "$victim" ]]; then
			want=$((128 + $(kill -l "$sig"))) before=0
		elif ((before)); then
			want=0
		else
			want=2
		fi
		if [[ $st != "$want" ]]; then
			show_stages "${names[@]}"
			fail "SIG$sig to $victim: $n exited $st, want $want"
		fi
	done
	[[ ! -e $P.folded ]] || fail "SIG$sig to $victim: sp-fold wrote $P.folded from a cut stream"
	assert_clean "$P".*.err
}

@test "SIGHUP, SIGINT or SIGTERM to a later stage: it dies of it, the others stop, nothing claims to be whole" {
	local victim sig
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	for victim in unw sym fold; do
		for sig in HUP INT TERM; do
			signal_to_stage "$victim" "$sig"
		done
	done
	assert_target_runs "$TARGET_PID"
}

# ctrl_c PIPELINE: run the bash text PIPELINE on a pseudo-terminal of its
# own, as a shell runs what is typed at it, and once $P.raw (which it must
# write, with tee -i) holds 64 KiB, type ^C: the terminal sends SIGINT to
# every process of the pipeline at once.  Fails when the pipeline is not
# over 60 s later.  Its output in $P.tty.
ctrl_c() {
	cat >"$T/ctrlc.py" <<'EOF_PY'
import os, pty, select, signal, sys, time
raw, script = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    # as at a terminal: what bats ignores is not ignored there
    for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.execvp("bash", ["bash", "-c", script])
out = open(raw + ".tty", "wb")
def drain(t):
    r, _, _ = select.select([fd], [], [], t)
    if r:
        try:
            out.write(os.read(fd, 65536))
        except OSError:
            pass
end = time.time() + 60
while time.time() < end and (not os.path.exists(raw) or
                             os.path.getsize(raw) < 65536):
    drain(0.05)
os.write(fd, b"\x03")
while time.time() < end:
    drain(0.05)
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        sys.exit(os.waitstatus_to_exitcode(status) & 255)
os.kill(pid, 9)
sys.exit("the pipeline did not end within 60 s of ^C")
EOF_PY
	SP_RECORD=$SP_RECORD SP_UNWIND=$SP_UNWIND SP_SYMBOLIZE=$SP_SYMBOLIZE \
		SP_FOLD=$SP_FOLD SP_FLAME=$SP_FLAME SP_SPOOL=$SP_SPOOL \
		python3 "$T/ctrlc.py" "$P.raw" "$1"
}

@test "^C at the terminal: sp-record ends the stream, every later stage finishes, the profile is whole" {
	python3 -c 'import os, pty; m, s = pty.openpty(); os.close(m); os.close(s)' ||
		skip "no pseudo-terminal to type ^C at (/dev/ptmx)"
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	P=$T/tty
	# shellcheck disable=SC2016	# expanded by the shell on the terminal
	run ctrl_c 'export P="'"$P"'"
		"$SP_RECORD" -p '"$TARGET_PID"' -F 999 -m 8192 2>"$P.rec.err" |
		tee -i "$P.raw" | "$SP_UNWIND" 2>"$P.unw.err" |
		"$SP_SYMBOLIZE" 2>"$P.sym.err" | "$SP_FOLD" 2>"$P.fold.err" |
		"$SP_FLAME" -o "$P.svg" 2>"$P.flame.err"
		echo "${PIPESTATUS[*]}" >"$P.status"'
	assert_success
	assert_equal "$(cat "$P.status")" "0 0 0 0 0 0"
	grep -qE '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, ' "$P.rec.err" ||
		fail "no summary: $(cat "$P.rec.err")"
	assert_stream "$P.raw"
	grep -q 'wl-single' "$P.svg" || fail "no wl-single in the flame graph"
	assert_clean "$P".*.err
	# the spool of a pipeline ^C ended is whole, not cut
	P=$T/spool
	run ctrl_c 'export P="'"$P"'"
		"$SP_RECORD" -p '"$TARGET_PID"' -F 999 -m 8192 2>"$P.rec.err" |
		tee -i "$P.raw" | "$SP_UNWIND" 2>"$P.unw.err" |
		"$SP_SPOOL" write "$P.spool" 2>"$P.spool.err"
		echo "${PIPESTATUS[*]}" >"$P.status"'
	assert_success
	assert_equal "$(cat "$P.status")" "0 0 0 0"
	run "$SP_SPOOL" verify "$P.spool"
	assert_success
	assert_target_runs "$TARGET_PID"
}

@test "sp-spool write at SIGINT, SIGTERM, SIGHUP: writes what it read, the spool reads as cut with all of it" {
	local sig n keep got recs
	# whole records: those before the first SAMPLE and 10000 samples
	keep=$(($(first_record "$D/s.unw" 1) + 10000 * 40))
	recs=$(($(raw_count "$D/s.unw" 3) + $(raw_count "$D/s.unw" 9) + 10000))
	for sig in INT TERM HUP; do
		rm -f "$T/in" "$T/$sig.spool"
		mkfifo "$T/in"
		"$SP_SPOOL" write "$T/$sig.spool" <"$T/in" 2>"$T/$sig.err" 3>&- &
		RECPID=$!
		exec 5>"$T/in"
		# a prefix of whole records, held open: sp-spool waits for more
		head -c "$keep" "$D/s.unw" >&5
		wait_until 30 "sp-spool to read what it was given" \
			read_at_least "$RECPID" "$keep"
		kill -"$sig" "$RECPID"
		status=0
		wait "$RECPID" || status=$?
		RECPID=
		exec 5>&-
		assert_equal "SIG$sig: exit $status" "SIG$sig: exit 1"
		n=$(grep -c "^sp-spool: interrupted: '.*$sig.spool' keeps $recs records and no summary, and reads as cut$" "$T/$sig.err")
		assert_equal "SIG$sig: $n" "SIG$sig: 1"
		run --separate-stderr "$SP_SPOOL" verify "$T/$sig.spool"
		assert_equal "SIG$sig: verify $status" "SIG$sig: verify 1"
		[[ $stderr =~ is\ cut\ at\ byte\ [0-9]+\ after\ block ]] || fail "SIG$sig: $stderr"
		# cat gives back every record it read, and a counted summary
		run sh -c "'$SP_SPOOL' cat '$T/$sig.spool' >'$T/$sig.unw'"
		assert_equal "SIG$sig: cat $status" "SIG$sig: cat 1"
		got=$(($(stat -c %s "$T/$sig.unw") - 120))
		assert_equal "SIG$sig: $got bytes" "SIG$sig: $keep bytes"
		cmp -n "$keep" "$D/s.unw" "$T/$sig.unw" || fail "SIG$sig: the records differ"
		assert_clean "$T/$sig.err"
	done
}

# Permissions --------------------------------------------------------------

# need_setpriv: skip unless we may drop to another user and capabilities.
need_setpriv() {
	[[ $(id -u) == 0 ]] || skip "needs root to drop to the nobody user and capabilities"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
}

@test "another user's process: the owner is named as the cause, for perf events and for ptrace" {
	local p mode
	need_setpriv
	build_fault_workloads
	start_target wl-single 300	# root's
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	for mode in live stop; do
		run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			"$SP_RECORD" -p "$TARGET_PID" --attach "$mode" -d 1 -o /dev/null
		assert_failure 2
		assert_equal "${#stderr_lines[@]}" 1
		if [[ $mode == stop ]]; then
			# ptrace is refused before any perf event is opened
			assert_equal "$stderr" "sp-record: cannot pause thread $TARGET_PID of $TARGET_PID to attach: ptrace was denied: process $TARGET_PID belongs to uid 0 and this process runs as uid 65534 without CAP_SYS_PTRACE (CapEff 0000000000000000): run as its owner or root, or grant CAP_SYS_PTRACE"
		elif ((p > 2)); then
			[[ $stderr == "sp-record: not permitted to profile $TARGET_PID: perf_event_open was denied: kernel.perf_event_paranoid is $p, "* ]] ||
				fail "$stderr"
		else
			assert_equal "$stderr" "sp-record: not permitted to profile $TARGET_PID: perf_event_open was denied: process $TARGET_PID belongs to uid 0 and this process runs as uid 65534 without CAP_PERFMON or CAP_SYS_PTRACE (CapEff 0000000000000000): run as its owner or root, or grant CAP_PERFMON"
		fi
		assert_target_runs "$TARGET_PID"
	done
}

@test "root without capabilities: the target's capabilities are named as the cause" {
	local prm
	need_setpriv
	build_fault_workloads
	start_target wl-single 300	# root's, with root's capabilities
	prm=$(awk '$1 == "CapPrm:" { print $2 }' "/proc/$TARGET_PID/status")
	[[ $prm != 0000000000000000 ]] || skip "the target has no capabilities to hold (CapPrm $prm)"
	run --separate-stderr setpriv --bounding-set=-all --inh-caps=-all \
		"$SP_RECORD" -p "$TARGET_PID" --attach live -d 1 -o /dev/null
	assert_failure 2
	assert_equal "$stderr" "sp-record: not permitted to profile $TARGET_PID: perf_event_open was denied: process $TARGET_PID holds capabilities that this process, without CAP_PERFMON or CAP_SYS_PTRACE, is not permitted (its CapPrm $prm; ours 0000000000000000, CapEff 0000000000000000): grant CAP_PERFMON"
	run --separate-stderr setpriv --bounding-set=-all --inh-caps=-all \
		"$SP_RECORD" -p "$TARGET_PID" --attach stop -d 1 -o /dev/null
	assert_failure 2
	assert_equal "$stderr" "sp-record: cannot pause thread $TARGET_PID of $TARGET_PID to attach: ptrace was denied: process $TARGET_PID holds capabilities that this process, without CAP_SYS_PTRACE, is not permitted (its CapPrm $prm; ours 0000000000000000, CapEff 0000000000000000): grant CAP_SYS_PTRACE"
	assert_target_runs "$TARGET_PID"
}

# Spool end markers --------------------------------------------------------

@test "a spool's end marker: a flipped byte is damage at that byte (2), a cut is a cut (1)" {
	local good=$D/d.spool size at cmd bad=0 tstart
	size=$(stat -c %s "$good")
	# every byte of "SPEND\0\0\0", the last 8 of the file
	for ((at = size - 8; at < size; at++)); do
		cp "$good" "$T/f.spool"
		printf '\x5a' | dd of="$T/f.spool" bs=1 seek="$at" conv=notrunc status=none
		[[ $(od -An -tx1 -j "$at" -N1 "$good") != " 5a" ]] ||
			fail "the flip at $at changed nothing"
		for cmd in info cat verify; do
			run --separate-stderr sh -c "exec '$SP_SPOOL' $cmd '$T/f.spool' >/dev/null"
			if ((status != 2)) ||
				[[ $stderr != "sp-spool: bad end marker (a spool ends in \"SPEND\" and 3 zero bytes) at byte $at of '$T/f.spool'" ]]; then
				echo "# $cmd, byte $at flipped: exit $status: $stderr"
				bad=$((bad + 1))
			fi
		done
	done
	# cuts inside the trailer (its offset: the footer's first u64): at its
	# start, in its head, in its index, and every byte of its footer;
	# every cut of a whole spool is test-spool-damage's
	tstart=$(od -An -tu8 -j $((size - 24)) -N8 "$good" | tr -d ' ')
	((tstart > 128 && size - tstart < 1024)) || fail "no short trailer in $good: at $tstart of $size"
	for at in "$tstart" $((tstart + 1)) $((tstart + 8)) $((tstart + 183)) \
		$((tstart + 184)) $((tstart + 200)) $(seq $((size - 24)) $((size - 1))); do
		head -c "$at" "$good" >"$T/c.spool"
		for cmd in verify info cat; do
			run --separate-stderr sh -c "exec '$SP_SPOOL' $cmd '$T/c.spool' >/dev/null"
			if ((status != 1)) || ! [[ $stderr =~ ^sp-spool:\ \'.*c.spool\'\ is\ cut\ at\ byte\ $tstart\ after\ block\ [0-9]+:\ (no\ trailer|the\ file\ ends\ inside\ the\ trailer)$ ]]; then
				echo "# $cmd, cut at $at: exit $status: $stderr"
				bad=$((bad + 1))
			fi
		done
	done
	((bad == 0)) || fail "$bad cases failed"
}

# Write errors -------------------------------------------------------------

@test "--help: every option starts a line of its own, every tool" {
	local t bad=0
	for t in "${TOOLS[@]}" sp-push; do
		run "$SP_BIN/$t/$t" --help
		assert_success
		# an option run on after the text of the one before it
		if grep -nE '[^ ]  +(-[a-zA-Z], )?--[a-z]' <<<"$output" >&2; then
			echo "# $t --help runs an option on in a line" >&2
			bad=$((bad + 1))
		fi
	done
	((bad == 0)) || fail "$bad tools"
}

@test "--help and --version on a full disk: exit 2, the error named" {
	local t opt bad=0
	for t in "${TOOLS[@]}"; do
		for opt in --help --version; do
			run --separate-stderr sh -c "exec '$SP_BIN/$t/$t' $opt >/dev/full"
			if ((status != 2)) || [[ $stderr != "$t: cannot write 'stdout': No space left on device" ]]; then
				echo "# $t $opt: exit $status: $stderr"
				bad=$((bad + 1))
			fi
		done
	done
	((bad == 0)) || fail "$bad cases failed"
}

@test "a write error names the file: -o /dev/full and standard output on /dev/full, every stage" {
	local bad=0 t how args input want
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	"$SP_RECORD" -p "$TARGET_PID" -d 0.5 -o "$T/r.raw" 2>/dev/null
	run_io "$SP_UNWIND" "$T/r.raw" "$T/r.unw"
	run_io "$SP_SYMBOLIZE" "$T/r.unw" "$T/r.sym"
	run_io "$SP_FOLD" "$T/r.sym" "$T/r.folded"
	[[ -s $T/r.folded ]] || fail "no recording to write out"
	# tool | its input | its arguments
	while IFS='|' read -r t input args; do
		for how in -o stdout; do
			if [[ $how == -o ]]; then
				want="$t: cannot write '/dev/full': No space left on device"
				run --separate-stderr sh -c "exec '$SP_BIN/$t/$t' $args -o /dev/full <'$input'"
			else
				want="$t: cannot write 'stdout': No space left on device"
				run --separate-stderr sh -c "exec '$SP_BIN/$t/$t' $args <'$input' >/dev/full"
			fi
			if ((status != 2)) || [[ ${stderr_lines[-1]} != "$want" ]]; then
				echo "# $t $how: exit $status: $stderr"
				bad=$((bad + 1))
			fi
		done
	done <<EOF
sp-record|/dev/null|-p $TARGET_PID -d 0.5
sp-unwind|$T/r.raw|-q
sp-symbolize|$T/r.unw|
sp-fold|$T/r.sym|
sp-flame|$T/r.folded|
EOF
	# sp-spool writes no -o: its FILE, and cat's standard output
	run --separate-stderr sh -c "exec '$SP_SPOOL' cat '$D/s.spool' >/dev/full"
	[[ $status == 2 && $stderr == "sp-spool: cannot write 'stdout': No space left on device" ]] ||
		{ echo "# sp-spool cat: exit $status: $stderr"; bad=$((bad + 1)); }
	assert_target_runs "$TARGET_PID"
	((bad == 0)) || fail "$bad cases failed"
}

# Attach, storms, limits ---------------------------------------------------

@test "SIGKILL of sp-record while it holds 500 threads paused: every one runs again" {
	local t1
	build_fault_workloads
	need_perf_events
	start_target lc-many 500 300
	SP_TEST_ATTACH_DELAY_MS=60000 "$SP_RECORD" -p "$TARGET_PID" -o "$T/k.raw" 2>"$T/k.err" 3>&- &
	RECPID=$!
	# all 501 paused by ptrace
	wait_until 60 "sp-record to pause 501 threads ($(thread_states "$TARGET_PID" | tr -d t | wc -c) not yet)" \
		all_traced "$TARGET_PID" 501
	kill -KILL "$RECPID"
	wait "$RECPID" || true
	RECPID=
	wait_until 10 "the 501 threads to run again" not_stopped "$TARGET_PID"
	wait_until 10 "the 501 threads to lose their tracer" untraced "$TARGET_PID"
	assert_equal "$(ls /proc/"$TARGET_PID"/task | wc -l)" 501
	t1=$(cpu_ticks "$TARGET_PID")
	wait_until 10 "the target's cpu time to grow from $t1" cpu_grew "$TARGET_PID" "$t1"
}

@test "a fork and exec storm while recording: whole stream, no descriptor kept, the children sampled" {
	local base max n kids rc
	build_fault_workloads
	need_perf_events
	# forks and execs until released, then 1000 children more, each 1 ms
	# of CPU time in forked_leaf; recorded until the storm has ended
	start_target --go ft-forks 1000 4 1000000
	"$SP_RECORD" -p "$TARGET_PID" -F 4999 -o "$T/f.raw" 2>"$T/f.err" 3>&- &
	RECPID=$!
	wait_attached "$T/f.err" "$RECPID"
	base=$(fd_count "$RECPID")
	max=$base
	release_target
	while kill -0 "$RECPID" 2>/dev/null; do
		n=$(fd_count "$RECPID")
		((n > max)) && max=$n
		sleep 0.2
	done
	rc=0
	wait "$RECPID" || rc=$?
	RECPID=
	# 5 kHz on a thousand new processes may overrun a buffer now and then
	((rc <= 1)) || fail "sp-record exited $rc: $(cat "$T/f.err")"
	assert_clean "$T/f.err"
	((max <= base)) || fail "descriptors grew from $base to $max"
	grep -qE '^sp-record: [0-9]+ samples, [0-9]+ lost events, [0-9]+ threads' "$T/f.err" ||
		fail "summary: $(cat "$T/f.err")"
	assert_stream "$T/f.raw"
	sp_replay "$T/f.raw" "$T/f.folded" --pid
	assert_pipeline_ok "$T/f.folded"
	# 1000 children of 1 ms at 4999 Hz: about 5 samples each
	kids=$(grep -E '^ft-forks-[0-9]+;main;forked_leaf' "$T/f.folded" | cut -d';' -f1 | sort -u | wc -l)
	((kids >= 500)) || fail "forked_leaf sampled in $kids children"
}

@test "ulimit -n 32: -p refuses with its reserve named, the target unharmed; launch and every stage work" {
	local ncpu
	build_fault_workloads
	need_perf_events
	start_target wl-single 300
	run --separate-stderr bash -c "ulimit -n 32 && exec '$SP_RECORD' -p $TARGET_PID -d 1 -o '$T/n.raw'"
	assert_failure 2
	ncpu=$(getconf _NPROCESSORS_ONLN)
	assert_equal "$stderr" "sp-record: 1 threads need $ncpu event descriptors (one per thread and cpu) and 64 more are kept in reserve for files, $((ncpu + 64)) in all, above RLIMIT_NOFILE 32: raise the hard limit (ulimit -Hn), or launch the command under sp-record, which needs one per cpu"
	assert_target_runs "$TARGET_PID"
	# a command launched needs one per cpu, and the stages a few each
	run bash -c "ulimit -n 32 && WL_CLOCK=cpu '$SP_RECORD' -o '$T/l.raw' -- '$WL_DIR/wl-single' 0.5 &&
		'$SP_UNWIND' -q '$T/l.raw' | '$SP_SYMBOLIZE' | '$SP_FOLD' >'$T/l.folded' &&
		'$SP_FLAME' '$T/l.folded' >'$T/l.svg' &&
		'$SP_UNWIND' -q '$T/l.raw' | '$SP_SPOOL' write -q '$T/l.spool' &&
		'$SP_SPOOL' verify '$T/l.spool'"
	assert_success
	(($(fold_count "$T/l.folded" ';leaf_a(;|$)') > 0)) || fail "no leaf_a in $T/l.folded"
	[[ -s $T/l.svg ]] || fail "no flame graph"
}

@test "a spool read while it is written: cut or whole, never damaged" {
	local chunk=262144 off=0 size st n=0 bad=0 cmd
	size=$(stat -c %s "$D/s.unw")
	mkfifo "$T/in"
	"$SP_SPOOL" write -q -b 4096 -t 0.05 "$T/w.spool" <"$T/in" 2>"$T/w.err" 3>&- &
	RECPID=$!
	exec 5>"$T/in"
	while ((off < size)); do
		tail -c +$((off + 1)) "$D/s.unw" | head -c "$chunk" >&5
		off=$((off + chunk > size ? size : off + chunk))
		# the header first: before it there is no spool to read
		wait_until 30 "sp-spool to write its header" file_has "$T/w.spool" 128
		# read while the writer takes it in and writes its blocks
		while :; do
			kill -0 "$RECPID" || fail "sp-spool write ended: $(cat "$T/w.err")"
			for cmd in verify info cat; do
				run --separate-stderr sh -c "exec '$SP_SPOOL' $cmd '$T/w.spool' >/dev/null"
				n=$((n + 1))
				if ((status != 1)) ||
					! [[ $stderr =~ ^sp-spool:\ \'.*w.spool\'\ is\ cut\ at\ byte\ [0-9]+\ after\ (the\ header|block\ [0-9]+): ]]; then
					echo "# $cmd while written, $off bytes fed: exit $status: $stderr"
					bad=$((bad + 1))
				fi
			done
			read_at_least "$RECPID" "$off" && break
		done
	done
	exec 5>&-
	st=0
	wait "$RECPID" || st=$?
	RECPID=
	assert_equal "$st" 0
	echo "# $n reads while it was written" >&3
	((bad == 0)) || fail "$bad of $n reads failed"
	run "$SP_SPOOL" verify "$T/w.spool"
	assert_success
	run sh -c "'$SP_SPOOL' cat '$T/w.spool' | cmp - '$D/s.unw'"
	assert_success
}

@test "a raw stream above 4 GiB from a pipe: every sample counted, offsets past 2^32 exact" {
	[[ ${SP_LONG_TESTS:-} == 1 ]] || skip "a long test: set SP_LONG_TESTS=1 to stream 4 GiB through sp-unwind"
	local n at
	build_fault_workloads
	# 4 GiB and 1 MiB of 64 KiB samples, through a pipe: no file that big
	run bash -c "set -o pipefail; '$WL_DIR/ft-bigraw' 4295016448 2>'$T/g.err' |
		'$SP_UNWIND' 2>'$T/u.err' | '$SP_SYMBOLIZE' | '$SP_FOLD' >'$T/g.folded'"
	assert_success
	n=$(sed -n 's/^ft-bigraw: \([0-9]*\) samples, [0-9]* bytes$/\1/p' "$T/g.err")
	at=$(sed -n 's/^ft-bigraw: [0-9]* samples, \([0-9]*\) bytes$/\1/p' "$T/g.err")
	((n > 0 && at > 4294967296)) || fail "generator: $(cat "$T/g.err")"
	grep -q "^sp-unwind: $n samples, 1 stacks: 0 complete, 0 truncated, $n noinfo, 0 error" "$T/u.err" ||
		fail "sp-unwind: $(cat "$T/u.err")"
	assert_equal "$(fold_count "$T/g.folded")" "$n"
	# a bad record past 4 GiB: its offset, not the offset modulo 2^32
	run bash -c "'$WL_DIR/ft-bigraw' 4295016448 bad 2>'$T/b.err' | '$SP_UNWIND' >/dev/null"
	assert_failure 2
	at=$(sed -n 's/.*bad record at byte \([0-9]*\)$/\1/p' "$T/b.err")
	((at > 4294967296)) || fail "generator: $(cat "$T/b.err")"
	assert_output "sp-unwind: bad record size 12 (type 1): must be a multiple of 8 in 8..16777216 at byte $at of 'stdin'"
}
