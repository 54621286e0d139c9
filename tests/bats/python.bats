#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# python.bats: CPython's own frames without -X perf, read by sp-record's
# BPF program inside each sample and put by sp-symbolize where the
# interpreter's C function ran them.
#
# Every script is written here with random function names, so that no name
# can come from anywhere but the process, and spends a budget of CPU time
# (time.process_time), recorded whole under sp-record: counts do not
# depend on load.  No perf map is written (no -X perf).

load common

setup() {
	require_tools
	need_perf_events
	[[ $(id -u) == 0 ]] ||
		skip "needs root: loading the BPF program needs CAP_BPF and CAP_PERFMON"
	T=$BATS_TEST_TMPDIR
	N=$(printf '%04x%04x' $RANDOM $RANDOM)
}

# need_cpython VERSION: PY is that interpreter: Debian's python3.11, or
# pyenv's (which CI has: a missing one fails there).
need_cpython() {
	local root
	case $1 in
	3.11) PY=/usr/bin/python3.11 ;;
	*)
		root=$(pyenv root 2>/dev/null || echo /root/.pyenv)
		PY="$root/versions/$1/bin/python${1%.*}"
		;;
	esac
	[[ -x $PY ]] && return 0
	[[ ${CI:-} == true ]] && fail "$PY is missing: CI has pyenv's interpreters"
	skip "needs $PY"
}

# The symbolized stream of COMMAND... recorded whole at 499 Hz: $T/py.sym;
# sp-record's report in $T/rec.err.
record_py() {
	"$SP_RECORD" -F 499 -m 1024 -- "$@" 2>"$T/rec.err" >"$T/py.raw" ||
		fail "sp-record failed: $(cat "$T/rec.err")"
	"$SP_UNWIND" "$T/py.raw" 2>"$T/unw.err" | "$SP_SYMBOLIZE" >"$T/py.sym" ||
		fail "sp-unwind | sp-symbolize failed: $(cat "$T/unw.err")"
}

# chain_script FILE: <module> calls f, f calls g, g calls h, h spins for
# 0.8 s of CPU time; h's loop is line 5, the calls lines 8, 10 and 11.
chain_script() {
	cat >"$1" <<EOF
import time
END = time.process_time() + 0.8
def h_$N():
    x = 0
    while time.process_time() < END: x += 1
def g_$N():
    y = 1
    h_$N()
def f_$N():
    g_$N()
f_$N()
EOF
}

# python_share SYM WANT: percent of the samples of SYM whose Python frames,
# innermost first, are exactly WANT ("function@file:line;..."), that keep
# no _PyEval_EvalFrameDefault and have PyEval_EvalCode, the interpreter's
# own C frames, under them; prints "good samples".
python_share() {
	awk -F'\t' -v want="$2" '
		$1 == "frame" {
			id = $3
			if ($5 == "interpreted")
				sig[id] = sig[id] $9 "@" $11 ":" $12 ";"
			else if (sig[id] != "" && $9 == "PyEval_EvalCode")
				under[id] = 1
			if ($9 == "_PyEval_EvalFrameDefault")
				eval[id] = 1
		}
		$1 == "sample" {
			n++
			if (sig[$7] == want && under[$7] && !eval[$7])
				good++
		}
		END { printf "%d %d\n", good, n }' "$1"
}

# assert_chain: at least 90% of at least 100 samples show h, g, f,
# <module> at their lines, where the interpreter's C function was.
assert_chain() {
	local s=$T/chain.py good n
	read -r good n < <(python_share "$T/py.sym" \
		"py::h_$N:$s@$s:5;py::g_$N:$s@$s:8;py::f_$N:$s@$s:10;py::<module>:$s@$s:11;")
	if ((n < 100 || good * 100 < n * 90)); then
		grep -m12 -P '^frame\t.*\tinterpreted\t' "$T/py.sym" || true
		fail "$good of $n samples show h, g, f, <module> at their lines"
	fi
	grep -qE 'python: 1 processes, [0-9]+ stacks, [0-9]+ code objects' "$T/rec.err" ||
		fail "no python line in sp-record's report: $(cat "$T/rec.err")"
}

@test "python3.11 (Debian's, stripped): h, g, f, <module> at their lines, no -X perf" {
	need_cpython 3.11
	chain_script "$T/chain.py"
	record_py "$PY" "$T/chain.py"
	assert_chain
}

@test "python3.12: h, g, f, <module> at their lines, no -X perf" {
	need_cpython 3.12.1
	chain_script "$T/chain.py"
	record_py "$PY" "$T/chain.py"
	assert_chain
}

@test "python3.13: h, g, f, <module> at their lines, no -X perf" {
	need_cpython 3.13.0
	chain_script "$T/chain.py"
	record_py "$PY" "$T/chain.py"
	assert_chain
}

@test "python3.12 -X perf too: each Python frame once" {
	need_cpython 3.12.1
	chain_script "$T/chain.py"
	record_py "$PY" -X perf "$T/chain.py"
	rm -f "/tmp/perf-$(awk -F'\t' '$1 == "comm" { print $3; exit }' "$T/py.sym").map"
	assert_chain
	"$SP_FOLD" "$T/py.sym" >"$T/py.folded"
	# the perf map's py:: frames are left out: h once, not twice
	assert_share "$T/py.folded" "py::f_$N:[^;]*_\\[j\\];py::g_$N:[^;]*_\\[j\\];py::h_$N:[^;]*_\\[j\\](;|\$)" 90
	assert_share "$T/py.folded" "py::h_$N.*py::h_$N" 0 0
}

@test "python: a CPython that a launched shell forks has its frames too" {
	need_cpython 3.11
	chain_script "$T/chain.py"
	# the shell forks the interpreter (the "; true" keeps it from exec'ing
	# it): the child's events are made by the kernel from the shell's
	record_py sh -c "$PY $T/chain.py; true"
	assert_chain
}

@test "python: -a reads the frames of a CPython that ran before it started" {
	local pid
	need_cpython 3.11
	# h says when it spins, for 3 s of CPU time
	cat >"$T/long.py" <<EOF
import time
def h_$N():
    open("$T/spinning", "w").close()
    end = time.process_time() + 3
    while time.process_time() < end: pass
def g_$N(): h_$N()
def f_$N(): g_$N()
f_$N()
EOF
	"$PY" "$T/long.py" &
	pid=$!
	wait_until 10 "python to spin" test -e "$T/spinning"
	"$SP_RECORD" -a -F 499 -d 1 -o "$T/host.raw" 2>"$T/rec.err" ||
		fail "sp-record -a failed: $(cat "$T/rec.err")"
	kill "$pid" 2>/dev/null || true
	wait "$pid" || true
	"$SP_UNWIND" "$T/host.raw" 2>/dev/null | "$SP_SYMBOLIZE" |
		"$SP_FOLD" --pid | grep -E "^[^;]*-$pid;" >"$T/py.folded" || true
	assert_share "$T/py.folded" "py::f_$N:[^;]*;py::g_$N:[^;]*;py::h_$N:[^;]*(;|\$)" 90
}

@test "Python calling C calling Python: sorted(key=...) keeps its order" {
	need_cpython 3.12.1
	cat >"$T/sort.py" <<EOF
import time
END = time.process_time() + 0.8
def key_$N(v):
    for i in range(300): v += i
    return -v
def sorter_$N():
    return sorted(range(100), key=key_$N)
while time.process_time() < END:
    sorter_$N()
EOF
	record_py "$PY" "$T/sort.py"
	"$SP_FOLD" "$T/py.sym" >"$T/py.folded"
	# the key function runs under sorted's C frames, under its caller
	assert_share "$T/py.folded" \
		"py::sorter_$N:[^;]*;(.*;)?builtin_sorted;(.*;)?list_sort[^;]*;(.*;)?py::key_$N:[^;]*(;|\$)" 60
}

@test "python: a chain deeper than the walk ends in [python truncated]" {
	need_cpython 3.11
	cat >"$T/deep.py" <<EOF
import time
END = time.process_time() + 0.5
def deep_$N(d):
    if d:
        return deep_$N(d - 1)
    x = 0
    while time.process_time() < END: x += 1
deep_$N(100)
EOF
	record_py "$PY" "$T/deep.py"
	"$SP_FOLD" "$T/py.sym" >"$T/py.folded"
	# the innermost 64 frames, under the mark (mawk has no {63})
	local i re='\[python truncated\];'
	for ((i = 0; i < 64; i++)); do
		re+="py::deep_$N:[^;]*;"
	done
	assert_share "$T/py.folded" "${re%;}(;|\$)" 90
}

@test "python: the frames are those of the sample's instant, never of a later read" {
	need_cpython 3.11
	# two chains take turns every millisecond; each leaf logs its
	# CLOCK_MONOTONIC interval, the clock of the samples
	cat >"$T/turns.py" <<EOF
import time
END = time.process_time() + 1.5
log = []
def leaf_a_$N():
    t = time.monotonic_ns()
    while time.monotonic_ns() < t + 1000000: pass
    log.append(("a", t, time.monotonic_ns()))
def mid_a_$N(): leaf_a_$N()
def leaf_b_$N():
    t = time.monotonic_ns()
    while time.monotonic_ns() < t + 1000000: pass
    log.append(("b", t, time.monotonic_ns()))
def mid_b_$N(): leaf_b_$N()
while time.process_time() < END:
    mid_a_$N()
    mid_b_$N()
with open("$T/turns.log", "w") as f:
    for c, t0, t1 in log: f.write("%s %d %d\n" % (c, t0, t1))
EOF
	"$SP_RECORD" -F 999 -m 1024 -- "$PY" "$T/turns.py" 2>"$T/rec.err" >"$T/py.raw"
	"$SP_UNWIND" "$T/py.raw" 2>/dev/null | "$SP_SYMBOLIZE" >"$T/py.sym"
	# a sample whose Python leaf is leaf_X must lie in one of X's
	# intervals; 200 us of margin at each end for the call and return
	awk -F'\t' -v n="$N" '
		FILENAME ~ /turns.log$/ { split($0, a, " "); c[++k] = a[1]
			t0[k] = a[2] - 200000; t1[k] = a[3] + 200000; next }
		$1 == "frame" && $5 == "interpreted" && !($3 in leaf) {
			leaf[$3] = "-"
			if ($9 ~ "^py::leaf_a_" n ":") leaf[$3] = "a"
			if ($9 ~ "^py::leaf_b_" n ":") leaf[$3] = "b"
		}
		$1 == "sample" && leaf[$7] != "" && leaf[$7] != "-" {
			checked++
			ok = 0
			for (i = 1; i <= k && !ok; i++)
				if (c[i] == leaf[$7] && $2 >= t0[i] && $2 <= t1[i])
					ok = 1
			if (!ok) wrong++
		}
		END {
			printf "%d samples checked, %d of another chain\n", checked, wrong
			exit !(checked >= 500 && wrong * 100 <= checked)
		}' "$T/turns.log" "$T/py.sym"
}

@test "python: no Python frames in a process without CPython, nor from 3.10" {
	build_workloads
	record_py "$WL_DIR/wl-single"
	run grep -cP '^frame\t.*\tinterpreted\t' "$T/py.sym"
	assert_output 0
	refute_output --partial 'python:'
	run cat "$T/rec.err"
	refute_output --partial 'python:'

	need_cpython 3.10.13
	chain_script "$T/chain.py"
	record_py "$PY" "$T/chain.py"
	grep -qE 'python: no Python frames: CPython 3\.10 in .*: unsupported version \(3\.11 to 3\.13 are read\)' "$T/rec.err" ||
		fail "no unsupported-version note: $(cat "$T/rec.err")"
	run grep -cP '^frame\t.*\tinterpreted\t' "$T/py.sym"
	assert_output 0
	grep -qP '^frame\t.*\t_PyEval_EvalFrameDefault\t' "$T/py.sym"
}

@test "python: a process that maps CPython's program only to read it runs none" {
	need_cpython 3.11
	build_workloads
	# mapped without PROT_EXEC, as a symbolizer maps what it reads
	start_target wl-mapfile "$PY" 30
	grep -q " r--p .*${PY##*/}\$" "/proc/$TARGET_PID/maps" ||
		fail "the target did not map $PY: $(cat "/proc/$TARGET_PID/maps")"
	"$SP_RECORD" -p "$TARGET_PID" -F 499 -d 0.5 -o "$T/map.raw" 2>"$T/rec.err" ||
		fail "sp-record failed: $(cat "$T/rec.err")"
	run cat "$T/rec.err"
	refute_output --partial 'python:'
	"$SP_UNWIND" "$T/map.raw" 2>/dev/null | "$SP_SYMBOLIZE" >"$T/map.sym"
	run grep -cP '^frame\t.*\tinterpreted\t' "$T/map.sym"
	assert_output 0
	grep -qP '^frame\t.*\tleaf_read\t' "$T/map.sym" || fail "no leaf_read in the samples"
}

@test "sp-record --python off: no Python frames; --python rejects other words" {
	need_cpython 3.11
	chain_script "$T/chain.py"
	"$SP_RECORD" -F 499 --python off -- "$PY" "$T/chain.py" 2>"$T/rec.err" >"$T/py.raw"
	"$SP_UNWIND" "$T/py.raw" 2>/dev/null | "$SP_SYMBOLIZE" >"$T/py.sym"
	run grep -cP '^frame\t.*\tinterpreted\t' "$T/py.sym"
	assert_output 0
	run "$SP_RECORD" --python maybe -- true
	assert_failure 64
	assert_output --partial "invalid --python 'maybe': must be auto or off"
}

@test "python: without the right to load BPF, said once, native frames as always" {
	local d p
	need_cpython 3.11
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	((p <= 2)) || skip "nobody may not profile its own processes (kernel.perf_event_paranoid is $p)"
	# a directory the nobody user may read and write
	d=$(mktemp -d /tmp/sp-python-nobody.XXXXXX)
	chmod 777 "$d"
	chain_script "$d/chain.py"
	chmod 644 "$d/chain.py"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SP_RECORD" -F 499 -o "$d/py.raw" -- "$PY" "$d/chain.py"
	"$SP_UNWIND" "$d/py.raw" 2>/dev/null | "$SP_SYMBOLIZE" >"$T/py.sym"
	rm -rf "$d"
	assert_success
	[[ $(grep -c 'python:' <<<"$stderr") == 1 ]] || fail "$stderr"
	[[ $stderr == *"python: no Python frames: loading a BPF program needs root, or CAP_BPF and CAP_PERFMON"* ]] ||
		fail "$stderr"
	run grep -cP '^frame\t.*\tinterpreted\t' "$T/py.sym"
	assert_output 0
	grep -qP '^frame\t.*\t_PyEval_EvalFrameDefault\t' "$T/py.sym"
	# and of a recording with no CPython in it, nothing is said
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$SP_RECORD" -F 499 -o /dev/null -- true
	assert_success
	[[ $stderr != *python* ]] || fail "$stderr"
}

# reuse_test [module]: work_N compiled afresh for every call, alternately
# from two sources: the same name and size, different file and first line,
# so that the new code object takes the freed one's address.  With
# "module", the two sources' <module> code objects too, which differ in
# nothing but their file and co_version (3.12 and later; in 3.11 nothing
# read in the sample tells them apart).
reuse_test() {
	cat >"$T/reuse.py" <<EOF
import time
END = time.process_time() + 1.0
def spin_a_$N():
    for i in range(20000): pass
def spin_b_$N():
    for i in range(20000): pass
SRC = (("def work_$N():\n    spin_a_$N()\nwork_$N()\n", "gen_a.py"),
       ("\n" * 40 + "def work_$N():\n    spin_b_$N()\nwork_$N()\n", "gen_b.py"))
while time.process_time() < END:
    for src, name in SRC:
        exec(compile(src, name, "exec"),
             {"spin_a_$N": spin_a_$N, "spin_b_$N": spin_b_$N})
EOF
	record_py "$PY" "$T/reuse.py"
	# under spin_a, work from gen_a.py line 2 under its <module> at line
	# 3; under spin_b, gen_b.py 42 and 43
	awk -F'\t' -v n="$N" -v module="${1:-}" '
		$1 == "frame" && $5 == "interpreted" {
			k = ++depth[$3]
			if (k == 1 && $9 ~ "^py::spin_[ab]_" n ":")
				leaf[$3] = substr($9, 10, 1)
			if (k == 2 && $9 ~ "^py::work_" n ":")
				work[$3] = $11 ":" $12
			if (k == 3 && $9 ~ "^py::<module>:gen_")
				mod[$3] = $11 ":" $12
		}
		$1 == "sample" && leaf[$7] != "" && work[$7] != "" {
			checked++
			want = leaf[$7] == "a" ? "gen_a.py:2" : "gen_b.py:42"
			if (work[$7] != want && wrong++ < 5)
				print "spin_" leaf[$7] " under work at " work[$7]
			# the <module>s are mostly gone when read: unnamed
			want = leaf[$7] == "a" ? "gen_a.py:3" : "gen_b.py:43"
			if (module && mod[$7] != "") {
				named++
				if (mod[$7] != want && wrong++ < 5)
					print "spin_" leaf[$7] " under <module> at " mod[$7]
			}
		}
		END {
			printf "%d samples checked (%d <module>s named), %d wrong\n",
				checked, named, wrong
			exit !(checked >= 100 && !wrong)
		}' "$T/py.sym"
}

@test "python3.11: a code object freed and another made at its address are told apart" {
	need_cpython 3.11
	reuse_test
}

@test "python3.12: a code object freed and another made at its address are told apart" {
	need_cpython 3.12.1
	reuse_test module
}

@test "python3.13: a code object freed and another made at its address are told apart" {
	need_cpython 3.13.0
	reuse_test module
}
