#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fold_perf.py: a reference folding step for `perf script` output.

Reads the default text output of `perf script` (a header line per sample,
then one indented line per frame, leaf first: "ADDR SYM+0xOFF (DSO)", a
blank line after each sample) on standard input and writes folded stacks,
"comm;root;...;leaf COUNT", one line per distinct stack.  It follows the
documented behaviour of FlameGraph's stackcollapse-perf.pl (written from
that description, not from its code): the first frame is the command name
with spaces turned into '_', frames go root to leaf, '+0x..' offsets are
stripped, ';' inside a name becomes ':', an unknown symbol becomes the
basename of its module in brackets (or '[unknown]'), and each sample counts
1.  Used by bench/run.sh to time perf's offline path stage by stage.

usage: perf script -i perf.data | fold_perf.py > perf.folded
"""
import re
import sys

HEADER = re.compile(r"^(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[\d+\]\s+)?\d+\.\d+:")
FRAME = re.compile(r"^\s+[0-9a-fA-F]+\s+(.*?)(?:\s+\((.*)\))?\s*$")
OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")


def frame_name(sym, dso):
    sym = OFFSET.sub("", sym.strip())
    if not sym or sym == "[unknown]":
        if dso and dso != "[unknown]":
            base = dso.rsplit("/", 1)[-1]
            return "[%s]" % base.strip("[]")
        return "[unknown]"
    return sym.replace(";", ":")


def main():
    counts = {}
    comm = None
    frames = []

    def flush():
        if comm is not None:
            key = ";".join([comm] + frames[::-1])
            counts[key] = counts.get(key, 0) + 1

    for line in sys.stdin.buffer:
        line = line.decode("utf-8", "replace").rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if not line[0].isspace():
            flush()
            frames = []
            m = HEADER.match(line)
            comm = (m.group(1) if m else line.split()[0]).replace(" ", "_")
            continue
        if comm is None:
            continue
        m = FRAME.match(line)
        if m:
            frames.append(frame_name(m.group(1), m.group(2)))
    flush()
    out = sys.stdout
    for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        out.write("%s %d\n" % (key, n))


if __name__ == "__main__":
    main()
