# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Copy-on-write in a forked worker, as a DataLoader worker reads a
# Dataset's Python list: every read writes the reference count of a float
# object, so the page holding it is copied into the worker.
#   rss-cow.py list|numpy|steady
# Steps of the parent: "data" (built), "forked" (the worker waits),
# "touched" (the worker read every item).  The worker reads its own
# Private_Dirty from smaps_rollup before and after, and the parent prints
# the growth: "private_dirty_growth BYTES".  With "steady" the worker
# reads a quarter of the list in each of four steps, "quarter 1" to
# "quarter 4", and nothing is printed.
import os
import sys

import tidemark

N = 4_000_000


def read_private_dirty():
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("Private_Dirty:"):
                return int(line.split()[1]) * 1024
    raise SystemExit("no Private_Dirty")


def make_list():
    return [float(i) for i in range(N)]


def make_array():
    import numpy
    return numpy.arange(N, dtype=numpy.float64)


def touch(data):
    total = 0.0
    for x in data:
        total += 1.0
    return total


def worker(data, to_parent, from_parent):
    before = read_private_dirty()
    os.write(to_parent, b"r")
    os.read(from_parent, 1)
    touch(data)
    after = read_private_dirty()
    os.write(to_parent, f"{before} {after}\n".encode())
    os.read(from_parent, 1)
    os._exit(0)


def steady_worker(data, to_parent, from_parent):
    quarter = len(data) // 4
    for k in range(4):
        os.read(from_parent, 1)
        for i in range(k * quarter, (k + 1) * quarter):
            data[i]
        os.write(to_parent, b"q")
    os.read(from_parent, 1)
    os._exit(0)


def steady():
    data = make_list()
    tidemark.step("data")
    up_r, up_w = os.pipe()
    down_r, down_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(up_w, b"r")
        steady_worker(data, up_w, down_r)
    os.read(up_r, 1)
    tidemark.step("forked")
    for k in range(4):
        os.write(down_w, b"g")
        os.read(up_r, 1)
        tidemark.step(f"quarter {k + 1}")
    os.write(down_w, b"e")
    os.waitpid(pid, 0)


def main():
    if sys.argv[1] == "steady":
        return steady()
    data = make_list() if sys.argv[1] == "list" else make_array()
    tidemark.step("data")
    up_r, up_w = os.pipe()
    down_r, down_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        worker(data, up_w, down_r)
    os.read(up_r, 1)
    tidemark.step("forked")
    os.write(down_w, b"g")
    before, after = (int(v) for v in os.read(up_r, 100).split())
    tidemark.step("touched")
    os.write(down_w, b"e")
    os.waitpid(pid, 0)
    print(f"private_dirty_growth {after - before}")


main()
