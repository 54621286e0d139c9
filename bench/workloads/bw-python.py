# SPDX-License-Identifier: MIT
# bw-python: the Python benchmark workload, run as python3.12 -X perf.
# A fixed amount of work through known nested Python functions, started by
# SIGUSR1 so that a profiler can attach first (-p):
#
#   main -> run_work -> level_1 .. level_6 -> mix -> leaf_a   2/3 of the work
#                                             mix -> leaf_b   1/3
#
# (every Python frame appears as py::NAME:FILE under the interpreter's C
# frames, C main at the bottom).
#
# usage: python3.12 -X perf bw-python.py ROUNDS [WAIT_S]
#   prints "ready PID", waits for SIGUSR1 (at most WAIT_S s, default 20),
#   runs ROUNDS rounds, prints "work_s SECONDS" and exits.
import os
import signal
import sys
import time


def leaf_a(n):
    v = 0
    for i in range(n):
        v = (v * 33 + i) % 1000003
    return v


def leaf_b(n):
    v = 1
    for i in range(n):
        v = (v * 31 + i) % 1000033
    return v


def mix():
    return leaf_a(2000) + leaf_b(1000)


def level_6():
    return mix() + 1


def level_5():
    return level_6() + 1


def level_4():
    return level_5() + 1


def level_3():
    return level_4() + 1


def level_2():
    return level_3() + 1


def level_1():
    return level_2() + 1


def run_work(rounds):
    s = 0
    for _ in range(rounds):
        s += level_1()
    return s


def main():
    rounds = int(sys.argv[1])
    wait_s = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    print("ready %d" % os.getpid(), flush=True)
    signal.sigtimedwait({signal.SIGUSR1}, wait_s)
    t0 = time.monotonic()
    run_work(rounds)
    print("work_s %.6f" % (time.monotonic() - t0), flush=True)


main()
