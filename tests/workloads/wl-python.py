# SPDX-License-Identifier: MIT
# wl-python: nested Python functions for a Python run with -X perf.
#
#   outer -> middle -> inner	nearly all of the time
#
# usage: python3.12 -X perf wl-python.py [SECONDS]	(default 5)
#
# Creates the file $WL_READY names, if set, when it reaches its loop (as
# tests/workloads/wl.h's wl_ready does).
import os
import sys
import time


def inner(n):
    v = 0
    for i in range(n):
        v = (v * 33 + i) % 1000003
    return v


def middle(n):
    return inner(n) + 1


def outer(n):
    return middle(n) + 1


def main():
    end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 5)
    ready = os.environ.get("WL_READY")
    if ready:
        open(ready, "w").close()
    while time.monotonic() < end:
        outer(20000)


main()
