# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A forked worker that inherits its parent's Python arenas with free room
# in them: the parent made two million floats and freed every other one,
# whose slots stay free in pymalloc's pools.  The worker only waits: its
# private memory since the fork holds none of that room, which is on
# pages it shares with its parent.
#   rss-fork-arenas.py
# Steps of the parent: "made", "forked" (the worker waits), "reaped".
import os

import tidemark


def main():
    data = [float(i) for i in range(2_000_000)]
    del data[::2]
    tidemark.step("made")
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(ready_w, b"r")
        os.read(go_r, 1)
        os._exit(0)
    os.read(ready_r, 1)
    tidemark.step("forked")
    os.write(go_w, b"g")
    os.waitpid(pid, 0)
    tidemark.step("reaped")
    print("kept", len(data))


main()
