# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# pymalloc's arenas kept mapped by live objects among freed ones.  Step k
# makes 8 MiB of bytes objects of a size class of its own (objects of
# 49 + 16 * k bytes, each taking a class of 64 + 16 * k), then
#   fragment: keeps one in every 2 (every pool keeps half) and frees the
#             rest, so the step leaves 4 MiB more free in arenas that stay
#             mapped; a class of its own per step, so that no later step
#             fills the holes;
#   control:  frees them all, so that their arenas go back;
#   fork:     as fragment, but forks after the first step: the child,
#             which inherits the parent's arenas, makes the other steps
#             while the parent waits.
#   py-arenas.py fragment|control|fork [stats]
# Prints, per step, "step K freed F" where F is the bytes (at their size
# class) of the objects the step made and freed, and at the end "kept N
# B": the objects kept and their bytes as requested.  With "stats" (a run
# without the profiler: CPython prints its statistics only while pymalloc
# is its allocator), also "free B": the bytes its arenas hold that no
# block in use takes, by sys._debugmallocstats().
import os
import re
import sys
import tempfile

try:
    import tidemark
    step = tidemark.step
except ImportError:  # the measuring run, without the profiler
    def step(label=None):
        pass

STEPS = 6
STEP_BYTES = 8 << 20
KEEP_ONE_IN = 2
BYTES_HEADER = 33   # sys.getsizeof(b"") on 3.11: a bytes object of n takes 33 + n


def arena_free():
    with tempfile.TemporaryFile("w+") as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read()

    def number(pattern):
        return int(re.search(pattern, text, re.M).group(1).replace(",", ""))
    total = number(r"^\d+ arenas \* \d+ bytes/arena\s+=\s+([\d,]+)$")
    used = number(r"^# bytes in allocated blocks\s+=\s+([\d,]+)$")
    return total - used


def main():
    mode = sys.argv[1]
    stats = len(sys.argv) > 2 and sys.argv[2] == "stats"
    kept = []
    kept_bytes = 0
    for k in range(STEPS):
        if mode == "fork" and k == 1 and os.fork() != 0:
            os.wait()
            return
        size = BYTES_HEADER + 16 * k + 16
        size_class = (size + 15) & ~15
        n = STEP_BYTES // size_class
        made = [bytes(size - BYTES_HEADER) for _ in range(n)]
        if mode != "control":
            kept.extend(made[::KEEP_ONE_IN])
            freed = n - len(made[::KEEP_ONE_IN])
            kept_bytes += (n - freed) * size
        else:
            freed = n
        del made
        step(f"step {k}")
        line = f"step {k} freed {freed * size_class}"
        if stats:
            line += f" free {arena_free()}"
        print(line, flush=True)
    print("kept", len(kept), kept_bytes)


main()
