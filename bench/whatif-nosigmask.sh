#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/whatif-nosigmask.sh RAW: how much of sp-unwind's CPU goes to the
# rt_sigprocmask calls libunwind makes around its global cache lock
# (docs/PERFORMANCE.md, "The miss").  Unwinds RAW (a raw stream from
# sp-record) five times as built and five times with sigprocmask made a
# no-op by an LD_PRELOAD shim, checks that the outputs are identical and
# prints the median CPU milliseconds per 1,000 samples of each.
set -eu
raw=$1
root=${SP_BIN:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/shim.c" <<'C'
#include <signal.h>
int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	(void)how; (void)set;
	if (old)
		sigemptyset(old);
	return 0;
}
C
${CC:-cc} -O2 -shared -fPIC -o "$tmp/shim.so" "$tmp/shim.c"
"$root/sp-unwind/sp-unwind" -o "$tmp/a.unw" "$raw" 2>"$tmp/report" || true
LD_PRELOAD="$tmp/shim.so" "$root/sp-unwind/sp-unwind" -q -o "$tmp/b.unw" "$raw" || true
cmp -s "$tmp/a.unw" "$tmp/b.unw" && echo "outputs identical" || echo "outputs DIFFER"
python3 - "$root/sp-unwind/sp-unwind" "$raw" "$tmp/shim.so" "$tmp/report" <<'PY'
import os, re, statistics, subprocess, sys
unwind, raw, shim, report = sys.argv[1:]
m = re.search(r"(\d+) samples", open(report).read())
n = int(m.group(1)) if m else 0
def cpu(env):
    xs = []
    for _ in range(5):
        p = subprocess.Popen([unwind, "-q", "-o", "/dev/null", raw], env=env)
        _, _, ru = os.wait4(p.pid, 0)
        xs.append(ru.ru_utime + ru.ru_stime)
    return statistics.median(xs)
a = cpu(dict(os.environ))
b = cpu(dict(os.environ, LD_PRELOAD=shim))
print("%d samples; sp-unwind %.1f ms per 1,000 samples as built, %.1f with no-op sigprocmask (%.0f%% less)"
      % (n, 1e6 * a / n, 1e6 * b / n, 100 * (1 - b / a)))
PY
