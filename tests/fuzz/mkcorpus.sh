#!/bin/bash
# SPDX-License-Identifier: MIT
# mkcorpus.sh BIN_DIR: (re)make the seed corpora of the stream readers from
# real recordings of the suite's workloads: tests/fuzz/corpus/{raw,unwound,
# symtext,folded,spool}/rec-WORKLOAD-*.  Small on purpose (short, low rate,
# small stack copies): a fuzzer mutates small inputs faster, and what the
# seeds must show is every kind of record, not many of them.  Needs what
# sp-record needs (root or CAP_PERFMON).  Hand-made seeds (edge-*) are
# left alone.
set -euo pipefail
bin=$(cd "${1:?usage: mkcorpus.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
wl=$(mktemp -d)
trap 'rm -rf "$wl"' EXIT

for w in wl-threads wl-jit wl-fork wl-deep wl-offcpu; do
	cc -O2 -g -fomit-frame-pointer -pthread -o "$wl/$w" \
		"$here/../workloads/$w.c"
done
# wl-jit leaves its perf map behind, as JITs do: remove the new ones
ls /tmp/perf-*.map 2>/dev/null | sort >"$wl/maps.before" || true
cd "$here/corpus"
mkdir -p raw unwound symtext folded spool
rm -f raw/rec-* unwound/rec-* symtext/rec-* folded/rec-* spool/rec-*
for w in wl-threads wl-jit wl-fork wl-deep wl-offcpu; do
	# wl-offcpu: with waits off the CPU (SWITCH and OFFCPU records)
	off=()
	[[ $w == wl-offcpu ]] && off=(--off-cpu) && set -- 0.15 || set -- 0.15 0.05
	"$bin/sp-record/sp-record" -F 299 --stack-size 512 --stack-tail 0 \
		"${off[@]}" -o "raw/rec-$w" -- "$wl/$w" "$@" 2>/dev/null
	"$bin/sp-unwind/sp-unwind" -q -o "unwound/rec-$w" "raw/rec-$w" || true
	"$bin/sp-symbolize/sp-symbolize" -o "symtext/rec-$w" "unwound/rec-$w" 2>/dev/null || true
	"$bin/sp-fold/sp-fold" -o "folded/rec-$w" "symtext/rec-$w" 2>/dev/null || true
	"$bin/sp-spool/sp-spool" write -q "spool/rec-$w" <"unwound/rec-$w"
done
# CPython's frames (PYCODE and PYSTACK records) of Debian's python3.11
cat >"$wl/py.py" <<'PY'
import time
END = time.process_time() + 0.1
def inner(n):
    return sorted(range(n), key=lambda v: -v)
def outer():
    while time.process_time() < END: inner(50)
outer()
PY
"$bin/sp-record/sp-record" -F 299 --stack-size 1024 --stack-tail 0 \
	-o raw/rec-python -- /usr/bin/python3.11 "$wl/py.py" 2>/dev/null
"$bin/sp-unwind/sp-unwind" -q -o unwound/rec-python raw/rec-python || true
"$bin/sp-symbolize/sp-symbolize" -o symtext/rec-python unwound/rec-python 2>/dev/null || true
"$bin/sp-fold/sp-fold" -o folded/rec-python symtext/rec-python 2>/dev/null || true
"$bin/sp-spool/sp-spool" write -q spool/rec-python <unwound/rec-python
ls /tmp/perf-*.map 2>/dev/null | sort | comm -13 "$wl/maps.before" - | xargs -r rm -f
ls -l raw unwound symtext folded spool
