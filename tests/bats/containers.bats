#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Processes that see another file system than the recorder: a container's
# mount and pid namespaces with a private /tmp, and a chroot whose program
# exists only inside it.  A JIT there writes /tmp/perf-NSPID.map in its own
# /tmp with its own pid; sp-record finds it under /proc/PID/root, and the
# program's binary by build-id (kept in the build-id cache, since its path
# names nothing outside).

# shellcheck disable=SC2154	# status, output: set by bats' run
load common

setup_file() {
	need_perf_events
	build_workloads
}

setup() {
	[ "$(id -u)" = 0 ] || skip "namespaces and chroot need root"
	T=$BATS_TEST_TMPDIR
}

# in_namespaces DIR EXE CMD [ARGS...]: run CMD, which execs EXE, in
# directory DIR in new mount and pid namespaces with /proc and a private
# /tmp of their own (DIR, perhaps under the old /tmp, stays reachable as
# the working directory: give paths in it relative), its $WL_READY at
# /tmp/ready inside; wait until it is ready; its pid as the host sees it
# in TARGET_PID.
in_namespaces() {
	local dir=$1 exe=$2 u
	shift 2
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	# shellcheck disable=SC2016	# for the inner sh
	(cd "$dir" && WL_READY=/tmp/ready exec unshare --mount --pid --fork \
		--mount-proc --kill-child \
		sh -c 'mount -t tmpfs none /tmp && exec "$@"' sh "$@") \
		>/dev/null 2>>"$T/target.err" 3>&- &
	u=$!
	echo "$u" >>"$T/targets"
	wait_until 30 "the namespaced target to exec $exe" child_runs "$u" "$exe"
	TARGET_PID=$(tr -d ' ' </proc/"$u"/task/"$u"/children)
	wait_until 30 "the namespaced target to be ready" \
		target_ready "$TARGET_PID" "/proc/$TARGET_PID/root/tmp/ready"
}

@test "a JIT in its own mount and pid namespaces with a private /tmp: perf map found, -p and -a" {
	in_namespaces "$WL_DIR" "$WL_DIR/wl-jit" ./wl-jit 30
	# it sees itself as 1, the host as TARGET_PID; its map is not in our /tmp
	run grep NSpid "/proc/$TARGET_PID/status"
	assert_output --regexp "^NSpid:[[:space:]]+$TARGET_PID[[:space:]]+1$"
	[[ ! -e /tmp/perf-$TARGET_PID.map && ! -e /tmp/perf-1.map ]] ||
		skip "a perf map of that pid is in this /tmp already"
	[[ -s /proc/$TARGET_PID/root/tmp/perf-1.map ]] || fail "the JIT wrote no perf map"

	sp_pipeline "$T/p.folded" -p "$TARGET_PID" -d 1 -F 499
	assert_pipeline_ok "$T/p.folded"
	assert_share "$T/p.folded" '(^|;)jit_hot_\[j\](;|$)' 90
	assert_share "$T/p.folded" '(^|;)main;run;call_jit;jit_outer_\[j\];jit_hot_\[j\](;|$)' 80

	sp_pipeline "$T/a.folded" -a -d 1 -F 499 -- --pid
	assert_pipeline_ok "$T/a.folded"
	grep "^wl-jit-$TARGET_PID;" "$T/a.folded" >"$T/a.jit" ||
		fail "no sample of wl-jit $TARGET_PID in the host's recording"
	assert_share "$T/a.jit" ';main;run;call_jit;jit_outer_\[j\];jit_hot_\[j\](;|$)' 80
}

@test "a jitdump in its own mount and pid namespaces with a private /tmp: JIT frames named from it while it runs" {
	"${WL_CC:-cc}" -O2 -g -I"$WL_SRC" -o "$T/sym-jit" "$WL_SRC/sym-jit.c"
	in_namespaces "$T" "$T/sym-jit" ./sym-jit jitdump /tmp 30
	[[ -s /proc/$TARGET_PID/root/tmp/jit-1.dump ]] || fail "the JIT wrote no jitdump"
	[[ ! -e /tmp/jit-1.dump ]] || skip "a jitdump of that pid is in this /tmp already"
	sp_pipeline "$T/j.folded" -p "$TARGET_PID" -d 1 -F 499
	assert_pipeline_ok "$T/j.folded"
	assert_share "$T/j.folded" '(^|;)main;call_jit;jit_outer_\[j\];jit_hot_\[j\]($|;)' 70
	# named from the dump, with its lines, as a process outside would be
	"$SP_UNWIND" -q <"$T/j.folded.raw" | "$SP_SYMBOLIZE" >"$T/j.sym" 2>/dev/null
	grep -qE $'\tjit\tjitdump\t-\t0x[0-9a-f]+\tjit_hot\t[^\t]+\tjit-src.js\t1[01]$' "$T/j.sym" ||
		fail "no jit_hot from the jitdump: $(grep -m3 jit_ "$T/j.sym")"
	# once the container is gone its dump is out of reach: unnamed, not
	# named from another file
	stop_targets || true
	wait_until 30 "the JIT to end" gone "$TARGET_PID"
	"$SP_UNWIND" -q <"$T/j.folded.raw" | "$SP_SYMBOLIZE" >"$T/gone.sym" 2>/dev/null
	! grep -q $'\tjitdump\t' "$T/gone.sym" || fail "named from a jitdump out of reach"
}

@test "python3.12 -X perf in its own namespaces with a private /tmp: py:: frames" {
	need_python312
	# the script by a descriptor opened outside: Python makes a relative
	# path absolute, and the private /tmp may hide the source tree
	in_namespaces "$WL_SRC" "$(readlink -f "$PYTHON312")" \
		"$PYTHON312" -X perf /dev/fd/5 30 5<"$WL_SRC/wl-python.py"
	sp_pipeline "$T/py.folded" -p "$TARGET_PID" -d 2 -F 499
	assert_pipeline_ok "$T/py.folded"
	assert_share "$T/py.folded" \
		'(^|;)(main|Py_BytesMain|Py_RunMain);(.*;)?py::outer[^;]*;(.*;)?py::middle[^;]*;(.*;)?py::inner' 50
}

# chroot_root ROOT: a root directory holding wl-jit as /bin/jit-inside (a
# path no file outside has) and the libraries it needs, and a /tmp.
chroot_root() {
	local root=$1 lib
	command -v chroot >/dev/null || skip "chroot (coreutils) is not installed"
	mkdir -p "$root/bin" "$root/tmp"
	cp "$WL_DIR/wl-jit" "$root/bin/jit-inside"
	for lib in $(ldd "$WL_DIR/wl-jit" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp "$lib" "$root$lib"
	done
}

@test "a chroot whose program exists only inside it, attached to: frames and perf map found" {
	local root=$T/root
	chroot_root "$root"
	WL_READY=/tmp/ready chroot "$root" /bin/jit-inside 30 \
		>/dev/null 2>>"$T/target.err" 3>&- &
	TARGET_PID=$!
	echo "$TARGET_PID" >>"$T/targets"
	wait_until 30 "the chrooted target to be ready" \
		target_ready "$TARGET_PID" "$root/tmp/ready"
	[[ -s $root/tmp/perf-$TARGET_PID.map ]] || fail "the JIT wrote no perf map"
	[[ ! -e /tmp/perf-$TARGET_PID.map ]] || skip "a perf map of that pid is in /tmp already"

	sp_pipeline "$T/c.folded" -p "$TARGET_PID" -d 1 -F 499
	assert_pipeline_ok "$T/c.folded"
	assert_share "$T/c.folded" '(^|;)main;run;call_jit;jit_outer_\[j\];jit_hot_\[j\](;|$)' 80
}

@test "a chroot whose program exists only inside it, recorded from its start: the binary kept, perf map found" {
	local root=$T/root
	chroot_root "$root"
	# the kernel names the mapping as the chrooted process sees it
	WL_CLOCK=cpu run "$SP_RECORD" -F 499 -o "$T/c.raw" -- \
		chroot "$root" /bin/jit-inside 1
	assert_success
	assert_line --regexp "^sp-record: '/bin/jit-inside' was deleted while mapped: kept a copy \(build-id [0-9a-f]+, "
	sp_replay "$T/c.raw" "$T/c.folded"
	assert_pipeline_ok "$T/c.folded"
	assert_share "$T/c.folded" '(^|;)main;run;call_jit;jit_outer_\[j\];jit_hot_\[j\](;|$)' 80
}
