#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench.py: stackpulse against `perf record --call-graph dwarf`, side by side.

Run by bench/run.sh (which checks the dependencies and builds the
workloads); see docs/PERFORMANCE.md for what is measured and why.  Writes
bench/results/<name>.json and, unless BENCH_QUICK=1, the generated part of
docs/PERFORMANCE.md.  Every time is taken from wait4(2)'s rusage of the
measured command itself, at microsecond resolution, as bench/rusage.c
reports it: no python, shell or GNU time is counted, and a pipeline is its
stages started with pipes between them, their rusages summed.

Environment (defaults for the full run; BENCH_QUICK=1 shrinks them):
  BENCH_REPS       recordings per tool per workload and frequency (6; quick 2)
  BENCH_WORK_S     seconds of work per run with no profiler (3; quick 1)
  BENCH_FREQS      sampling frequencies, Hz ("99 999")
  BENCH_STACK      user stack bytes copied per sample, both tools (16384)
  BENCH_THREADS    threads of the multi-threaded workload (4)
  BENCH_DEPTH      recursion depth of the C workload (32)
  BENCH_RSS_S      lengths of the peak-RSS recordings, s ("10 60"; quick "3 10")
  BENCH_RSS_FREQ   their frequency (999)
  BENCH_TMP        scratch directory (/tmp/sp-bench)
  BENCH_NAME       result file name (full-YYYYmmdd-HHMMSS or quick)
"""
import datetime
import filecmp
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import itertools
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
QUICK = os.environ.get("BENCH_QUICK", "") not in ("", "0")


def env(name, full, quick):
    return os.environ.get(name, quick if QUICK else full)


REPS = int(env("BENCH_REPS", "6", "2"))
WORK_S = float(env("BENCH_WORK_S", "3", "1"))
FREQS = [int(x) for x in env("BENCH_FREQS", "99 999", "99 999").split()]
STACK = int(env("BENCH_STACK", "16384", "16384"))
THREADS = int(env("BENCH_THREADS", "4", "4"))
DEPTH = int(env("BENCH_DEPTH", "32", "32"))
RSS_S = [float(x) for x in env("BENCH_RSS_S", "10 60", "3 10").split()]
RSS_FREQ = int(env("BENCH_RSS_FREQ", "999", "999"))
TMP = os.environ.get("BENCH_TMP", "/tmp/sp-bench")
NAME = os.environ.get("BENCH_NAME") or (
    "quick" if QUICK else "full-" + time.strftime("%Y%m%d-%H%M%S"))
PY312 = os.environ.get("BENCH_PY312", "")
PERF = os.environ.get("BENCH_PERF", "/usr/bin/perf")
PYTHON = sys.executable

TOOLS = ("sp-record", "sp-unwind", "sp-symbolize", "sp-fold", "sp-spool")
# the tools are copied here at the start, so that a rebuild in the work tree
# during the run does not change what is measured
SNAP = os.path.join(TMP, "bin")
SP = {t: os.path.join(SNAP, t, t) for t in TOOLS}


def snapshot_tools():
    import hashlib
    info = {}
    for t in TOOLS:
        src = os.path.join(ROOT, t, t)
        os.makedirs(os.path.join(SNAP, t), exist_ok=True)
        if os.path.exists(src):
            shutil.copy2(src, SP[t])
            info[t] = {"sha256": hashlib.sha256(open(src, "rb").read()).hexdigest()[:16],
                       "mtime": time.strftime("%Y-%m-%d %H:%M:%S",
                                              time.localtime(os.path.getmtime(src)))}
    os.environ["SP_BIN"] = SNAP	# for bench/profile-stage.sh
    return info
WL_DEEP = os.path.join(TMP, "bw-deep")
RUSAGE = os.path.join(TMP, "rusage")
_seq = itertools.count()
WL_PY = os.path.join(BENCH, "workloads", "bw-python.py")
WL_JS = os.path.join(BENCH, "workloads", "bw-node.js")
NODE = os.environ.get("BENCH_NODE") or shutil.which("node") or ""
FOLD_PERF = os.path.join(BENCH, "fold_perf.py")
SETTLE_S = 0.3		# after the profiler has opened its events
KEEP = os.environ.get("BENCH_KEEP", "") not in ("", "0")	# keep recordings
PROFILE = os.environ.get("BENCH_PROFILE", "1") not in ("", "0")
KEPT = {}


def log(msg):
    sys.stderr.write("bench: %s\n" % msg)
    sys.stderr.flush()


# ---------------------------------------------------------------- running

def _opened(path, mode):
    return open(path, mode) if path else subprocess.DEVNULL


def measured(argv, tag):
    """argv started through bench/rusage.c, which writes the command's own
    wait4 figures to the returned file."""
    rfile = os.path.join(TMP, "rusage.%s.%d" % (tag, next(_seq)))
    return [RUSAGE, rfile] + argv, rfile


def usage_of(rfile):
    try:
        u, s, rss, st = (int(x) for x in open(rfile).read().split())
    except (OSError, ValueError):
        return {"user_s": 0.0, "sys_s": 0.0, "cpu_s": 0.0, "maxrss_kb": 0,
                "status": 255}
    os.unlink(rfile)
    return {"user_s": u / 1e6, "sys_s": s / 1e6, "cpu_s": (u + s) / 1e6,
            "maxrss_kb": rss, "status": st}


def timed(argv, stdin=None, stdout=None, stderr=None, tag="cmd"):
    """Run argv; return its wall, user, sys, peak RSS and status.  CPU and
    RSS are the command's own (and its waited-for children's), from
    wait4, with no wrapper process, shell or python counted."""
    fin, fout, ferr = (_opened(stdin, "rb"), _opened(stdout, "wb"),
                       _opened(stderr, "wb"))
    cmd, rfile = measured(argv, tag)
    t0 = time.monotonic()
    subprocess.run(cmd, stdin=fin, stdout=fout, stderr=ferr)
    wall = time.monotonic() - t0
    for f in (fin, fout, ferr):
        if f is not subprocess.DEVNULL:
            f.close()
    r = usage_of(rfile)
    r["wall_s"] = wall
    return r


def timed_pipe(stages, stdin=None, stdout=None, tag="cmd"):
    """Run stages (argv lists) as a pipeline, each started directly as a
    shell would, and return the sum of their CPU times, the largest peak
    RSS, the wall time of the whole and the last non-zero status.  No
    shell is measured: it is neither tool's cost."""
    fin, fout = _opened(stdin, "rb"), _opened(stdout, "wb")
    t0 = time.monotonic()
    procs, prev = [], fin
    for i, argv in enumerate(stages):
        last = i == len(stages) - 1
        cmd, rfile = measured(argv, tag)
        p = subprocess.Popen(cmd, stdin=prev,
                             stdout=fout if last else subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        if prev is not fin:
            prev.close()
        prev = p.stdout
        procs.append((p, rfile))
    r = {"user_s": 0.0, "sys_s": 0.0, "cpu_s": 0.0, "maxrss_kb": 0, "status": 0}
    for p, rfile in procs:
        p.wait()
        u = usage_of(rfile)
        for k in ("user_s", "sys_s", "cpu_s"):
            r[k] += u[k]
        r["maxrss_kb"] = max(r["maxrss_kb"], u["maxrss_kb"])
        if u["status"] != 0:
            r["status"] = u["status"]
    r["wall_s"] = time.monotonic() - t0
    for f in (fin, fout):
        if f is not subprocess.DEVNULL:
            f.close()
    return r


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def perf_fds(pid):
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if "perf_event" in os.readlink("/proc/%d/fd/%s" % (pid, fd)):
                    n += 1
            except OSError:
                pass
    except OSError:
        return -1
    return n


def wait_profiler_ready(starter_pid, timeout=15.0):
    """Wait until the profiler (the child of bench/rusage.c) has opened its
    events and their number has stopped changing; then SETTLE_S more."""
    end = time.monotonic() + timeout
    last, stable = -1, 0
    while time.monotonic() < end:
        kids = children(starter_pid)
        n = max(perf_fds(kids[0]), 0) if kids else 0
        if n > 0 and n == last:
            stable += 1
            if stable >= 3:
                time.sleep(SETTLE_S)
                return True
        else:
            stable = 0
        last = n
        time.sleep(0.05)
    return False


def workload_cmd(wl, rounds):
    if wl == "c1":
        return [WL_DEEP, "1", str(rounds), str(DEPTH)]
    if wl == "c4":
        return [WL_DEEP, str(THREADS), str(rounds), str(DEPTH)]
    if wl == "js":
        return [NODE, "--perf-basic-prof", "--no-turbo-inlining", WL_JS, str(rounds)]
    return [PY312, "-X", "perf", WL_PY, str(rounds)]


def recorder_cmd(tool, pid, freq, out, stack=None, extra=()):
    stack = stack or STACK
    if tool == "perf":
        return [PERF, "record", "-e", "cpu-clock", "-F", str(freq),
                "--call-graph", "dwarf,%d" % stack, "-p", str(pid), "-o", out]
    return [SP["sp-record"], "-p", str(pid), "-F", str(freq),
            "--stack-size", str(stack), "-e", "cpu-clock", "-o", out] + list(extra)


def run_once(wl, rounds, tool, freq, out, errfile, stack=None, extra=()):
    """One run of workload wl; tool is None (no profiler), perf or sp (with
    stack bytes copied per sample, default STACK).  Returns the workload's
    work seconds and the recorder's costs."""
    wlerr = open(errfile + ".wl", "wb")
    w = subprocess.Popen(workload_cmd(wl, rounds), stdout=subprocess.PIPE, cwd=TMP,
                         stderr=wlerr)
    line = w.stdout.readline().decode()
    if not line.startswith("ready"):
        raise RuntimeError("workload %s did not start: %r" % (wl, line))
    pid = int(line.split()[1])
    prof = None
    res = {"tool": tool or "none", "freq": freq, "pid": pid}
    if tool:
        ferr = open(errfile, "wb")
        t0 = time.monotonic()
        cmd, rfile = measured(recorder_cmd(tool, pid, freq, out, stack, extra),
                              "rec")
        prof = subprocess.Popen(cmd,
                                stdout=subprocess.DEVNULL, stderr=ferr)
        if not wait_profiler_ready(prof.pid):
            log("warning: %s did not open its events in time" % tool)
        res["attach_s"] = time.monotonic() - t0
    else:
        time.sleep(SETTLE_S + 0.2)
    os.kill(pid, signal.SIGUSR1)
    rest = w.stdout.read().decode()
    _, wst, wru = os.wait4(w.pid, 0)
    w.returncode = os.waitstatus_to_exitcode(wst)
    wlerr.close()
    res["target_cpu_s"] = wru.ru_utime + wru.ru_stime
    m = re.search(r"work_s ([0-9.]+)", rest)
    if not m:
        raise RuntimeError("workload %s printed no time: %r" % (wl, rest))
    res["work_s"] = float(m.group(1))
    if prof:
        prof.wait()
        ferr.close()
        u = usage_of(rfile)
        res["rec_status"] = u["status"]
        res["rec_cpu_s"] = u["cpu_s"]
        res["rec_maxrss_kb"] = u["maxrss_kb"]
        res["rec_stderr"] = open(errfile, errors="replace").read()[-2000:]
        res["file_bytes"] = os.path.getsize(out) if os.path.exists(out) else 0
    return res


def parse_sp_record(res):
    m = re.search(r"(\d+) samples, (\d+) lost events, (\d+) threads",
                  res.get("rec_stderr", ""))
    if m:
        res["samples"], res["lost"] = int(m.group(1)), int(m.group(2))
        res["threads"] = int(m.group(3))


def perf_stats(data, res):
    """Samples and lost samples of perf.data, from `perf report --stats`:
    the per-event section's LOST_SAMPLES count is the number of samples lost
    (the aggregated LOST count is the number of LOST records, "chunks")."""
    p = subprocess.run([PERF, "report", "-i", data, "--stats"],
                       capture_output=True, text=True)
    txt = p.stdout + p.stderr
    agg, _, per_event = txt.partition("cpu-clock stats:")
    m = re.search(r"SAMPLE events:\s+(\d+)", per_event or agg)
    res["samples"] = int(m.group(1)) if m else 0
    m = re.search(r"LOST events:\s+(\d+)", agg)
    res["lost_chunks"] = int(m.group(1)) if m else 0
    m = re.search(r"LOST_SAMPLES events:\s+(\d+)", per_event)
    res["lost"] = int(m.group(1)) if m else 0


# ---------------------------------------------------------------- offline

def offline_perf(data, d, tag):
    txt, fold, sc = (os.path.join(d, x) for x in
                     ("perf.txt", "perf.folded", "perf.stackcollapse"))
    r = {}
    r["perf_script"] = timed([PERF, "script", "-i", data], stdout=txt,
                             stderr=os.path.join(d, "perf-script.err"), tag=tag)
    r["fold_perf"] = timed([PYTHON, FOLD_PERF], stdin=txt, stdout=fold, tag=tag)
    r["perf_pipe"] = timed_pipe([[PERF, "script", "-i", data],
                                 [PYTHON, FOLD_PERF]], stdout=fold, tag=tag)
    r["perf_stackcollapse"] = timed([PERF, "script", "report", "stackcollapse",
                                     "-i", data], stdout=sc,
                                    stderr=os.path.join(d, "perf-sc.err"), tag=tag)
    if os.path.getsize(sc) == 0:	# perf built without python scripting
        r.pop("perf_stackcollapse")
        sc = None
    os.unlink(txt)
    return r, fold, sc


def offline_sp(raw, d, tag):
    unw, sym, fold, spool = (os.path.join(d, x) for x in
                             ("sp.unw", "sp.sym", "sp.folded", "sp.spool"))
    r = {}
    r["sp_unwind"] = timed([SP["sp-unwind"]], stdin=raw, stdout=unw,
                           stderr=os.path.join(d, "sp-unwind.err"), tag=tag)
    # sp-symbolize's symbol cache in a directory of this recording's own:
    # the first run names every address from the binaries and writes it,
    # the second ("again": the same program profiled again, an agent's
    # next window) names them from it
    cache = os.path.join(d, "symcache.%s" % tag)
    sym_cmd = [SP["sp-symbolize"], "--cache-dir", cache]
    shutil.rmtree(cache, ignore_errors=True)
    r["sp_symbolize"] = timed(sym_cmd, stdin=unw, stdout=sym,
                              stderr=os.path.join(d, "sp-symbolize.err"), tag=tag)
    r["sp_symbolize_again"] = timed(sym_cmd, stdin=unw, stdout=sym,
                                    stderr=os.path.join(d, "sp-symbolize.err"), tag=tag)
    r["sp_fold"] = timed([SP["sp-fold"]], stdin=sym, stdout=fold, tag=tag)
    pipe = [[SP["sp-unwind"], "-q"], sym_cmd, [SP["sp-fold"]]]
    shutil.rmtree(cache, ignore_errors=True)
    r["sp_pipe"] = timed_pipe(pipe, stdin=raw, stdout=fold, tag=tag)
    r["sp_pipe_again"] = timed_pipe(pipe, stdin=raw, stdout=fold, tag=tag)
    # the same in one process: sp-fold given the recording's file
    one = os.path.join(d, "sp-one.folded")
    one_cmd = [SP["sp-fold"], "--cache-dir", cache, raw]
    shutil.rmtree(cache, ignore_errors=True)
    r["sp_one"] = timed(one_cmd, stdout=one, stderr=os.path.join(d, "sp-one.err"),
                        tag=tag)
    r["sp_one_again"] = timed(one_cmd, stdout=one, stderr=os.path.join(d, "sp-one.err"),
                              tag=tag)
    shutil.rmtree(cache, ignore_errors=True)
    one_same = filecmp.cmp(one, fold, shallow=False)
    os.unlink(one)
    err = open(os.path.join(d, "sp-unwind.err"), errors="replace").read()
    m = re.search(r"(\d+) samples, (\d+) stacks", err)
    extra = {"distinct_stacks": int(m.group(2)) if m else None,
             "unwind_report": err.strip()[-300:], "one_process_same": one_same}
    # the spool, once sp-spool exists
    s = timed([SP["sp-spool"], "write", spool], stdin=unw,
              stderr=os.path.join(d, "sp-spool.err"), tag=tag)
    if s["status"] == 0 and os.path.exists(spool) and os.path.getsize(spool) > 0:
        r["sp_spool_write"] = s
        extra["spool_bytes"] = os.path.getsize(spool)
        info = subprocess.run([SP["sp-spool"], "info", "--json", spool],
                              capture_output=True, text=True)
        try:
            extra["spool_info"] = json.loads(info.stdout)
        except ValueError:
            extra["spool_info"] = None
    else:
        extra["spool_bytes"] = None
    for f in (unw, sym, spool):
        if os.path.exists(f):
            os.unlink(f)
    return r, fold, extra


# ---------------------------------------------------------------- correctness

ROOTS = {"c1": "main", "c4": "thread_main", "py": "Py_BytesMain", "js": "node::Start"}
LEAVES = {"c1": {"leaf_a": 60, "leaf_b": 30, "leaf_c": 10},
          "c4": {"leaf_a": 60, "leaf_b": 30, "leaf_c": 10},
          "py": {"py::leaf_a": 66.7, "py::leaf_b": 33.3},
          "js": {"leaf_a": 66.7, "leaf_b": 33.3}}
# a frame of V8's perf map: "JS:*leaf_a /path/bw-node.js:18:16" (* optimized,
# ~ interpreted, ^ baseline)
JS_FRAME = re.compile(r"^JS:[*~^]?([A-Za-z_$][\w$]*)")
CHAINS = [["outer_a", "middle_a", "leaf_a"], ["outer_b", "leaf_b"], ["leaf_c"]]


def norm(frame):
    return re.sub(r"_\[[kijw]\]$", "", frame)


def analyze(path, wl):
    """Shares of a folded file: reaching the root, each designed leaf, and
    (C) the exact designed chain from the root down to the leaf."""
    total = root = exact = 0
    leaves = {k: 0 for k in LEAVES[wl]}
    pychain = 0
    want_root = ROOTS[wl]
    head = ["run_work"] + ["descend"] * (DEPTH + 1) + ["mix"]
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            stack, _, n = line.rpartition(" ")
            if not stack or not n.isdigit():
                continue
            n = int(n)
            frames = [norm(x) for x in stack.split(";")[1:]]
            total += n
            js = [m.group(1) for m in map(JS_FRAME.match, frames) if m] \
                if wl == "js" else []
            for leaf in leaves:
                if wl == "py":
                    if any(x.startswith(leaf + ":") or x == leaf for x in frames):
                        leaves[leaf] += n
                elif wl == "js":
                    if leaf in js:
                        leaves[leaf] += n
                elif leaf in frames:
                    leaves[leaf] += n
            if want_root in frames:
                root += n
                if wl == "js":
                    if js:
                        pychain += n
                elif wl != "py":
                    rest = frames[frames.index(want_root) + 1:]
                    for c in CHAINS:
                        if rest[:len(head) + len(c)] == head + c:
                            exact += n
                            break
                elif any(x.startswith("py::run_work:") for x in frames):
                    pychain += n
    pct = (lambda v: 100.0 * v / total if total else 0.0)
    r = {"samples": total, "root_pct": pct(root),
         "leaf_pct": {k: pct(v) for k, v in leaves.items()}}
    if wl == "py":
        r["py_chain_pct"] = pct(pychain)	# root reached and py::run_work seen
    elif wl == "js":
        r["py_chain_pct"] = pct(pychain)	# root reached and a JS frame named
    else:
        r["exact_chain_pct"] = pct(exact)
    return r


# ---------------------------------------------------------------- stats

def summary(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    med = statistics.median(xs)
    return {"median": med, "min": min(xs), "max": max(xs), "n": len(xs),
            "spread_pct": (100.0 * (max(xs) - min(xs)) / med) if med else 0.0}


def busy_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4], sum(v)	# minus idle and iowait


def own_cpu():
    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def exec_floor_ms():
    """CPU of starting and ending a process that does nothing (/bin/true),
    median of 21, measured the way every command is: the floor under
    each stage of a pipeline on this machine."""
    return round(1000 * statistics.median(
        timed(["/bin/true"])["cpu_s"] for _ in range(21)), 2)


def machine():
    m = {"kernel": platform.release(), "cpus": os.cpu_count(),
         "cpu_model": sh("lscpu | sed -n 's/^Model name: *//p'"),
         "mem": sh("free -m | awk '/^Mem:/ {print $2 \" MiB\"}'"),
         "perf": sh(PERF + " --version"),
         "cc": sh("cc --version | head -1"),
         "python_workload": sh(PY312 + " -V") if PY312 else None,
         "node_workload": sh(NODE + " --version") if NODE else None,
         "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
         "perf_event_paranoid": sh("cat /proc/sys/kernel/perf_event_paranoid"),
         "perf_event_max_sample_rate":
             sh("cat /proc/sys/kernel/perf_event_max_sample_rate"),
         "perf_mmap_default": "perf record -m default (perf_event_mlock_kb %s KiB): "
                              "512 KiB per CPU" % sh("cat /proc/sys/kernel/perf_event_mlock_kb"),
         "sp_mmap_default": "sp-record -m default: 2048 pages (8 MiB) per CPU",
         "git": sh("cd %s && git rev-parse --short HEAD && git status --short | wc -l" % ROOT),
         "exec_floor_ms": exec_floor_ms()}
    return m


# ---------------------------------------------------------------- the bench

def calibrate(wl):
    """Rounds that take about WORK_S seconds with no profiler."""
    probe = {"c1": 300, "c4": 150, "py": 1000, "js": 300}[wl]
    d = os.path.join(TMP, "cal")
    os.makedirs(d, exist_ok=True)
    best = None
    for _ in range(2):
        r = run_once(wl, probe, None, 0, None, os.path.join(d, "err"))
        best = r["work_s"] if best is None else min(best, r["work_s"])
        remove_perf_map(r["pid"])
    return max(1, int(probe * WORK_S / best))


def remove_perf_map(pid):
    try:
        os.unlink("/tmp/perf-%d.map" % pid)
    except OSError:
        pass


def process_recording(wl, tool, rec, d, tag):
    if tool == "perf":
        perf_stats(rec["path"], rec)
        off, fold, sc = offline_perf(rec["path"], d, tag)
        rec["offline"] = off
        rec["correct"] = analyze(fold, wl)
        if sc:
            rec["correct_stackcollapse"] = analyze(sc, wl)
        rec["folded_samples"] = rec["correct"]["samples"]
    else:
        parse_sp_record(rec)
        off, fold, extra = offline_sp(rec["path"], d, tag)
        rec["offline"] = off
        rec.update(extra)
        rec["correct"] = analyze(fold, wl)
        rec["folded_samples"] = rec["correct"]["samples"]
    rec["bytes_per_sample"] = (rec["file_bytes"] / rec["samples"]
                               if rec.get("samples") else None)
    if rec.get("spool_bytes") and rec.get("samples"):
        rec["spool_bytes_per_sample"] = rec["spool_bytes"] / rec["samples"]


def bench_workload(wl, rounds, freq, results):
    log("%s at %d Hz: %d rounds, %d runs per tool" % (wl, freq, rounds, REPS))
    runs = []
    for rep in range(REPS):
        order = ["none", "perf", "sp"] if rep % 2 == 0 else ["sp", "perf", "none"]
        rnd = {}
        for tool in order:
            d = os.path.join(TMP, "%s-%d-%d-%s" % (wl, freq, rep, tool))
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            path = os.path.join(d, "perf.data" if tool == "perf" else "sp.raw")
            r = run_once(wl, rounds, None if tool == "none" else tool, freq,
                         path, os.path.join(d, "rec.err"))
            r["path"] = path
            r["rep"] = rep
            if tool != "none":
                process_recording(wl, tool, r, d, "%s-%d" % (wl, freq))
            if wl in ("py", "js") and tool == "sp" and rep == REPS - 1 and \
                    freq == max(FREQS):
                keep_for_profile("python" if wl == "py" else "node", r["path"],
                                 r["pid"])
            else:
                remove_perf_map(r["pid"])
            if not KEEP:
                shutil.rmtree(d, ignore_errors=True)
            r.pop("path")
            rnd[tool] = r
        log("  run %d: none %.3f s, perf %.3f s, sp %.3f s" %
            (rep, rnd["none"]["work_s"], rnd["perf"]["work_s"], rnd["sp"]["work_s"]))
        runs.append(rnd)
    results["workloads"].setdefault(wl, {"rounds": rounds, "freqs": {}})
    results["workloads"][wl]["freqs"][str(freq)] = {"runs": runs,
                                                    "summary": summarize(runs)}


FLOOR_STACK = 8	# sp-record's smallest copy: the sample without the stack


def bench_floor(rounds, results):
    """What the kernel's sample costs the target with and without the user
    stack copy: the C workloads at the highest frequency, no profiler,
    sp-record copying STACK bytes and copying 8, alternating; neither reads
    stack tails (--stack-tail 0), which is the recorder's work, not the
    sample's."""
    freq = max(FREQS)
    out = {}
    for wl in ("c1", "c4"):
        log("floor: %s at %d Hz, stack copy %d against %d bytes" %
            (wl, freq, STACK, FLOOR_STACK))
        runs = []
        for rep in range(REPS):
            kinds = ["none", "full", "floor"]
            if rep % 2:
                kinds.reverse()
            rnd = {}
            for kind in kinds:
                d = os.path.join(TMP, "floor-%s-%d-%s" % (wl, rep, kind))
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                r = run_once(wl, rounds[wl], None if kind == "none" else "sp",
                             freq, os.path.join(d, "sp.raw"),
                             os.path.join(d, "rec.err"),
                             STACK if kind == "full" else FLOOR_STACK,
                             ["--stack-tail", "0"])
                if kind != "none":
                    parse_sp_record(r)
                rnd[kind] = {k: r.get(k) for k in
                             ("work_s", "target_cpu_s", "rec_cpu_s", "samples",
                              "lost", "file_bytes")}
                shutil.rmtree(d, ignore_errors=True)
            runs.append(rnd)
        s = {}
        for kind in ("full", "floor"):
            s["cpu_pct_" + kind] = summary(
                [100.0 * (r[kind]["target_cpu_s"] / r["none"]["target_cpu_s"] - 1)
                 for r in runs])
            s["slowdown_pct_" + kind] = summary(
                [100.0 * (r[kind]["work_s"] / r["none"]["work_s"] - 1) for r in runs])
            s["recorder_cpu_s_" + kind] = summary([r[kind]["rec_cpu_s"] for r in runs])
            s["samples_" + kind] = summary([r[kind]["samples"] for r in runs])
        out[wl] = {"freq": freq, "runs": runs, "summary": s}
    results["floor"] = {"stack": STACK, "floor_stack": FLOOR_STACK,
                        "workloads": out}


def per_1000(rec, key):
    """CPU milliseconds per 1,000 samples of one offline step."""
    o = rec["offline"].get(key)
    if not o or not rec.get("samples"):
        return None
    return 1e6 * o["cpu_s"] / rec["samples"]


def summarize(runs):
    s = {}
    base = [r["none"]["work_s"] for r in runs]
    s["work_s"] = {t: summary([r[t]["work_s"] for r in runs])
                   for t in ("none", "perf", "sp")}
    # slow-down against the baseline of the same round (runs alternate)
    for t in ("perf", "sp"):
        s["slowdown_pct_" + t] = summary(
            [100.0 * (r[t]["work_s"] / r["none"]["work_s"] - 1) for r in runs])
        s["cpu_slowdown_pct_" + t] = summary(
            [100.0 * (r[t]["target_cpu_s"] / r["none"]["target_cpu_s"] - 1) for r in runs])
        s["recorder_cpu_s_" + t] = summary([r[t].get("rec_cpu_s") for r in runs])
        s["recorder_rss_kb_" + t] = summary([r[t].get("rec_maxrss_kb") for r in runs])
        s["samples_" + t] = summary([r[t].get("samples") for r in runs])
        s["lost_" + t] = summary([r[t].get("lost") for r in runs])
        s["bytes_per_sample_" + t] = summary([r[t].get("bytes_per_sample") for r in runs])
        s["root_pct_" + t] = summary([r[t]["correct"]["root_pct"] for r in runs])
        for leaf in runs[0][t]["correct"]["leaf_pct"]:
            s["leaf_pct_%s_%s" % (leaf, t)] = summary(
                [r[t]["correct"]["leaf_pct"][leaf] for r in runs])
        k = "exact_chain_pct" if "exact_chain_pct" in runs[0][t]["correct"] else "py_chain_pct"
        s["%s_%s" % (k, t)] = summary([r[t]["correct"][k] for r in runs])
    s["base_spread_pct"] = summary(base)["spread_pct"]
    s["spool_bytes_per_sample"] = summary([r["sp"].get("spool_bytes_per_sample")
                                           for r in runs])
    if runs[0]["perf"].get("correct_stackcollapse"):
        s["root_pct_perf_stackcollapse"] = summary(
            [r["perf"]["correct_stackcollapse"]["root_pct"] for r in runs])
    for key in ("perf_script", "fold_perf", "perf_pipe", "perf_stackcollapse"):
        s["cpu_per_1k_" + key] = summary([per_1000(r["perf"], key) for r in runs])
        s["rss_kb_" + key] = summary([r["perf"]["offline"].get(key, {}).get("maxrss_kb")
                                      for r in runs])
    for key in ("sp_unwind", "sp_symbolize", "sp_symbolize_again", "sp_fold", "sp_pipe",
                "sp_pipe_again", "sp_one", "sp_one_again", "sp_spool_write"):
        s["cpu_per_1k_" + key] = summary([per_1000(r["sp"], key) for r in runs])
        s["rss_kb_" + key] = summary([r["sp"]["offline"].get(key, {}).get("maxrss_kb")
                                      for r in runs])
    for t, key in (("perf", "perf_pipe"), ("perf", "perf_stackcollapse"), ("sp", "sp_pipe"),
                   ("sp", "sp_pipe_again"), ("sp", "sp_one")):
        s["samples_per_cpu_s_" + key] = summary(
            [r[t]["samples"] / r[t]["offline"][key]["cpu_s"]
             for r in runs if key in r[t]["offline"] and r[t]["offline"][key]["cpu_s"] > 0])
        s["samples_per_wall_s_" + key] = summary(
            [r[t]["samples"] / r[t]["offline"][key]["wall_s"]
             for r in runs if key in r[t]["offline"] and r[t]["offline"][key]["wall_s"] > 0])
    s["distinct_stacks_sp"] = summary([r["sp"].get("distinct_stacks") for r in runs])
    s["one_process_differs"] = sum(1 for r in runs if r["sp"].get("one_process_same") is False)
    return s


def keep_for_profile(name, raw, pid):
    """Keep a raw recording (and its process's perf map) for self_profile."""
    d = os.path.join(TMP, "keep")
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, name + ".raw")
    shutil.move(raw, dst)
    KEPT[name] = (dst, pid)


def self_profile(results):
    """Profile sp-unwind and sp-symbolize with stackpulse itself
    (bench/profile-stage.sh) on the kept recordings."""
    out = {}
    d = os.path.join(TMP, "keep")
    for name, (raw, pid) in sorted(KEPT.items()):
        unw = raw[:-4] + ".unw"
        subprocess.run([SP["sp-unwind"], "-q", "-o", unw, raw])
        for stage, inp, argv in (("sp-unwind", raw, [SP["sp-unwind"], "-q"]),
                                 ("sp-symbolize", unw, [SP["sp-symbolize"],
                                                        "--no-symbol-cache"])):
            tag = os.path.join(d, "%s.%s" % (name, stage))
            log("self-profile of %s on the %s recording" % (stage, name))
            p = subprocess.run(["sh", os.path.join(BENCH, "profile-stage.sh"), tag, inp] + argv,
                               capture_output=True, text=True)
            out["%s on %s" % (stage, name)] = p.stdout.strip()
        remove_perf_map(pid)
    results["profiles"] = out
    if not KEEP:
        shutil.rmtree(d, ignore_errors=True)


def bench_rss(rate, results):
    """Peak RSS of every offline stage for recordings of RSS_S seconds of
    c1 at RSS_FREQ, both tools attached to the same target at once."""
    out = []
    for secs in RSS_S:
        rounds = max(1, int(rate * secs))
        d = os.path.join(TMP, "rss-%g" % secs)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        log("peak RSS: %g s recording at %d Hz (both tools at once)" % (secs, RSS_FREQ))
        w = subprocess.Popen(workload_cmd("c1", rounds), stdout=subprocess.PIPE,
                             cwd=TMP)
        pid = int(w.stdout.readline().split()[1])
        recs = {}
        procs = {}
        for tool in ("perf", "sp"):
            path = os.path.join(d, "perf.data" if tool == "perf" else "sp.raw")
            ferr = open(os.path.join(d, tool + ".err"), "wb")
            cmd, rfile = measured(recorder_cmd(tool, pid, RSS_FREQ, path), "rss")
            procs[tool] = (subprocess.Popen(
                cmd, stdout=subprocess.DEVNULL, stderr=ferr), ferr, path, rfile)
            wait_profiler_ready(procs[tool][0].pid)
        os.kill(pid, signal.SIGUSR1)
        rest = w.stdout.read().decode()
        w.wait()
        for tool, (p, ferr, path, rfile) in procs.items():
            p.wait()
            ferr.close()
            r = {"path": path, "file_bytes": os.path.getsize(path),
                 "rec_stderr": open(os.path.join(d, tool + ".err"),
                                    errors="replace").read()[-2000:],
                 "rec_maxrss_kb": usage_of(rfile)["maxrss_kb"]}
            process_recording("c1", tool, r, d, "rss")
            if tool == "sp" and secs == max(RSS_S):
                keep_for_profile("c1-long", path, pid)
            r.pop("path")
            recs[tool] = r
        if not KEEP:
            shutil.rmtree(d, ignore_errors=True)
        out.append({"seconds": secs, "work": rest.strip(), "perf": recs["perf"],
                    "sp": recs["sp"]})
    results["rss"] = out


def main():
    os.makedirs(TMP, exist_ok=True)
    tools = snapshot_tools()
    t_start = time.time()
    j0, own0 = busy_jiffies(), own_cpu()
    load0 = open("/proc/loadavg").read().split()[:3]
    results = {"name": NAME, "quick": QUICK,
               "started": datetime.datetime.now().isoformat(timespec="seconds"),
               "config": {"reps": REPS, "work_s": WORK_S, "freqs": FREQS,
                          "stack": STACK, "threads": THREADS, "depth": DEPTH,
                          "rss_s": RSS_S, "rss_freq": RSS_FREQ, "event": "cpu-clock",
                          "settle_s": SETTLE_S},
               "machine": machine(), "tools": tools, "workloads": {}}
    wls = ["c1", "c4"] + (["py"] if PY312 else []) + (["js"] if NODE else [])
    if not PY312:
        log("no python3.12 with -X perf: the Python workload is skipped")
    if not NODE:
        log("no node: the JavaScript workload is skipped")
    rounds = {wl: calibrate(wl) for wl in wls}
    log("calibrated rounds for %.1f s of work: %s" % (WORK_S, rounds))
    for freq in FREQS:
        for wl in wls:
            bench_workload(wl, rounds[wl], freq, results)
    bench_floor(rounds, results)
    bench_rss(rounds["c1"] / WORK_S, results)
    if PROFILE:
        self_profile(results)
    j1, own1 = busy_jiffies(), own_cpu()
    hz = os.sysconf("SC_CLK_TCK")
    busy = (j1[0] - j0[0]) / hz
    elapsed = time.time() - t_start
    results["elapsed_s"] = elapsed
    results["load"] = {"loadavg_start": load0,
                       "loadavg_end": open("/proc/loadavg").read().split()[:3],
                       "busy_cpu_s": busy, "bench_cpu_s": own1 - own0,
                       "other_cpu_s": max(0.0, busy - (own1 - own0)),
                       "other_cpu_pct_of_machine":
                           100.0 * max(0.0, busy - (own1 - own0)) /
                           (elapsed * (os.cpu_count() or 1))}
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    jpath = os.path.join(BENCH, "results", NAME + ".json")
    with open(jpath, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    if not QUICK:
        shutil.copyfile(jpath, os.path.join(BENCH, "results", "latest.json"))
    log("wrote %s (%.0f s)" % (jpath, elapsed))
    import report
    md = report.render(results)
    if QUICK:
        mpath = os.path.join(BENCH, "results", NAME + ".md")
        with open(mpath, "w") as f:
            f.write(md)
        log("wrote %s" % mpath)
    else:
        report.write_doc(md, os.path.join(ROOT, "docs", "PERFORMANCE.md"))
        log("wrote docs/PERFORMANCE.md")
    sys.stdout.write(report.short(results))


if __name__ == "__main__":
    sys.dont_write_bytecode = True	# no bench/__pycache__ from "import report"
    sys.path.insert(0, BENCH)
    main()
