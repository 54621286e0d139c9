#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Continuous profiling: sp-fold --every cuts the stream into windows of
# wall-clock time in a spool directory, sp-push uploads them to a receiver
# that checks every request as Grafana Pyroscope's /ingest API documents it
# (receiver.py), and every body is read back by go tool pprof: windows
# whole and non-overlapping, their samples adding up to those recorded,
# through a receiver that fails, throttles, is slow, or is down and comes
# back.

# shellcheck disable=SC2154	# status, output: set by bats' run
load common

SP_PUSH="$SP_BIN/sp-push/sp-push"
RECEIVER="$BATS_TEST_DIRNAME/receiver.py"

setup_file() {
	build_workloads
	# one recording for the tests that need windows: 3 s of CPU at 99 Hz,
	# recorded whole, made windows of 1 s offline (no idle closing)
	if [[ $(id -u) == 0 ]] || (($(cat /proc/sys/kernel/perf_event_paranoid) <= 2)); then
		local d=$BATS_FILE_TMPDIR pid
		WL_CLOCK=cpu WL_READY=$d/ready WL_GO=$d/go "$WL_DIR/wl-single" 3 3>&- &
		pid=$!
		echo "$pid" >>"$d/targets"
		wait_until 30 "wl-single to be ready" target_ready "$pid" "$d/ready"
		"$SP_RECORD" -p "$pid" -o "$d/rec.raw" 2>"$d/rec.err" 3>&- &
		local rpid=$!
		wait_until 60 "sp-record to attach" stream_begun "$d/rec.raw" "$rpid"
		: >"$d/go"
		wait "$rpid" || true
	fi
}

setup() {
	[[ -x $SP_PUSH ]] || fail "sp-push is not built at $SP_PUSH: run make"
	command -v go >/dev/null || skip "go (golang-go) is not installed: go tool pprof reads the windows"
	command -v python3 >/dev/null || skip "python3 is not installed: it runs the receiver"
	T=$BATS_TEST_TMPDIR
	RAW=$BATS_FILE_TMPDIR/rec.raw
	[[ -s $RAW ]] || skip "no recording: perf events are not permitted here"
	RECORDED=$(sed -n 's/^sp-record: \([0-9]*\) samples, 0 lost.*/\1/p' "$BATS_FILE_TMPDIR/rec.err")
	[[ -n $RECORDED ]] || fail "the recording lost events: $(cat "$BATS_FILE_TMPDIR/rec.err")"
}

teardown() {
	[[ -n ${PUSH_PID:-} ]] && kill -KILL "$PUSH_PID" 2>/dev/null
	[[ -n ${AGENT_PID:-} ]] && kill_tree "$AGENT_PID"
	stop_receiver
	stop_targets
}

# stop_receiver: kill the receiver started last, and reap it.
stop_receiver() {
	[[ -n ${RECV_PID:-} ]] || return 0
	kill -KILL "$RECV_PID" 2>/dev/null
	wait "$RECV_PID" 2>/dev/null || true
	RECV_PID=
}

# windows DIR [ARGS...]: the recording folded into pprof windows of 1 s in
# DIR, as the offline pipeline writes them.
windows() {
	local dir=$1
	shift
	mkdir -p "$dir"
	"$SP_UNWIND" -q <"$RAW" | "$SP_SYMBOLIZE" |
		"$SP_FOLD" --format pprof --every 1s -o "$dir" "$@" 2>"$dir.err" ||
		fail "sp-fold --every failed: $(cat "$dir.err")"
}

# pprof_samples FILE...: the samples the pprof files hold, as go tool pprof
# reads them (it fails on a profile that is not valid).
pprof_samples() {
	local f n total=0
	for f in "$@"; do
		n=$(go tool pprof -raw "$f" 2>"$T/pprof.err" | awk '
			/^Samples:/ { s = 1; next }
			/^[A-Z][a-z]+:/ { s = 0 }
			s && /^ *[0-9]+ +[0-9]+:/ { n += $1 }
			END { print n + 0 }') || fail "go tool pprof cannot read $f: $(cat "$T/pprof.err")"
		[[ -s $T/pprof.err ]] && fail "go tool pprof on $f: $(cat "$T/pprof.err")"
		total=$((total + n))
	done
	echo "$total"
}

# start_receiver DIR [ARGS...]: the receiver on 127.0.0.1, keeping what it
# takes in DIR; its pid in RECV_PID, its port in RECV_PORT (give --port
# $RECV_PORT to start it again where it was).
start_receiver() {
	local dir=$1
	shift
	mkdir -p "$dir"
	python3 "$RECEIVER" "$dir" "$@" >"$dir/port" 2>>"$dir/receiver.err" 3>&- &
	RECV_PID=$!
	wait_until 30 "the receiver to listen" grep -q '^port ' "$dir/port"
	RECV_PORT=$(sed -n 's/^port //p' "$dir/port")
}

# spool_empty DIR: no window waits in DIR.
spool_empty() {
	! ls "$1" | grep -q '\.pb\.gz$'
}

# assert_received RECV COPY...: the receiver took each window of the
# copies of the spool once, byte for byte, and nothing else.
assert_received() {
	local recv=$1 want got
	shift
	[[ ! -s $recv/errors ]] || fail "the receiver refused requests: $(cat "$recv/errors")"
	want=$(for d in "$@"; do sha256sum -- "$d"/*.pb.gz; done |
		awk '{ print $1 }' | sort)
	got=$(sha256sum -- "$recv"/[0-9]*.pb.gz | awk '{ print $1 }' | sort)
	assert_equal "$got" "$want"
	assert_equal "$(wc -l <"$recv/requests")" "$(wc -l <<<"$want")"
}

@test "sp-fold --every: windows aligned to the clock, never overlapping, every sample in one" {
	local f prev_end="" start end n
	windows "$T/w"
	run cat "$T/w.err"
	assert_output --regexp "^sp-fold: [0-9]+ windows, $RECORDED samples written to '$T/w'$"
	n=0
	for f in "$T"/w/*; do
		n=$((n + 1))
		[[ $(basename "$f") =~ ^([0-9]{8}T[0-9]{6}\.[0-9]{3}Z)_([0-9]{8}T[0-9]{6}\.[0-9]{3}Z)_99hz\.pb\.gz$ ]] ||
			fail "window file name $(basename "$f")"
		start=${BASH_REMATCH[1]} end=${BASH_REMATCH[2]}
		[[ -z $prev_end || ! $start < $prev_end ]] || fail "$(basename "$f") overlaps the window before"
		prev_end=$end
	done
	((n >= 3)) || fail "$n windows of 1 s for 3 s of CPU time"
	# the inner windows are whole seconds
	ls "$T/w" | sed -n '2,$p' | sed '$d' | grep -vq '\.000Z_[0-9T]*\.000Z_' &&
		fail "an inner window is not a whole second: $(ls "$T/w")"
	assert_equal "$(pprof_samples "$T"/w/*)" "$RECORDED"
	# time_nanos and duration_nanos say the same as the name
	run go tool pprof -raw "$(ls "$T"/w/* | sed -n 2p)"
	assert_line --regexp '^Duration: 1s$'
	assert_line --regexp '^Time: [0-9-]+ [0-9:]+ \+0000 UTC$'
	# labels of every sample
	windows "$T/l" --service shop --label zone=eu-1
	run go tool pprof -tags "$(ls "$T"/l/* | head -1)"
	assert_output --partial 'service_name: Total'
	assert_output --partial 'zone: Total'
	assert_output --partial 'host: Total'
}

# all_placed DIR RAW PID: the windows in DIR hold every sample the raw
# stream RAW holds so far (fatal if PID, the pipeline, has ended).
all_placed() {
	local n
	gone "$3" && fatal "the pipeline ended before its windows were written"
	ls "$1" | grep -q '\.pb\.gz$' || return 1
	n=$(raw_count "$2" 1)
	((n > 0)) && [[ $(pprof_samples "$1"/*.pb.gz) == "$n" ]]
}

@test "sp-fold --every: a window with no input after it is written while the pipeline runs" {
	local work
	need_perf_events
	# a second of work, and a process that sleeps on: the recording goes
	# on, but no sample comes to close the last window
	WL_CLOCK=cpu start_target --go wl-single 1
	work=$TARGET_PID
	start_cmd --exec sleep 60
	mkdir -p "$T/spool"
	sp_pipeline_start "$T/idle" -p "$work,$TARGET_PID" -- --format pprof --every 1s -o "$T/spool"
	recording_started
	release_target "$BATS_TEST_TMPDIR/go.1"
	wait_until 60 "the work to end" gone "$work"
	# no sample comes after the work: only the clock closes the last window
	wait_until 30 "windows to hold every sample, without input after them" \
		all_placed "$T/spool" "$T/idle.raw" "$PIPE_PID"
}

@test "sp-fold --every: usage errors" {
	run "$SP_FOLD" --every 1s
	assert_failure 64
	assert_output --partial "--every writes files: give -o DIR, a directory"
	run "$SP_FOLD" --every 0.5s -o "$T"
	assert_failure 64
	assert_output --partial "invalid --every '0.5s': must be 1 s or more"
	run "$SP_FOLD" --every 1s --format speedscope -o "$T"
	assert_failure 64
	run "$SP_FOLD" --every 1s -o "$T/none" </dev/null
	assert_failure 2
	assert_output --partial "cannot write windows into '$T/none': No such file or directory"
	run "$SP_FOLD" --label 'a b=c' --format pprof
	assert_failure 64
}

@test "sp-push sends every window once, through 500s and 429s, and empties the spool" {
	windows "$T/w"
	cp -r "$T/w" "$T/copy"
	start_receiver "$T/recv" --fail 3 --status 500
	run "$SP_PUSH" --url "http://127.0.0.1:$RECV_PORT" --app host.cpu \
		--label env=test --once "$T/w"
	# the first try meets a 500 and leaves the rest for later
	assert_failure 1
	assert_line --regexp "not sent: http://127.0.0.1:$RECV_PORT answered 500: "
	"$SP_PUSH" --url "http://127.0.0.1:$RECV_PORT" --app host.cpu \
		--label env=test "$T/w" 2>"$T/push.err" 3>&- &
	PUSH_PID=$!
	wait_until 60 "the spool to empty" spool_empty "$T/w"
	kill -TERM "$PUSH_PID"
	wait "$PUSH_PID" || fail "sp-push exited $?: $(cat "$T/push.err")"
	PUSH_PID=
	assert_received "$T/recv" "$T/copy"
	assert_equal "$(pprof_samples "$T"/recv/[0-9]*.pb.gz)" "$RECORDED"
	run cat "$T/recv/requests"
	assert_line --regexp '^1 name=host.cpu%7Benv%3Dtest%7D&from=[0-9]{13}&until=[0-9]{13}&format=pprof&spyName=stackpulse&sampleRate=99$'

	# 429 with Retry-After: waited for, then sent
	stop_receiver
	windows "$T/w2"
	cp -r "$T/w2" "$T/copy2"
	start_receiver "$T/recv2" --fail 1 --status 429
	run "$SP_PUSH" --url "http://127.0.0.1:$RECV_PORT" --app host.cpu --once "$T/w2"
	assert_failure 1
	assert_line --regexp "answered 429: .*next try in 1 s$"
	run "$SP_PUSH" --url "http://127.0.0.1:$RECV_PORT" --app host.cpu --once "$T/w2"
	assert_success
	assert_received "$T/recv2" "$T/copy2"
}

@test "sp-push: a receiver down, then up: windows wait and go, none twice; restarting sp-push loses nothing" {
	local port
	windows "$T/w"
	cp -r "$T/w" "$T/copy"
	# a port nobody listens on: start a receiver, note its port, stop it
	start_receiver "$T/probe"
	port=$RECV_PORT
	stop_receiver
	"$SP_PUSH" --url "http://127.0.0.1:$port" --app host.cpu "$T/w" \
		2>"$T/push.err" 3>&- &
	PUSH_PID=$!
	wait_until 30 "sp-push to fail to connect" grep -q 'not sent: .*onnect' "$T/push.err"
	spool_empty "$T/w" && fail "windows were dropped while the receiver was down"
	# sp-push stopped and started again: the spool is the queue
	kill -TERM "$PUSH_PID"
	wait "$PUSH_PID" 2>/dev/null || true
	start_receiver "$T/recv" --port "$port"
	"$SP_PUSH" --url "http://127.0.0.1:$port" --app host.cpu "$T/w" \
		2>"$T/push2.err" 3>&- &
	PUSH_PID=$!
	wait_until 60 "the spool to empty" spool_empty "$T/w"
	# the receiver killed and started again on its port mid-queue
	stop_receiver
	windows "$T/w"
	cp -r "$T/w" "$T/copy2"
	wait_until 30 "sp-push to meet the receiver down" grep -q 'not sent' "$T/push2.err"
	start_receiver "$T/recv" --port "$port"
	wait_until 90 "the spool to empty" spool_empty "$T/w"
	assert_received "$T/recv" "$T/copy" "$T/copy2"
	assert_equal "$(pprof_samples "$T"/recv/[0-9]*.pb.gz)" "$((2 * RECORDED))"
}

@test "sp-push: a slow receiver, a tenant and basic auth from a file; the spool capped" {
	windows "$T/w"
	cp -r "$T/w" "$T/copy"
	printf 'agent:s3cret\n' >"$T/auth"
	chmod 600 "$T/auth"
	start_receiver "$T/recv" --delay 1 --tenant team-a --basic agent:s3cret
	run "$SP_PUSH" --url "http://127.0.0.1:$RECV_PORT" --app host.cpu \
		--tenant team-a --auth-file "$T/auth" --timeout 10 --once "$T/w"
	assert_success
	assert_line --regexp '^sp-push: [0-9]+ windows sent, 0 refused, 0 dropped$'
	assert_received "$T/recv" "$T/copy"
	# the secret is on no command line: not in sp-push's usage either
	run "$SP_PUSH" --help
	refute_output --partial "--password"

	# no credentials: tried again later, never dropped (a key being fixed)
	windows "$T/w"
	run "$SP_PUSH" --url "http://127.0.0.1:$RECV_PORT" --app host.cpu \
		--tenant team-a --once "$T/w"
	assert_failure 1
	assert_line --regexp 'answered 401: .*unauthenticated'
	spool_empty "$T/w" && fail "a window was dropped on a 401"

	# a window the server refuses (422: not a profile it takes) is set
	# aside as NAME.refused, out of the queue; the others go
	stop_receiver
	start_receiver "$T/recv422" --fail 1 --status 422
	run "$SP_PUSH" --url "http://127.0.0.1:$RECV_PORT" --app host.cpu --once "$T/w"
	assert_failure 1
	assert_line --regexp "refused: http://127.0.0.1:$RECV_PORT answered 422: "
	spool_empty "$T/w" || fail "windows left: $(ls "$T/w")"
	run ls "$T/w"
	assert_line --regexp '\.pb\.gz\.refused$'

	# over the cap, the oldest windows go
	stop_receiver
	rm -rf "$T/w"
	windows "$T/w"
	run "$SP_PUSH" --url "http://127.0.0.1:1" --app host.cpu --max-spool 1 --once "$T/w"
	assert_failure 1
	assert_line --regexp "spool '$T/w' holds more than 1 bytes: dropped '"
	run ls "$T/w"
	assert_equal "${#lines[@]}" 1
}

@test "the whole chain, live: record, fold every second, push; the receiver has every sample" {
	need_perf_events
	local rec
	mkdir -p "$T/spool"
	start_receiver "$T/recv"
	"$SP_PUSH" --url "http://127.0.0.1:$RECV_PORT" --app test.cpu "$T/spool" \
		2>"$T/push.err" 3>&- &
	PUSH_PID=$!
	WL_CLOCK=cpu start_target --go wl-single 3
	sp_pipeline_start "$T/chain" -p "$TARGET_PID" -- --format pprof --every 1s -o "$T/spool"
	recording_started
	release_target
	sp_pipeline_wait
	PIPE_OUT=$T/chain
	for i in "${!PIPE_STATUS[@]}"; do
		[[ ${PIPE_STATUS[i]} == 0 || (${PIPE_NAMES[i]} == sp-unwind && ${PIPE_STATUS[i]} == 1) ]] ||
			fail "${PIPE_NAMES[i]} exited ${PIPE_STATUS[i]}: $(cat "$T/chain.${PIPE_NAMES[i]}.err")"
	done
	rec=$(sed -n 's/^sp-record: \([0-9]*\) samples, 0 lost.*/\1/p' "$T/chain.sp-record.err")
	[[ -n $rec ]] || fail "sp-record: $(cat "$T/chain.sp-record.err")"
	wait_until 60 "sp-push to empty the spool" spool_empty "$T/spool"
	kill -TERM "$PUSH_PID"
	wait "$PUSH_PID" || fail "sp-push: $(cat "$T/push.err")"
	PUSH_PID=
	[[ ! -s $T/recv/errors ]] || fail "refused: $(cat "$T/recv/errors")"
	assert_equal "$(pprof_samples "$T"/recv/[0-9]*.pb.gz)" "$rec"
	# the designed stacks, as Pyroscope would show them
	run go tool pprof -top -sample_index=samples "$T"/recv/[0-9]*.pb.gz
	assert_output --regexp 'leaf_a'
}

@test "contrib/stackpulse-agent: the whole host pushed; SIGTERM drains every sample to the receiver" {
	need_perf_events
	[ "$(id -u)" = 0 ] || skip "the whole host needs root or CAP_PERFMON"
	local agent rec
	mkdir -p "$T/spool" "$T/cache"
	start_receiver "$T/recv"
	PATH=$SP_BIN/sp-record:$SP_BIN/sp-unwind:$SP_BIN/sp-symbolize:$SP_BIN/sp-fold:$SP_BIN/sp-push:$PATH \
		PYROSCOPE_URL=http://127.0.0.1:$RECV_PORT EVERY=1s HZ=49 \
		SPOOL=$T/spool CACHE=$T/cache \
		"$SP_ROOT/contrib/stackpulse-agent" 2>"$T/agent.err" 3>&- &
	agent=$!
	AGENT_PID=$agent
	wait_until 60 "the agent's first window to reach the receiver" test -s "$T/recv/requests"
	kill -TERM "$agent"
	wait "$agent" || fail "the agent exited $?: $(cat "$T/agent.err")"
	AGENT_PID=
	rec=$(sed -n 's/^sp-record: \([0-9]*\) samples, 0 lost.*/\1/p' "$T/agent.err")
	[[ -n $rec ]] || fail "sp-record: $(cat "$T/agent.err")"
	run cat "$T/agent.err"
	assert_line --regexp '^sp-push: [0-9]+ windows sent, 0 refused, 0 dropped$'
	spool_empty "$T/spool" || fail "windows left: $(ls "$T/spool")"
	[[ ! -s $T/recv/errors ]] || fail "refused: $(cat "$T/recv/errors")"
	assert_equal "$(pprof_samples "$T"/recv/[0-9]*.pb.gz)" "$rec"
	run cat "$T/recv/requests"
	assert_line --regexp "^1 name=host.cpu%7Bhost%3D[^&]+%7D&from="
}
