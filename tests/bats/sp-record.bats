#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sp-record: options, errors, recording live processes, stopping, losses.
#
# The targets are built here and take part in the handshake of
# tests/workloads/wl.h (started by common.bash's start_cmd): ready once
# their threads exist; with start_cmd --go they wait for release_target
# before what a test wants to happen after sp-record has attached.

# shellcheck disable=SC2154	# status, output: set by bats' run
load common

REC=$SP_RECORD

setup_file() {
	local d=$BATS_FILE_TMPDIR cc=(cc -O2 -fomit-frame-pointer -pthread -I"$WL_SRC")

	# busy [THREADS [SECONDS [CPU]]]: spin in THREADS threads, die after
	# SECONDS; with CPU, each thread stops after CPU seconds of its own CPU
	# time (counted from the release) and the process then exits 0
	cat >"$d/busy.c" <<'EOF'
#include "wl.h"
#include <pthread.h>
#include <unistd.h>
static double cpu;
static double thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static void *spin(void *a)
{
	wl_wait_go();
	for (unsigned long i = 1;; i++) {
		wl_sink++;
		if (cpu > 0 && !(i & 0xfffff) && thread_cpu() >= cpu)
			return a;
	}
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];
	alarm(argc > 2 ? atoi(argv[2]) : 20);
	cpu = argc > 3 ? atof(argv[3]) : 0;
	for (int i = 1; i < n && i < 64; i++)
		pthread_create(&t[i], 0, spin, 0);
	wl_ready();
	spin(0);
	for (int i = 1; i < n && i < 64; i++)
		pthread_join(t[i], 0);
	return 0;
}
EOF
	# later: one thread; once released, three more and a child process
	cat >"$d/later.c" <<'EOF'
#include "wl.h"
#include <pthread.h>
#include <unistd.h>
static void *spin(void *a) { (void)a; for (;;) wl_sink++; return 0; }
int main(void)
{
	pthread_t t;
	alarm(20);
	wl_ready();
	wl_wait_go();
	if (fork() == 0)
		spin(0);
	for (int i = 0; i < 3; i++)
		pthread_create(&t, 0, spin, 0);
	spin(0);
	return 0;
}
EOF
	# lexit: two threads; once released the main thread exits, and after
	# that each thread spins for 1.5 s of its own CPU time
	cat >"$d/lexit.c" <<'EOF'
#include "wl.h"
#include <pthread.h>
#include <string.h>
#include <unistd.h>
static char leader[64];
static double thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
/* the main thread has exited: it stays a zombie until the process ends */
static int leader_gone(void)
{
	char b[512], *p;
	size_t n;
	FILE *f = fopen(leader, "r");
	if (!f)
		return 1;
	n = fread(b, 1, sizeof(b) - 1, f);
	fclose(f);
	b[n] = 0;
	p = strrchr(b, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}
static void *spin(void *a)
{
	struct timespec ms = { 0, 1000000 };
	wl_wait_go();
	while (!leader_gone())
		nanosleep(&ms, 0);
	while (thread_cpu() < 1.5)
		for (int i = 0; i < 1000000; i++)
			wl_sink++;
	return a;
}
int main(void)
{
	pthread_t t;
	alarm(60);
	snprintf(leader, sizeof(leader), "/proc/%d/task/%d/stat",
		 (int)getpid(), (int)getpid());
	for (int i = 0; i < 2; i++)
		pthread_create(&t, 0, spin, 0);
	wl_ready();
	wl_wait_go();
	pthread_exit(0);
}
EOF
	"${cc[@]}" -o "$d/busy" "$d/busy.c"
	"${cc[@]}" -o "$d/lexit" "$d/lexit.c"
	"${cc[@]}" -o "$d/later" "$d/later.c"
}

setup() {
	BUSY="$BATS_FILE_TMPDIR/busy"
	LATER="$BATS_FILE_TMPDIR/later"
	LEXIT="$BATS_FILE_TMPDIR/lexit"
	OUT="$BATS_TEST_TMPDIR/out.raw"
	ERR="$BATS_TEST_TMPDIR/err"
	RECPID=
	NOBODY_DIR=
}

teardown() {
	if [[ -n $RECPID ]]; then
		kill -KILL "$RECPID" 2>/dev/null
		wait "$RECPID" 2>/dev/null
	fi
	stop_targets
	[[ -z $NOBODY_DIR ]] || rm -rf "$NOBODY_DIR"
}

# samples_of TEXT: the sample count of a summary line
samples_of() {
	sed -n 's/^sp-record: \([0-9]*\) samples, .*/\1/p' <<<"$1"
}

# assert_samples FILE TEXT: the summary line in TEXT (sp-record's stderr)
# counts some samples, and the stream FILE holds that many SAMPLE records.
assert_samples() {
	local n
	n=$(samples_of "$2")
	[[ -n $n ]] || fail "no summary line in: $2"
	((n > 0)) || fail "no samples recorded: $2"
	assert_equal "$(raw_count "$1" 1) SAMPLE records" "$n SAMPLE records"
}

# record_bg ARGS...: sp-record -o $OUT ARGS... in the background, its
# stderr in $ERR, its PID in RECPID.
record_bg() {
	"$REC" -o "$OUT" "$@" 2>"$ERR" 3>&- &
	RECPID=$!
}

# wait_rec: wait for the background sp-record: its exit status in
# REC_STATUS, its stderr in $output and $lines.
wait_rec() {
	REC_STATUS=0
	wait "$RECPID" || REC_STATUS=$?
	RECPID=
	run cat "$ERR"
}

@test "bad options exit 64 with the valid range" {
	local -a cases=(
		"-p 1 -F 0|invalid frequency '0': must be 1..100000"
		"-p 1 -F abc|invalid frequency 'abc': must be 1..100000"
		"-p 1 -F 100001|invalid frequency '100001': must be 1..100000"
		"-p 1 --stack-size 100|invalid stack size '100': must be a multiple of 8 in 8..65528"
		"-p 1 --stack-size 65536|invalid stack size '65536': must be a multiple of 8 in 8..65528"
		"-p 1 --stack-size 0|invalid stack size '0': must be a multiple of 8 in 8..65528"
		"-p 1 --stack-tail 8388616|invalid stack tail '8388616': must be 0..8388608"
		"-p 1 --stack-tail -1|invalid stack tail '-1': must be 0..8388608"
		"-p 1 -d 0|invalid duration '0': must be a positive number of seconds (s, m, h suffixes)"
		"-p 1 -d -1|invalid duration '-1': must be a positive number of seconds (s, m, h suffixes)"
		"-p 1 -m 3|invalid ring buffer size '3': must be a power of 2 in 1..65536 pages"
		"-p 1 -e bogus|invalid event 'bogus': must be cpu-clock, task-clock, cycles or instructions"
		"-p abc|invalid pid 'abc': must be 1..4194304"
		"-p 0|invalid pid '0': must be 1..4194304"
		"-F 99|no process to sample: give -p PID, -a or a COMMAND"
		"-p 1 --frob|unknown option '--frob'"
		"-p 1 -x|unknown option '-x'"
		"-p 1 extra|unexpected argument 'extra'"
		"-p|option '-p' needs a value"
	)
	local c args msg

	for c in "${cases[@]}"; do
		args=${c%%|*}
		msg=${c#*|}
		# shellcheck disable=SC2086
		run "$REC" $args
		assert_equal "$status $args" "64 $args"
		assert_line --index 0 "sp-record: $msg"
	done
}

@test "-h prints usage with the exit codes, -V the version" {
	run "$REC" -h
	assert_success
	assert_line --index 0 --partial 'usage: sp-record -p PID'
	assert_output --partial 'Exit status: 0 success, 1 some events were lost, 2 fatal error, 64 usage error.'
	run "$REC" -V
	assert_success
	assert_output --regexp '^sp-record [0-9]+\.[0-9]+'
}

@test "a process that does not exist is a fatal error" {
	local pid

	true &
	pid=$!
	wait $pid
	run "$REC" -p "$pid" -o "$OUT"
	assert_failure 2
	assert_output "sp-record: no such process $pid"
}

@test "a buffer too small for the stack size is refused" {
	run "$REC" -p $$ -m 8 -o /dev/null
	assert_failure 2
	assert_output --partial 'cannot hold two samples of a 61440-byte stack: use -m 32 or more'
}

@test "refuses to write the raw stream to a terminal" {
	command -v script >/dev/null || skip "script (util-linux) is not installed"
	start_cmd "$BUSY" 1 10
	run script -qec "'$REC' -p $TARGET_PID -d 1" /dev/null
	assert_failure 2
	assert_output --partial 'sp-record: refusing to write the raw stream to a terminal: redirect it or pipe it into sp-unwind'
}

@test "not permitted to profile another user's process: the owner is the cause" {
	[ "$(id -u)" = 0 ] || skip "needs root to drop to the nobody user"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	local p
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$REC" -p 1 -o /dev/null
	assert_failure 2
	if ((p > 2)); then
		# no one's processes at all: that comes first
		assert_output --regexp "^sp-record: not permitted to profile 1: perf_event_open was denied: kernel.perf_event_paranoid is $p, "
	else
		assert_output --regexp "^sp-record: not permitted to profile 1: perf_event_open was denied: process 1 belongs to uid [0-9]+ and this process runs as uid 65534 without CAP_PERFMON or CAP_SYS_PTRACE \\(CapEff 0+\\): run as its owner or root, or grant CAP_PERFMON$"
	fi
}

@test "an unprivileged user records its own process without kernel stacks" {
	[ "$(id -u)" = 0 ] || skip "needs root to drop to the nobody user"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	local p flags
	# 2: user-space events of one's own processes, no kernel samples
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	((p <= 2)) || skip "kernel.perf_event_paranoid is $p: unprivileged users open no perf events"
	((p >= 2)) || skip "kernel.perf_event_paranoid is $p: unprivileged users may record kernel stacks"

	# a directory of nobody's: the target, its ready file and the stream
	NOBODY_DIR=$(mktemp -d /tmp/sp-nobody.XXXXXX)
	cp "$BUSY" "$NOBODY_DIR/busy"
	chown -R 65534:65534 "$NOBODY_DIR"
	chmod 755 "$NOBODY_DIR"
	# shellcheck disable=SC2016	# for the inner sh
	run setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '
		WL_READY=$1/ready "$1/busy" 1 30 & p=$!
		i=0
		until [ -e "$1/ready" ]; do
			i=$((i + 1))
			if [ $i -gt 3000 ] || ! kill -0 $p; then
				echo "busy is not ready"; kill $p; exit 99
			fi
			sleep 0.01
		done
		"$2" -p $p -d 2 -o "$1/out.raw"; s=$?; kill $p; exit $s' \
		sh "$NOBODY_DIR" "$REC"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, '
	assert_samples "$NOBODY_DIR/out.raw" "$output"
	# sp_raw_header: sp_stream_header (16 bytes), then sp_event_info, whose
	# flags (u32 at byte 20) have SP_EV_KERNEL (0x2) only with kernel
	# callchains
	flags=$(le32 "$NOBODY_DIR/out.raw" 20)
	if ((flags & 2)); then
		fail "the stream header says kernel callchains were recorded (event flags $flags)"
	fi
	assert_stream_exact "$NOBODY_DIR/out.raw"
}

@test "records a busy process for 1 s into a file" {
	start_cmd "$BUSY" 1 10
	run "$REC" -p "$TARGET_PID" -d 1 -o "$OUT"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, 1\.[0-9][0-9] s$'
	assert_samples "$OUT" "$output"
	assert_stream_exact "$OUT"
}

@test "writes to standard output when it is a pipe" {
	start_cmd "$BUSY" 1 10
	run sh -c "'$REC' -p $TARGET_PID -d 0.5 | cat >'$OUT'"
	assert_success
	assert_stream_exact "$OUT"
}

@test "-e task-clock and --no-kernel are accepted" {
	local flags
	start_cmd "$BUSY" 1 10
	run "$REC" -p "$TARGET_PID" -d 0.5 -e task-clock --no-kernel -o "$OUT"
	assert_success
	assert_samples "$OUT" "$output"
	assert_stream_exact "$OUT"
	# the header names the event (sp_event_info.name at byte 56) and says
	# no kernel callchains (SP_EV_KERNEL, 0x2, in the flags at byte 20)
	assert_equal "$(dd if="$OUT" bs=1 skip=56 count=11 status=none | tr '\0' '@')" task-clock@
	flags=$(le32 "$OUT" 20)
	if ((flags & 2)); then
		fail "--no-kernel, yet the header says kernel callchains (event flags $flags)"
	fi
}

@test "-e cycles records or says the event is not supported" {
	start_cmd "$BUSY" 1 10
	run "$REC" -p "$TARGET_PID" -d 0.5 -e cycles -o "$OUT"
	if [ "$status" -ne 0 ]; then
		assert_failure 2
		assert_output "sp-record: event 'cycles' is not supported here: no hardware counters for sampling (try cpu-clock)"
	else
		assert_stream_exact "$OUT"
	fi
}

@test "follows threads and children created after attaching" {
	# later creates its threads and child only once released, and it is
	# released once sp-record has attached to its one thread
	start_cmd --go "$LATER"
	record_bg -p "$TARGET_PID" -F 199 -d 1.5
	wait_attached "$ERR" "$RECPID"
	release_target
	wait_rec
	assert_equal "$REC_STATUS" 0
	assert_line --index 0 --regexp '^sp-record: attached 1 threads in [0-9]+\.[0-9] ms$'
	# the first thread, three more and the child
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 5 threads, '
	assert_samples "$OUT" "$output"
}

@test "samples several processes given as a list" {
	local a b

	start_cmd "$BUSY" 1 10
	a=$TARGET_PID
	start_cmd "$BUSY" 2 10
	b=$TARGET_PID
	run "$REC" -p "$a,$b" -d 0.5 -o "$OUT"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 3 threads, '
}

@test "stops by itself when the target exits" {
	local t0 ms
	# two threads that end after 0.3 s of CPU time each, once released
	start_cmd --go "$BUSY" 2 60 0.3
	record_bg -p "$TARGET_PID"
	wait_attached "$ERR" "$RECPID"
	release_target
	wait_until 60 "the target to exit" gone "$TARGET_PID"
	t0=$(now_ms)
	# it looks every 100 ms: 10 s is far more than it needs
	wait_until 10 "sp-record to stop after its target exited" gone "$RECPID"
	ms=$(($(now_ms) - t0))
	wait_rec
	assert_equal "$REC_STATUS" 0
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 2 threads, '
	echo "# stopped $ms ms after the target exited" >&3
	assert_stream_exact "$OUT"
}

@test "records on after the main thread exits, stops when all have" {
	local t0 ms
	# released, the main thread exits; then two threads spin for 1.5 s of
	# their own CPU time each and the process exits
	start_cmd --go "$LEXIT"
	record_bg -p "$TARGET_PID" -F 199
	wait_attached "$ERR" "$RECPID"
	release_target
	wait_until 60 "the target to exit" gone "$TARGET_PID"
	t0=$(now_ms)
	wait_until 10 "sp-record to stop after all threads exited" gone "$RECPID"
	ms=$(($(now_ms) - t0))
	wait_rec
	assert_equal "$REC_STATUS" 0
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 3 threads, '
	# two threads for 1.5 s of CPU time each at 199 Hz, all of it after
	# the main thread exited: about 600 samples, however loaded the machine
	[ "$(samples_of "$output")" -gt 300 ]
	assert_samples "$OUT" "$output"
	echo "# stopped $ms ms after the target exited" >&3
	assert_stream_exact "$OUT"
}

@test "SIGINT flushes everything and exits 0" {
	start_cmd "$BUSY" 1 10
	record_bg -p "$TARGET_PID"
	wait_attached "$ERR" "$RECPID"
	kill -INT "$RECPID"
	wait_rec
	assert_equal "$REC_STATUS" 0
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, '
	assert_stream_exact "$OUT"
}

@test "SIGTERM stops like SIGINT" {
	start_cmd "$BUSY" 1 10
	record_bg -p "$TARGET_PID"
	wait_attached "$ERR" "$RECPID"
	kill -TERM "$RECPID"
	wait_rec
	assert_equal "$REC_STATUS" 0
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, '
	assert_stream_exact "$OUT"
}

@test "a closed standard output stops it promptly, the target runs on" {
	local t0 ms
	start_cmd "$BUSY" 1 90
	t0=$(now_ms)
	# -d 60: only its reader going away ends it sooner
	run bash -c "timeout 90 '$REC' -p $TARGET_PID -d 60 | head -c 100 >/dev/null; exit \${PIPESTATUS[0]}"
	ms=$(($(now_ms) - t0))
	assert_success
	# the attach report, then nothing
	assert_output --regexp '^sp-record: attached 1 threads in [0-9]+\.[0-9] ms$'
	echo "# stopped after $ms ms" >&3
	((ms < 10000)) || fail "sp-record ran on for $ms ms after its reader went away"
	kill -0 "$TARGET_PID"
}

@test "999 Hz on 4 busy threads for 1.5 s of CPU time each loses nothing" {
	start_cmd --go "$BUSY" 4 60 1.5
	record_bg -p "$TARGET_PID" -F 999
	wait_attached "$ERR" "$RECPID"
	release_target
	wait_rec
	assert_equal "$REC_STATUS" 0
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 4 threads, [0-9]+\.[0-9][0-9] s$'
	# 6 s of CPU time (3 s on two idle cores) at 999 Hz: about 6000
	# samples, however loaded the machine
	[ "$(samples_of "$output")" -gt 2000 ]
	assert_samples "$OUT" "$output"
	assert_stream_exact "$OUT"
}

@test "a lossy recording exits 1 and says how much was lost" {
	start_cmd "$BUSY" 4 10
	# the smallest buffer for 8-byte stacks, at a rate it cannot take
	run "$REC" -p "$TARGET_PID" -F 50000 --stack-size 8 -m 1 -d 1 -o "$OUT"
	if [ "$status" -eq 0 ]; then
		skip "the kernel delivered every event even into a one-page buffer"
	fi
	assert_failure 1
	assert_line --regexp '^sp-record: [0-9]+ samples, [1-9][0-9]* lost events, 4 threads, .*; raise -m or lower -F to lose none$'
	assert_stream_exact "$OUT"
}
