# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# loader-oom: a training loop whose one DataLoader worker outgrows its
# memory cgroup.  The worker moves itself into the cgroup named by
# TIDE_TEST_WORKER_CGROUP (its cgroup.procs) as it starts, then keeps 8 MiB
# of every batch it loads; the OOM killer ends it.  The parent sees
# DataLoader's error, says so on stderr, and exits 0.
import os
import signal
import sys

import torch
from torch.utils.data import DataLoader, Dataset

KEEP_BYTES = 8 << 20
kept = []


class Batches(Dataset):
    def __len__(self):
        return 1000

    def __getitem__(self, index):
        block = bytearray(KEEP_BYTES)
        for offset in range(0, KEEP_BYTES, 4096):
            block[offset] = 1
        kept.append(block)
        return torch.ones(4)


def enter_cgroup(worker_id):
    with open(os.environ["TIDE_TEST_WORKER_CGROUP"], "w") as procs:
        procs.write(str(os.getpid()))


def main():
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Batches(), batch_size=1, num_workers=1, worker_init_fn=enter_cgroup)
    try:
        batches = iter(loader)
        # DataLoader's SIGCHLD handler raises the worker's death at whatever
        # line the parent is on when the signal lands, this except block
        # included; without it the death is raised by the next batch's
        # fetch, inside this try.
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for batch in batches:
            optimizer.zero_grad()
            model(batch).sum().backward()
            optimizer.step()
    except Exception as error:  # RuntimeError, or the pipe's error if it broke first
        print("loader-oom: the worker died:", type(error).__name__, error, file=sys.stderr)
        return 0
    print("loader-oom: the worker survived", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
