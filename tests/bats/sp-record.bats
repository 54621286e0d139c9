#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# sp-record: options, errors, recording live processes, stopping, losses.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

SP_BIN=${SP_BIN:-$BATS_TEST_DIRNAME/../..}
REC="$SP_BIN/sp-record/sp-record"

setup_file() {
	local d=$BATS_FILE_TMPDIR

	# busy [THREADS [SECONDS]]: spin in THREADS threads, die after SECONDS
	cat >"$d/busy.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
static volatile unsigned long sink;
static void *spin(void *a) { (void)a; for (;;) sink++; return 0; }
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t;
	alarm(argc > 2 ? atoi(argv[2]) : 20);
	for (int i = 1; i < n; i++)
		pthread_create(&t, 0, spin, 0);
	spin(0);
	return 0;
}
EOF
	# later: one thread, then after 300 ms three more and a child process
	cat >"$d/later.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
static volatile unsigned long sink;
static void *spin(void *a) { (void)a; for (;;) sink++; return 0; }
int main(void)
{
	pthread_t t;
	alarm(20);
	usleep(300000);
	if (fork() == 0) {
		alarm(2);
		spin(0);
	}
	for (int i = 0; i < 3; i++)
		pthread_create(&t, 0, spin, 0);
	spin(0);
	return 0;
}
EOF
	# lexit: the main thread exits after 300 ms, two threads spin 1.5 s
	cat >"$d/lexit.c" <<'EOF'
#include <pthread.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static void *spin(void *a)
{
	double end = now() + 1.5;
	while (now() < end)
		sink++;
	return a;
}
int main(void)
{
	pthread_t t;
	alarm(20);
	for (int i = 0; i < 2; i++)
		pthread_create(&t, 0, spin, 0);
	usleep(300000);
	pthread_exit(0);
}
EOF
	cc -O2 -fomit-frame-pointer -pthread -o "$d/busy" "$d/busy.c"
	cc -O2 -fomit-frame-pointer -pthread -o "$d/lexit" "$d/lexit.c"
	cc -O2 -fomit-frame-pointer -pthread -o "$d/later" "$d/later.c"
}

setup() {
	BUSY="$BATS_FILE_TMPDIR/busy"
	LATER="$BATS_FILE_TMPDIR/later"
	LEXIT="$BATS_FILE_TMPDIR/lexit"
	OUT="$BATS_TEST_TMPDIR/out.raw"
	ERR="$BATS_TEST_TMPDIR/err"
	TARGET=
	RECPID=
}

teardown() {
	local p

	for p in $RECPID $TARGET; do
		kill -KILL "$p" 2>/dev/null || true
	done
	for p in $RECPID $TARGET; do
		wait "$p" 2>/dev/null || true
	done
}

# start_target PROGRAM ARGS...: run it in the background, pid in TARGET
start_target() {
	"$@" &
	TARGET="$TARGET $!"
	LAST=$!
	sleep 0.2
}

# The stream starts with the raw magic and ends with a SUMMARY record
# (type 10, size 80).
assert_stream() {
	run sh -c "head -c 8 '$1' | od -An -c | tr -d ' '"
	assert_output 'SPRAW\0\0\0'
	run sh -c "od -An -tu4 -j8 -N8 '$1' | tr -s ' '"
	assert_output ' 1 112'
	run sh -c "tail -c 80 '$1' | od -An -tu4 -N8 | tr -s ' '"
	assert_output ' 10 80'
}

# samples_of TEXT: the sample count of a summary line
samples_of() {
	sed -n 's/^sp-record: \([0-9]*\) samples, .*/\1/p' <<<"$1"
}

@test "bad options exit 64 with the valid range" {
	local -a cases=(
		"-p 1 -F 0|invalid frequency '0': must be 1..100000"
		"-p 1 -F abc|invalid frequency 'abc': must be 1..100000"
		"-p 1 -F 100001|invalid frequency '100001': must be 1..100000"
		"-p 1 --stack-size 100|invalid stack size '100': must be a multiple of 8 in 8..65528"
		"-p 1 --stack-size 65536|invalid stack size '65536': must be a multiple of 8 in 8..65528"
		"-p 1 --stack-size 0|invalid stack size '0': must be a multiple of 8 in 8..65528"
		"-p 1 -d 0|invalid duration '0': must be a positive number of seconds"
		"-p 1 -d -1|invalid duration '-1': must be a positive number of seconds"
		"-p 1 -m 3|invalid ring buffer size '3': must be a power of 2 in 1..65536 pages"
		"-p 1 -e bogus|invalid event 'bogus': must be cpu-clock, task-clock, cycles or instructions"
		"-p abc|invalid pid 'abc': must be 1..4194304"
		"-p 0|invalid pid '0': must be 1..4194304"
		"-F 99|no process to sample: give -p PID"
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
	start_target "$BUSY" 1 10
	run script -qec "'$REC' -p $LAST -d 1" /dev/null
	assert_failure 2
	assert_output --partial 'sp-record: refusing to write the raw stream to a terminal: redirect it or pipe it into sp-unwind'
}

@test "not permitted names perf_event_paranoid and CAP_PERFMON" {
	[ "$(id -u)" = 0 ] || skip "needs root to drop to the nobody user"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$REC" -p 1 -o /dev/null
	assert_failure 2
	assert_output --regexp '^sp-record: not permitted to profile 1: perf_event_paranoid is -?[0-9]+; run as root or grant CAP_PERFMON$'
}

@test "an unprivileged user records its own process without kernel stacks" {
	[ "$(id -u)" = 0 ] || skip "needs root to drop to the nobody user"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	local d

	d=$(mktemp -d)
	chmod 755 "$d"
	cp "$BUSY" "$d/busy"
	run setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
		"'$d/busy' 1 5 & p=\$!; '$REC' -p \$p -d 0.5 -o /dev/null; s=\$?; kill \$p; exit \$s"
	rm -rf "$d"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, '
	[ "$(samples_of "$output")" -gt 10 ]
}

@test "records a busy process for 1 s into a file" {
	start_target "$BUSY" 1 10
	run "$REC" -p "$LAST" -d 1 -o "$OUT"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, 1\.[0-9][0-9] s$'
	[ "$(samples_of "$output")" -gt 50 ]
	assert_stream "$OUT"
}

@test "writes to standard output when it is a pipe" {
	start_target "$BUSY" 1 10
	run sh -c "'$REC' -p $LAST -d 0.5 | cat >'$OUT'"
	assert_success
	assert_stream "$OUT"
}

@test "-e task-clock and --no-kernel are accepted" {
	start_target "$BUSY" 1 10
	run "$REC" -p "$LAST" -d 0.5 -e task-clock --no-kernel -o "$OUT"
	assert_success
	[ "$(samples_of "$output")" -gt 10 ]
	assert_stream "$OUT"
}

@test "-e cycles records or says the event is not supported" {
	start_target "$BUSY" 1 10
	run "$REC" -p "$LAST" -d 0.5 -e cycles -o "$OUT"
	if [ "$status" -ne 0 ]; then
		assert_failure 2
		assert_output "sp-record: event 'cycles' is not supported here: no hardware counters for sampling (try cpu-clock)"
	else
		assert_stream "$OUT"
	fi
}

@test "follows threads and children created after attaching" {
	start_target "$LATER"
	run "$REC" -p "$LAST" -F 199 -d 1.5 -o "$OUT"
	assert_success
	# the first thread, three more and the child
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 5 threads, '
	[ "$(samples_of "$output")" -gt 200 ]
}

@test "samples several processes given as a list" {
	local a b

	start_target "$BUSY" 1 10
	a=$LAST
	start_target "$BUSY" 2 10
	b=$LAST
	run "$REC" -p "$a,$b" -d 0.5 -o "$OUT"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 3 threads, '
}

@test "stops by itself when the target exits" {
	start_target "$BUSY" 2 1
	SECONDS=0
	run timeout 10 "$REC" -p "$LAST" -o "$OUT"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 2 threads, '
	[ "$SECONDS" -le 3 ]
	assert_stream "$OUT"
}

@test "records on after the main thread exits, stops when all have" {
	"$LEXIT" &
	TARGET=$!
	SECONDS=0
	run timeout 10 "$REC" -p "$TARGET" -F 199 -o "$OUT"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 3 threads, '
	# two threads for about 1.5 s at 199 Hz
	[ "$(samples_of "$output")" -gt 300 ]
	[ "$SECONDS" -le 4 ]
	assert_stream "$OUT"
}

@test "SIGINT flushes everything and exits 0" {
	start_target "$BUSY" 1 10
	"$REC" -p "$LAST" -o "$OUT" 2>"$ERR" &
	RECPID=$!
	sleep 1
	kill -INT "$RECPID"
	local rc=0
	wait "$RECPID" || rc=$?
	RECPID=
	assert_equal "$rc" 0
	run cat "$ERR"
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 1 threads, '
	assert_stream "$OUT"
}

@test "SIGTERM stops like SIGINT" {
	start_target "$BUSY" 1 10
	"$REC" -p "$LAST" -o "$OUT" 2>"$ERR" &
	RECPID=$!
	sleep 0.5
	kill -TERM "$RECPID"
	local rc=0
	wait "$RECPID" || rc=$?
	RECPID=
	assert_equal "$rc" 0
	assert_stream "$OUT"
}

@test "a closed standard output stops it promptly, the target runs on" {
	start_target "$BUSY" 1 10
	SECONDS=0
	run bash -c "timeout 10 '$REC' -p $LAST -d 5 | head -c 100 >/dev/null; exit \${PIPESTATUS[0]}"
	assert_success
	# the attach report, then nothing
	assert_output --regexp '^sp-record: attached 1 threads in [0-9]+\.[0-9] ms$'
	[ "$SECONDS" -le 2 ]
	kill -0 "$LAST"
}

@test "999 Hz on 4 busy threads for 3 s loses nothing" {
	start_target "$BUSY" 4 10
	run "$REC" -p "$LAST" -F 999 -d 3 -o "$OUT"
	assert_success
	assert_line --regexp '^sp-record: [0-9]+ samples, 0 lost events, 4 threads, 3\.[0-9][0-9] s$'
	# two cores shared by four threads: about 2000 samples a second
	[ "$(samples_of "$output")" -gt 2000 ]
	assert_stream "$OUT"
}

@test "a lossy recording exits 1 and says how much was lost" {
	start_target "$BUSY" 4 10
	# the smallest buffer for 8-byte stacks, at a rate it cannot take
	run "$REC" -p "$LAST" -F 50000 --stack-size 8 -m 1 -d 1 -o "$OUT"
	if [ "$status" -eq 0 ]; then
		skip "the kernel delivered every event even into a one-page buffer"
	fi
	assert_failure 1
	assert_line --regexp '^sp-record: [0-9]+ samples, [1-9][0-9]* lost events, 4 threads, .*; raise -m or lower -F to lose none$'
	assert_stream "$OUT"
}
