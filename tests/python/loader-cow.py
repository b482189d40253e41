# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Copy-on-write in short-lived DataLoader workers: the dataset holds a list
# of 4M Python floats, and each of two workers sums one half of it, which
# writes the reference count of every float it reads and so copies the
# pages of its half (about 48 MiB).  The workers then wait, idle, until the
# epoch ends and they exit.
#
# With "watch", a thread of the parent reads each worker's Private_Dirty
# from /proc/PID/smaps_rollup every few milliseconds while they live, and
# prints its peak: the copy-on-write measured without the profiler.
#   loader-cow.py [watch]
import sys
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset

N = 4 * 1024 * 1024
WORKERS = 2


class Halves(Dataset):
    def __init__(self):
        self.values = [float(i) for i in range(N)]

    def __len__(self):
        return WORKERS

    def __getitem__(self, part):
        total = 0.0
        first = part * (N // WORKERS)
        for i in range(first, first + N // WORKERS):
            total += self.values[i]
        return total


def private_dirty(pid):
    """Private_Dirty of @pid in bytes, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Private_Dirty:"):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def watch(pids, peaks, done):
    while not done.is_set():
        for worker, pid in enumerate(pids):
            value = private_dirty(pid)
            if value is not None:
                peaks[worker] = max(peaks[worker], value)
        time.sleep(0.002)


def main():
    torch.set_num_threads(1)
    loader = DataLoader(Halves(), batch_size=None, num_workers=WORKERS)
    batches = iter(loader)
    pids = [w.pid for w in batches._workers]
    peaks = [0] * WORKERS
    done = threading.Event()
    watcher = None
    if len(sys.argv) > 1 and sys.argv[1] == "watch":
        watcher = threading.Thread(target=watch, args=(pids, peaks, done))
        watcher.start()
    sums = [float(next(batches)) for _ in range(WORKERS)]
    # Long enough for the watcher to read the workers done with their sums.
    time.sleep(0.3)
    for _ in batches:
        pass
    done.set()
    if watcher is not None:
        watcher.join()
        for worker in range(WORKERS):
            print("peak", worker, peaks[worker])
    print("sum", int(sum(sums)))


main()
