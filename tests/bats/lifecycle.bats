#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# lifecycle.bats: sp-record's launch mode (-- COMMAND), its attach modes
# (--attach stop|live) and how it follows what the targets spawn: threads,
# children, exec, thread storms, exits; and what it writes beside the
# samples (KSYM, PERFMAP, build ids).  Workloads: tests/workloads/lc-*.c.

# shellcheck disable=SC2154	# status, output, stderr: set by bats' run
load common

setup_file() {
	local d=$BATS_FILE_TMPDIR

	# rawcheck FILE: what a raw stream holds, one fact a line
	cat >"$d/rawcheck.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "format/raw.h"
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "rb");
	struct sp_raw_header h;
	struct sp_rec_hdr rh;
	static uint64_t ks[1 << 20][2];
	size_t nks = 0, missing = 0, counts[64] = { 0 };
	uint8_t *b = malloc(SP_REC_MAX);

	if (!f || fread(&h, sizeof(h), 1, f) != 1)
		return 2;
	while (fread(&rh, sizeof(rh), 1, f) == 1) {
		memcpy(b, &rh, sizeof(rh));
		if (rh.size < 8 || rh.size > SP_REC_MAX ||
		    fread(b + 8, rh.size - 8, 1, f) != 1)
			return 3;
		counts[rh.type < 64 ? rh.type : 63]++;
		if (rh.type == SP_REC_KSYM && nks < (1 << 20)) {
			struct sp_ksym_rec *k = (void *)b;
			ks[nks][0] = k->start;
			ks[nks++][1] = k->size;
		} else if (rh.type == SP_REC_SAMPLE) {
			struct sp_raw_sample *s = (void *)b;
			uint64_t *ip = (uint64_t *)(s + 1) + s->nr_regs;
			for (unsigned i = 0; i < s->nr_kernel; i++) {
				size_t j;
				for (j = 0; j < nks; j++)
					if (ip[i] >= ks[j][0] && (!ks[j][1] || ip[i] < ks[j][0] + ks[j][1]))
						break;
				missing += j == nks;
			}
			printf("sample %u %u\n", s->pid, s->tid);
		} else if (rh.type == SP_REC_MMAP) {
			struct sp_mmap_rec *m = (void *)b;
			printf("mmap %u %s %s ", m->pid, m->flags & SP_REC_SYNTH ? "synth" : "kernel", m->filename);
			for (int i = 0; i < m->build_id_size; i++)
				printf("%02x", m->build_id[i]);
			printf("\n");
		} else if (rh.type == SP_REC_PERFMAP) {
			struct sp_perfmap_rec *p = (void *)b;
			printf("perfmap %u %u %llu\n", p->pid, p->flags, (unsigned long long)p->len);
			fwrite(p->text, 1, p->len, stdout);
		} else if (rh.type == SP_REC_COMM) {
			struct sp_comm_rec *c = (void *)b;
			printf("comm %u %u %s%s\n", c->pid, c->tid, c->comm, c->flags & SP_COMM_EXEC ? " exec" : "");
		}
	}
	for (int t = 0; t < 64; t++)
		if (counts[t])
			printf("type %d %zu\n", t, counts[t]);
	printf("ksym-missing %zu\n", missing);
	printf("kernel-flag %u\n", h.ev.flags & SP_EV_KERNEL ? 1 : 0);
	return 0;
}
C
	cc -O2 -I"$SP_ROOT/lib" -o "$d/rawcheck" "$d/rawcheck.c"
	# texit EXIT: 300 threads that exit once released (wl.h's handshake),
	# the process once the file EXIT exists
	cat >"$d/texit.c" <<'C'
#include "wl.h"
#include <pthread.h>
#include <unistd.h>
static pthread_barrier_t go;
static void *f(void *a) { pthread_barrier_wait(&go); return a; }
int main(int argc, char **argv)
{
	pthread_t t[300];
	alarm(120);
	pthread_barrier_init(&go, 0, 301);
	for (int i = 0; i < 300; i++)
		pthread_create(&t[i], 0, f, 0);
	wl_ready();
	wl_wait_go();
	pthread_barrier_wait(&go);
	for (int i = 0; i < 300; i++)
		pthread_join(t[i], 0);
	while (argc > 1 && access(argv[1], F_OK))
		usleep(10000);
	return 0;
}
C
	cc -O2 -pthread -I"$WL_SRC" -o "$d/texit" "$d/texit.c"
}

setup() {
	require_tools
	need_perf_events
	build_workloads
	build_lc_workloads
	T=$BATS_TEST_TMPDIR
	RAWCHECK=$BATS_FILE_TMPDIR/rawcheck
	RECPID=
}

teardown() {
	if [[ -n $RECPID ]]; then
		kill -KILL "$RECPID" 2>/dev/null
		wait "$RECPID" 2>/dev/null
	fi
	stop_targets
}

# Compile tests/workloads/lc-*.c into $WL_DIR like build_workloads.
build_lc_workloads() {
	build_workload_files "$WL_SRC"/lc-*.c
}

# assert_clean FILE: no sanitizer report in a stderr file
assert_clean() {
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$1"; then
		cat "$1"
		fail "sanitizer report in $1"
	fi
}

# The states of every thread of PID, one letter each.
thread_states() {
	local f
	for f in /proc/"$1"/task/*/stat; do
		sed -n 's/.*) \(.\) .*/\1/p' "$f" 2>/dev/null
	done | tr -d '\n'
}

# The number of descriptors process PID has open.
fd_count() {
	ls "/proc/$1/fd" 2>/dev/null | wc -l
}

# fds_at_most PID N: process PID has at most N descriptors open.
fds_at_most() {
	(($(fd_count "$1") <= $2))
}

# states_are PID STATES: thread_states PID is STATES.
states_are() {
	[[ $(thread_states "$1") == "$2" ]]
}

# not_stopped PID: no thread of PID is stopped (T) or stopped by ptrace (t).
not_stopped() {
	[[ $(thread_states "$1") != *[Tt]* ]]
}

# threads_are PID N: process PID has N threads.
threads_are() {
	local tasks=(/proc/"$1"/task/*)
	((${#tasks[@]} == $2)) && [[ -e ${tasks[0]} ]]
}

# traced_by PID TRACER: ptrace has attached TRACER to PID.
traced_by() {
	[[ $(awk '$1 == "TracerPid:" { print $2 }' "/proc/$1/status" 2>/dev/null) == "$2" ]]
}

@test "launch: a 50 ms start-up is recorded from its first function, nothing before exec" {
	# 50 ms of CPU time (WL_CLOCK=cpu): about 50 samples at 999 Hz, however
	# loaded the machine
	run --separate-stderr env WL_CLOCK=cpu "$SP_RECORD" -F 999 -o "$T/s.raw" -- "$WL_DIR/lc-startup" 50
	assert_success
	assert_clean <(echo "$stderr")
	sp_replay "$T/s.raw" "$T/s.folded"
	assert_pipeline_ok "$T/s.folded"
	n=$(fold_count "$T/s.folded" '^lc-startup;main;startup_hot(;|$)')
	((n >= 3)) || { show_folded "$T/s.folded"; fail "only $n samples of main;startup_hot"; }
	# the child ran sp-record's code until its exec: none of that is there
	run grep -v '^lc-startup;' "$T/s.folded"
	assert_output ''
}

@test "launch: exit status of COMMAND is sp-record's: 0, 3, 128+SIGSEGV" {
	local -a cases=("exit 0|0" "exit 3|3" "kill -SEGV \$\$|139")
	local c
	for c in "${cases[@]}"; do
		run --separate-stderr sp_record -o "$T/x.raw" -- sh -c "${c%|*}"
		assert_equal "$status (${c%|*})" "${c#*|} (${c%|*})"
		assert_stream "$T/x.raw"
	done
}

@test "launch: arguments, environment, working directory and stdin pass through" {
	mkdir "$T/wd"
	cd "$T/wd"
	run --separate-stderr env SP_LC_VAR='x  y' sh -c 'echo in | "$0" -o "$1" -- sh -c '\''read l; printf "%s|" "$@"; printf "%s|%s|%s\n" "$SP_LC_VAR" "$PWD" "$l"'\'' sh a "b c" ""' \
		"$SP_RECORD" "$T/a.raw"
	assert_success
	assert_output "a|b c||x  y|$T/wd|in"
	assert_stream "$T/a.raw"
}

@test "launch: with the stream on stdout, COMMAND's stdout goes to stderr or --command-stdout" {
	run --separate-stderr bash -c "'$SP_RECORD' -- sh -c 'echo to-stdout' >'$T/o.raw'"
	assert_success
	[[ $stderr == *to-stdout* ]] || fail "COMMAND's output not on stderr: $stderr"
	assert_stream "$T/o.raw"
	run --separate-stderr bash -c "'$SP_RECORD' --command-stdout '$T/cmd.out' -- sh -c 'echo to-file' >'$T/o2.raw'"
	assert_success
	[[ $stderr != *to-file* ]] || fail "COMMAND's output on stderr: $stderr"
	assert_equal "$(cat "$T/cmd.out")" to-file
	assert_stream "$T/o2.raw"
}

@test "launch: a command that is not found exits 127, one not executable 126" {
	run -127 sp_record -o "$T/n.raw" -- sp-no-such-command-here
	assert_failure 127
	assert_line --index 0 "sp-record: cannot execute 'sp-no-such-command-here': command not found"
	printf 'x\n' >"$T/noexec"
	chmod 644 "$T/noexec"
	run sp_record -o "$T/n.raw" -- "$T/noexec"
	assert_failure 126
	assert_line --index 0 "sp-record: cannot execute '$T/noexec': Permission denied"
	run -127 sp_record -o "$T/n.raw" -- "$T/missing/prog"
	assert_failure 127
	assert_line --index 0 "sp-record: cannot execute '$T/missing/prog': No such file or directory"
}

@test "launch: SIGTERM and SIGINT are passed to COMMAND, the stream is complete" {
	local sig rc sleep_bin
	sleep_bin=$(readlink -f "$(command -v sleep)")
	for sig in TERM INT; do
		"$SP_RECORD" -o "$T/t.raw" -- sleep 30 2>"$T/err" 3>&- &
		RECPID=$!
		# the signal comes while COMMAND runs
		wait_until 30 "sp-record to run sleep" child_runs "$RECPID" "$sleep_bin"
		kill -"$sig" "$RECPID"
		rc=0
		wait "$RECPID" || rc=$?
		RECPID=
		assert_equal "$sig $rc" "$sig $((128 + $(kill -l "$sig")))"
		assert_stream "$T/t.raw"
		assert_clean "$T/err"
	done
}

@test "launch: -d stops recording while COMMAND runs on, --timeout ends it" {
	local rc t0 ms cs
	# COMMAND runs until released, and is released only once the
	# recording has ended: its summary is on stderr
	# shellcheck disable=SC2016	# for the inner sh
	"$SP_RECORD" -d 0.5 -o "$T/d.raw" -- \
		sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done; exit 5' sh "$T/go" \
		2>"$T/d.err" 3>&- &
	RECPID=$!
	wait_until 60 "the summary of the -d 0.5 recording" \
		grep -q '^sp-record: [0-9]* samples, ' "$T/d.err"
	kill -0 "$RECPID" 2>/dev/null || fail "sp-record did not wait for COMMAND: $(cat "$T/d.err")"
	[[ -n $(cat /proc/"$RECPID"/task/*/children) ]] || fail "COMMAND is not running"
	: >"$T/go"
	rc=0
	wait "$RECPID" || rc=$?
	RECPID=
	assert_equal "$rc" 5
	# stopped at 0.5 s, not later than COMMAND's start-up and a few passes
	[[ $(cat "$T/d.err") =~ ,\ ([0-9]+)\.([0-9]{2})\ s($|[^0-9]) ]] ||
		fail "no duration in the summary: $(cat "$T/d.err")"
	cs=$((10#${BASH_REMATCH[1]}${BASH_REMATCH[2]}))
	((cs >= 50 && cs < 200)) || fail "recording did not stop at 0.5 s: $(cat "$T/d.err")"
	assert_stream "$T/d.raw"

	# sleep 30: ending in a third of that is --timeout's doing
	t0=$(now_ms)
	run --separate-stderr sp_record --timeout 0.5 -o "$T/t.raw" -- sleep 30
	ms=$(($(now_ms) - t0))
	assert_failure 143
	((ms < 10000)) || fail "--timeout 0.5 took $ms ms"
	assert_stream "$T/t.raw"

	# a command that ignores SIGTERM is killed after the grace period (3 s)
	t0=$(now_ms)
	run --separate-stderr sp_record --timeout 0.3 -o "$T/k.raw" -- sh -c 'trap "" TERM; exec sleep 30'
	ms=$(($(now_ms) - t0))
	assert_failure 137
	((ms < 20000)) || fail "SIGKILL came after $ms ms"
	assert_stream "$T/k.raw"
}

@test "launch: bad combinations are usage errors" {
	local -a cases=(
		"--attach live -- true|--attach is for -p: COMMAND is recorded from its exec"
		"-p 1 --timeout 1|--timeout needs a COMMAND to end"
		"-p 1 -- true|unexpected argument 'true'"
		"--timeout 0 -- true|invalid timeout '0': must be a positive number of seconds (s, m, h suffixes)"
		"-p 1 --attach pause|invalid attach mode 'pause': must be stop or live"
	)
	local c args msg
	for c in "${cases[@]}"; do
		args=${c%%|*}
		msg=${c#*|}
		# shellcheck disable=SC2086
		run "$SP_RECORD" $args
		assert_equal "$status $args" "64 $args"
		assert_line --index 0 "sp-record: $msg"
	done
}

@test "launch: a forked child's samples appear under its own pid" {
	# CPU time (WL_CLOCK=cpu): the parent forks after 0.5 s of it
	run --separate-stderr env WL_CLOCK=cpu "$SP_RECORD" -F 999 -o "$T/f.raw" -- "$WL_DIR/wl-fork" 2 0.5
	assert_success
	sp_replay "$T/f.raw" "$T/f.folded" --pid
	assert_pipeline_ok "$T/f.folded"
	parent=$(grep -E ';main;parent_loop;parent_leaf' "$T/f.folded" | head -1 | cut -d';' -f1)
	child=$(grep -E ';main;child_loop;child_leaf' "$T/f.folded" | head -1 | cut -d';' -f1)
	[[ -n $parent && -n $child ]] || { show_folded "$T/f.folded"; fail "parent or child chain missing"; }
	[[ ${parent##*-} != "${child##*-}" ]] || fail "child sampled under its parent's pid: $parent $child"
}

@test "launch: fork+exec: the exec'd child's own functions appear under its pid and name" {
	# durations in CPU time (WL_CLOCK=cpu): the parent 1.5 s, the child
	# 0.8 s from the parent's 0.3 s on, however loaded the machine
	run --separate-stderr env WL_CLOCK=cpu "$SP_RECORD" -F 999 -o "$T/e.raw" -- \
		"$WL_DIR/lc-spawn" 1.5 0.3 "$WL_DIR/lc-child" 0.8
	assert_success
	sp_replay "$T/e.raw" "$T/e.folded" --pid
	assert_pipeline_ok "$T/e.folded"
	assert_share "$T/e.folded" '^lc-child-[0-9]+;main;child_main_loop;child_main_leaf(;|$)' 10
	assert_share "$T/e.folded" '^lc-spawn-[0-9]+;main;spawn_parent_loop;spawn_parent_leaf(;|$)' 30
	run "$RAWCHECK" "$T/e.raw"
	assert_line --regexp '^comm [0-9]+ [0-9]+ lc-child exec$'
}

@test "attach: exec in the target itself: the new program's functions, name and mappings" {
	# released after sp-record attached: 1 s of CPU time in lc-exec, then
	# 1.5 s in lc-child (WL_CLOCK=cpu), all of it recorded
	WL_CLOCK=cpu start_target --go lc-exec 1 "$WL_DIR/lc-child" 1.5
	sp_pipeline_start "$T/x.folded" -p "$TARGET_PID" -F 999 -- --pid
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/x.folded"
	assert_share "$T/x.folded" "^lc-exec-$TARGET_PID;main;before_exec_loop;before_exec_leaf(;|\$)" 10
	assert_share "$T/x.folded" "^lc-child-$TARGET_PID;main;child_main_loop;child_main_leaf(;|\$)" 20
	run "$RAWCHECK" "$T/x.folded.raw"
	assert_line --regexp "^mmap $TARGET_PID kernel .*/lc-child [0-9a-f]{40}\$"
}

@test "stop attach: reported, and the target is paused only while attaching" {
	start_target wl-threads 6
	run --separate-stderr sp_record -p "$TARGET_PID" -d 0.5 -o "$T/p.raw"
	assert_success
	[[ ${stderr_lines[0]} =~ ^sp-record:\ attached\ 5\ threads\ in\ [0-9]+\.[0-9]\ ms$ ]] ||
		fail "no attach report: $stderr"
	[[ $(thread_states "$TARGET_PID") != *[Tt]* ]] || fail "target left stopped: $(thread_states "$TARGET_PID")"
	assert_stream "$T/p.raw"
}

@test "stop attach: SIGKILL of sp-record in the middle of attaching leaves the target running" {
	local t1
	start_target wl-threads 30
	SP_TEST_ATTACH_DELAY_MS=30000 "$SP_RECORD" -p "$TARGET_PID" -o "$T/k.raw" 2>"$T/err" 3>&- &
	RECPID=$!
	# paused by ptrace: its five threads stopped
	wait_until 30 "sp-record to pause the target" states_are "$TARGET_PID" ttttt
	kill -KILL "$RECPID"
	wait "$RECPID" || true
	RECPID=
	wait_until 10 "the target to run again after sp-record died (states $(thread_states "$TARGET_PID"))" \
		not_stopped "$TARGET_PID"
	# and it makes progress: its cpu time grows
	t1=$(cpu_ticks "$TARGET_PID")
	wait_until 10 "the target's cpu time to grow from $t1" cpu_grew "$TARGET_PID" "$t1"
}

@test "stop attach: SIGINT while attaching resumes the target and ends cleanly" {
	local rc t0 ms
	start_target wl-threads 30
	# the pause would last 30 s: ending in a third of that is SIGINT's doing
	SP_TEST_ATTACH_DELAY_MS=30000 "$SP_RECORD" -p "$TARGET_PID" -o "$T/i.raw" 2>"$T/err" 3>&- &
	RECPID=$!
	wait_until 30 "sp-record to pause the target" states_are "$TARGET_PID" ttttt
	t0=$(now_ms)
	kill -INT "$RECPID"
	rc=0
	wait "$RECPID" || rc=$?
	ms=$(($(now_ms) - t0))
	RECPID=
	assert_equal "$rc" 0
	((ms < 10000)) || fail "SIGINT took $ms ms"
	[[ $(thread_states "$TARGET_PID") != *[Tt]* ]] || fail "target left stopped"
	assert_stream "$T/i.raw"
	assert_clean "$T/err"
}

@test "stop attach: a target stopped by SIGSTOP stays stopped, also when sp-record is killed" {
	start_target wl-single 30
	kill -STOP "$TARGET_PID"
	wait_until 10 "SIGSTOP to stop the target" states_are "$TARGET_PID" T
	run --separate-stderr sp_record -p "$TARGET_PID" -d 0.3 -o "$T/g.raw"
	assert_success
	assert_equal "$(thread_states "$TARGET_PID")" T
	SP_TEST_ATTACH_DELAY_MS=30000 "$SP_RECORD" -p "$TARGET_PID" -o "$T/g2.raw" 2>/dev/null 3>&- &
	RECPID=$!
	# killed while it holds the target
	wait_until 30 "sp-record to trace the target" traced_by "$TARGET_PID" "$RECPID"
	kill -KILL "$RECPID"
	wait "$RECPID" || true
	RECPID=
	sleep 0.2	# time for a wrong resume to show
	assert_equal "$(thread_states "$TARGET_PID")" T
	kill -CONT "$TARGET_PID"
	wait_until 10 "SIGCONT to resume it (states $(thread_states "$TARGET_PID"))" \
		not_stopped "$TARGET_PID"
}

@test "live attach: no pause, threads started later are followed" {
	# released once sp-record attached: main alone for 1 s of CPU time,
	# then main and the late thread until the process has used 4 s
	# (WL_CLOCK=cpu); recorded to its end
	# -m 8192: two threads' 60 KiB stack copies at 999 Hz fill the default
	# ring in tens of milliseconds, which a busy machine may not drain in time
	WL_CLOCK=cpu start_target --go wl-late 4 1
	sp_pipeline_start "$T/l.folded" -p "$TARGET_PID" --attach live -F 999 -m 8192 -- --tid
	recording_started
	release_target
	sp_pipeline_wait
	assert_pipeline_ok "$T/l.folded"
	run grep -c 'attached' "$T/l.folded.sp-record.err"
	assert_output 0
	assert_share "$T/l.folded" '(^|;)late_worker;late_leaf(;|$)' 15
}

@test "launch: a storm of 10,000 threads completes, leaks nothing, and is sampled" {
	"$SP_RECORD" -F 4999 -o "$T/st.raw" -- "$WL_DIR/lc-storm" 10000 4 300000 \
		>"$T/st.out" 2>"$T/st.err" 3>&- &
	RECPID=$!
	# its events are open once the stream has a header
	recording_started "$T/st.raw" "$RECPID"
	base=$(fd_count "$RECPID")
	max=$base
	while kill -0 "$RECPID" 2>/dev/null; do
		n=$(fd_count "$RECPID")
		((n > max)) && max=$n
		sleep 0.2
	done
	rc=0
	wait "$RECPID" || rc=$?
	RECPID=
	assert_equal "$rc" 0
	assert_equal "$(cat "$T/st.out")" 10000
	assert_clean "$T/st.err"
	((max <= base)) || fail "descriptors grew from $base to $max"
	# 5 kHz on thousands of new threads may overrun a buffer now and then
	grep -qE '^sp-record: [0-9]+ samples, [0-9]+ lost events, 100[0-9][0-9] threads' "$T/st.err" ||
		fail "summary: $(cat "$T/st.err")"
	sp_replay "$T/st.raw" "$T/st.folded" --tid
	assert_pipeline_ok "$T/st.folded"
	# 10,000 threads of 0.3 ms of CPU time each: 3 s, about 15,000 samples
	n=$(fold_count "$T/st.folded" ';storm_thread;storm_leaf(;|$)')
	tids=$(grep -E ';storm_thread;storm_leaf' "$T/st.folded" | cut -d';' -f1 | sort -u | wc -l)
	((n >= 1000 && tids >= 500)) ||
		fail "$n samples of storm_leaf in $tids threads"
}

@test "attach: a storm of 10,000 threads in a running target leaks no descriptor" {
	# it storms until released, then 10,000 threads more: sp-record
	# attaches in the middle of a storm and sees 10,000 threads come and go
	start_target --go lc-storm 10000 4 300000
	"$SP_RECORD" -p "$TARGET_PID" -F 999 -o "$T/sp.raw" 2>"$T/sp.err" 3>&- &
	RECPID=$!
	recording_started "$T/sp.raw" "$RECPID"
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
	assert_equal "$rc" 0
	assert_clean "$T/sp.err"
	((max <= base)) || fail "descriptors grew from $base to $max"
	grep -qE '^sp-record: [0-9]+ samples, 0 lost events, [0-9]{5,} threads' "$T/sp.err" ||
		fail "summary: $(cat "$T/sp.err")"
	assert_stream "$T/sp.raw"
}

@test "1,000 threads: launch needs one descriptor per cpu, -p one per thread and cpu" {
	local ncpu
	ncpu=$(nproc)
	# there before the background job opens it: grep must not find it
	# missing (status 2, which stops wait_until at once)
	: >"$T/m.out"
	"$SP_RECORD" -o "$T/m.raw" -- "$WL_DIR/lc-many" 1000 3 >"$T/m.out" 2>"$T/m.err" 3>&- &
	RECPID=$!
	# counted once all 1001 threads run (COMMAND's stdout is sp-record's)
	wait_until 60 "lc-many to start its threads" grep -q '^ready$' "$T/m.out"
	n=$(fd_count "$RECPID")
	wait "$RECPID"
	RECPID=
	echo "# launch mode, 1001 threads: $n descriptors" >&3
	((n <= ncpu + 16)) || fail "launch mode holds $n descriptors"
	assert_clean "$T/m.err"

	start_target lc-many 1000 60
	"$SP_RECORD" -p "$TARGET_PID" -d 2 -o "$T/m2.raw" 2>"$T/m2.err" 3>&- &
	RECPID=$!
	# counted once attached to all of them
	wait_attached "$T/m2.err" "$RECPID"
	n=$(fd_count "$RECPID")
	wait "$RECPID"
	RECPID=
	echo "# -p, 1001 threads: $n descriptors; $(head -1 "$T/m2.err")" >&3
	((n <= 1001 * ncpu + 16)) || fail "-p holds $n descriptors"
	grep -q 'attached 1001 threads' "$T/m2.err" || fail "$(cat "$T/m2.err")"
	assert_stream "$T/m2.raw"
}

@test "attach: the descriptors of attached threads that exit are closed" {
	# texit: 300 threads that exit once released, the process when told
	start_cmd --go "$BATS_FILE_TMPDIR/texit" "$T/exit"
	"$SP_RECORD" -p "$TARGET_PID" -o "$T/x.raw" 2>"$T/x.err" 3>&- &
	RECPID=$!
	wait_attached "$T/x.err" "$RECPID"
	before=$(fd_count "$RECPID")
	release_target
	wait_until 30 "the 300 threads to exit" threads_are "$TARGET_PID" 1
	wait_until 30 "sp-record to close their descriptors (holds $(fd_count "$RECPID"))" \
		fds_at_most "$RECPID" 16
	after=$(fd_count "$RECPID")
	echo "# 301 threads attached: $before descriptors; after 300 exited: $after" >&3
	((before >= 300 && after <= 16)) || fail "descriptors $before -> $after"
	: >"$T/exit"
	wait "$RECPID"
	RECPID=
	assert_clean "$T/x.err"
	assert_stream "$T/x.raw"
}

@test "1,000 threads under a low RLIMIT_NOFILE: a clear error, the target unharmed" {
	start_target lc-many 1000 60
	run --separate-stderr bash -c "ulimit -n 512 && exec '$SP_RECORD' -p $TARGET_PID -d 1 -o '$T/r.raw'"
	assert_failure 2
	[[ $stderr =~ 1001\ threads\ need\ [0-9]+\ event\ descriptors.*RLIMIT_NOFILE\ 512 ]] ||
		fail "unclear: $stderr"
	[[ $(thread_states "$TARGET_PID") != *[Tt]* ]] || fail "target left stopped"
}

@test "-p with several processes ends when the last exits, with the samples of both" {
	local a b ga t0 ms
	# released once sp-record attached: 1 s and 2 s of CPU time
	WL_CLOCK=cpu start_target --go wl-single 1
	a=$TARGET_PID ga=$TARGET_GO
	WL_CLOCK=cpu start_target --go wl-single 2
	b=$TARGET_PID
	sp_pipeline_start "$T/two.folded" -p "$a,$b" -F 999 -- --pid
	recording_started
	release_target "$ga"
	release_target
	wait_until 60 "both targets to exit" gone "$b"
	t0=$(now_ms)
	# sp-record looks every 100 ms: 10 s is far more than it needs
	wait_until 10 "sp-record to end after the last target" \
		test -e "$PIPE_OUT.sp-record.status"
	ms=$(($(now_ms) - t0))
	sp_pipeline_wait
	assert_pipeline_ok "$T/two.folded"
	echo "# sp-record ended $ms ms after the last target" >&3
	assert_share "$T/two.folded" "^wl-single-$a;main;run(;|\$)" 3
	assert_share "$T/two.folded" "^wl-single-$b;main;run(;|\$)" 40
}

@test "a process that exits halfway ends the recording cleanly with the samples of its life" {
	local t0 ms
	# released once sp-record attached: 1.5 s of CPU time, all recorded
	WL_CLOCK=cpu start_target --go wl-single 1.5
	sp_pipeline_start "$T/h.folded" -p "$TARGET_PID" -F 999 -d 60
	recording_started
	release_target
	wait_until 60 "the target to exit" gone "$TARGET_PID"
	t0=$(now_ms)
	# -d 60: ending in a sixth of that is the target's exit's doing
	wait_until 10 "sp-record to end after its target" \
		test -e "$PIPE_OUT.sp-record.status"
	ms=$(($(now_ms) - t0))
	sp_pipeline_wait
	assert_pipeline_ok "$T/h.folded"
	echo "# sp-record ended $ms ms after the target" >&3
	assert_share "$T/h.folded" '(^|;)main;run(;|$)' 95
	# 1.5 s of CPU time at 999 Hz: about 1500 samples
	total=$(fold_count "$T/h.folded")
	((total >= 300)) || fail "only $total samples"
}

@test "KSYM records precede every sample that needs them, one per symbol" {
	[[ $(awk 'NR == 1 { print $1 }' /proc/kallsyms) != 0000000000000000 ]] ||
		skip "needs readable /proc/kallsyms addresses (kptr_restrict)"
	# one byte per read(2) and write(2): most samples have kernel frames
	start_dd
	run sp_record -p "$TARGET_PID" -F 999 -d 1 -o "$T/k.raw"
	assert_success
	run "$RAWCHECK" "$T/k.raw"
	assert_line 'kernel-flag 1'
	assert_line --regexp '^type 11 [0-9]+$'
	assert_line 'ksym-missing 0'
}

@test "build ids: synthesized and kernel MMAP records carry the file's" {
	command -v readelf >/dev/null || skip "needs readelf (binutils)"
	want=$(readelf -n "$WL_DIR/lc-child" | sed -n 's/.*Build ID: //p')
	[[ -n $want ]] || skip "lc-child was built without a build id"
	start_cmd "$WL_DIR/lc-child" 60
	run sp_record -p "$TARGET_PID" -d 0.3 -o "$T/b.raw"
	assert_success
	run "$RAWCHECK" "$T/b.raw"
	assert_line "mmap $TARGET_PID synth $WL_DIR/lc-child $want"
	run sp_record -o "$T/b2.raw" -- "$WL_DIR/lc-child" 0.2
	assert_success
	run "$RAWCHECK" "$T/b2.raw"
	assert_line --regexp "^mmap [0-9]+ kernel $WL_DIR/lc-child $want\$"
}

@test "PERFMAP: a map a dead process left under a reused PID is not recorded" {
	# old maps (an hour old, as nothing removes them) under the next
	# PIDs, made without starting a process; the command and its children
	# are born into them
	python3 - "$T/stale" <<'EOF_PY'
import os, sys, time
last = int(open("/proc/sys/kernel/ns_last_pid").read())
old = time.time() - 3600
with open(sys.argv[1], "w") as made:
    for p in range(last + 1, last + 3000):
        f = "/tmp/perf-%d.map" % p
        if os.path.exists(f):
            continue
        with open(f, "w") as m:
            m.write("1234 10 stale_%d\n" % p)
        os.utime(f, (old, old))
        made.write(f + "\n")
EOF_PY
	# two processes write their maps over stale ones, one shorter, one
	# longer (only the first bytes tell it from more of the stale map):
	# their lines are their first PERFMAP, not a reset of lines never
	# written.  Each writes once the stream has its exec, so that
	# sp-record has seen its birth into the stale map by then.
	cat >"$T/writer.sh" <<'EOF_SH'
#!/bin/sh
i=0
until "$1" "$2" 2>/dev/null | grep -q "^comm $$ $$ .* exec$"; do
	i=$((i + 1))
	[ $i -le 3000 ] || { echo "no exec of $$ in $2" >&2; exit 99; }
	/bin/sleep 0.01
done
printf '%s\n' "$3" >/tmp/perf-$$.map
for i in 1 2 3 4; do /bin/sleep 0.01; done
echo $$
EOF_SH
	chmod +x "$T/writer.sh"
	run --separate-stderr sp_record -o "$T/s.raw" -- sh -c \
		'"$0" "$1" "$2" "5000 10 fresh" &&
		 "$0" "$1" "$2" "6000 10 fresh_and_longer_than_stale"' \
		"$T/writer.sh" "$RAWCHECK" "$T/s.raw"
	short=${lines[0]} long=${lines[1]}
	# remove what is still ours before any assertion can fail
	while read -r f; do
		grep -qs '^1234 10 stale_' "$f" && rm -f "$f"
	done <"$T/stale"
	grep -qsx '5000 10 fresh' "/tmp/perf-$short.map" && rm -f "/tmp/perf-$short.map"
	grep -qsx '6000 10 fresh_and_longer_than_stale' "/tmp/perf-$long.map" &&
		rm -f "/tmp/perf-$long.map"
	assert_success
	for pid in "$short" "$long"; do
		grep -qx "/tmp/perf-$pid.map" "$T/stale" ||
			fail "PID $pid was not born into a stale map"
	done
	run "$RAWCHECK" "$T/s.raw"
	refute_output --partial stale_
	assert_equal "$(grep -A1 "^perfmap $short " <<<"$output" | tr '\n' ' ')" \
		"perfmap $short 0 14 5000 10 fresh "
	assert_equal "$(grep -A1 "^perfmap $long " <<<"$output" | tr '\n' ' ')" \
		"perfmap $long 0 36 6000 10 fresh_and_longer_than_stale "
}

@test "PERFMAP: appended lines as they come, a rewrite resets, the map may then go" {
	# each change waits until the stream holds a PERFMAP record for the
	# one before (rawcheck reads what sp-record has written so far)
	# shellcheck disable=SC2016
	run --separate-stderr sp_record -o "$T/p.raw" -- sh -c '
		m=/tmp/perf-$$.map
		seen() {
			i=0
			until [ "$("$0" "$1" 2>/dev/null | grep -c "^perfmap ")" -ge $2 ]; do
				i=$((i + 1))
				[ $i -le 3000 ] || { echo "no PERFMAP record $2" >&2; exit 99; }
				sleep 0.01
			done
		}
		printf "1000 10 one\n" >$m; seen "$1" 1
		printf "2000 10 two\n20" >>$m; seen "$1" 2
		printf "00 10 three\n" >>$m; seen "$1" 3
		printf "4000 10 four\n" >$m.new; mv $m.new $m; seen "$1" 4
		printf "5000 10 five_written_over_four\n" >$m; seen "$1" 5
		rm -f $m' "$RAWCHECK" "$T/p.raw"
	assert_success
	run "$RAWCHECK" "$T/p.raw"
	assert_equal "$(grep -m1 '^perfmap' <<<"$output" | sed 's/ [0-9]* / PID /')" 'perfmap PID 0 12'
	# a read between the shell's truncation of the map and its write of
	# five sees an empty map: a reset with no text, there or not
	pm=$(awk '$1 == "perfmap" && $4 != 0 { print; getline; print }' <<<"$output")
	exp=$(printf 'one\n' ; printf 'two\n'; printf 'three\n'; printf 'four\n'
	      printf 'five_written_over_four\n')
	assert_equal "$(grep -v '^perfmap' <<<"$pm" | awk '{ print $3 }')" "$exp"
	# resets: four's rename, and five's write over it (or the empty
	# map before it, five then appended to that)
	[[ "$(awk '$1 == "perfmap" { print $3 }' <<<"$output" | tr '\n' ' ')" =~ ^"0 0 0 1 1 "("0 ")?$ ]] ||
		fail "resets: $(grep '^perfmap' <<<"$output")"
}
