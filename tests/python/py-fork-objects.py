# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A fork's child frees what its parent made: between its steps "before"
# and "made" the parent makes 20,000 bytes objects of 460 bytes (bytes(427)
# and its header) from one line, then forks; the child deletes them and
# reports by how many blocks sys.getallocatedblocks() fell, which the
# parent prints: "freed BLOCKS".
#   py-fork-objects.py
import gc
import os
import sys

try:
    import tidemark
    step = tidemark.step
except ImportError:  # the run without the profiler
    def step(label=None):
        pass

N = 20000


def make():
    return [bytes(427) for _ in range(N)]


step("before")
data = make()
step("made")
read_end, write_end = os.pipe()
pid = os.fork()
if pid == 0:
    gc.collect()
    before = sys.getallocatedblocks()
    del data
    gc.collect()
    after = sys.getallocatedblocks()
    os.write(write_end, b"%d\n" % (before - after))
    os._exit(0)
os.close(write_end)
_, status = os.waitpid(pid, 0)
if status != 0:
    raise SystemExit("the child failed")
print("freed", int(os.read(read_end, 64)))
