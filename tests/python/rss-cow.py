# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Copy-on-write in a forked worker, as a DataLoader worker reads a
# Dataset's Python list: every read writes the reference count of a float
# object, so the page holding it is copied into the worker.
#   rss-cow.py list|numpy
# Steps of the parent: "data" (built), "forked" (the worker waits),
# "touched" (the worker read every item).  The worker reads its own
# Private_Dirty from smaps_rollup before and after, and the parent prints
# the growth: "private_dirty_growth BYTES".
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


def main():
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
