# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# The workload of bench-torch.py: a small MLP trained on random data
# (forward, backward, optimizer step), no leak.
#   bench-torch-train.py STEPS [WORKERS] [--wait]
# --wait: once the model is built, say "waiting" and wait for a line on
# stdin before the loop (bench-attach.py attaches meanwhile).
# With WORKERS, the batches come from a DataLoader with that many worker
# processes (forked), reading a Dataset that holds its samples in one
# tensor: the shape of a job whose workers the recorder follows too.
import resource
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class RandomSamples(Dataset):
    def __init__(self, count):
        self.x = torch.randn(count, 256)
        self.y = torch.randint(0, 10, (count,))

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def batches(steps, workers):
    """The same batch STEPS times, or an epoch of STEPS batches from a
    DataLoader with WORKERS workers."""
    if workers == 0:
        x = torch.randn(64, 256)
        y = torch.randint(0, 10, (64,))
        return ((x, y) for _ in range(steps))
    return DataLoader(RandomSamples(64 * steps), batch_size=64, num_workers=workers)


def main():
    wait = '--wait' in sys.argv
    args = [a for a in sys.argv[1:] if a != '--wait']
    steps = int(args[0])
    workers = int(args[1]) if len(args) > 1 else 0
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(
        nn.Linear(256, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    if wait:
        print("waiting", flush=True)
        sys.stdin.readline()
    start = time.monotonic()
    for x, y in batches(steps, workers):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    print(f"loop {time.monotonic() - start:.3f} s, loss {loss.item():.4f}")
    # The job's CPU time, its every thread's and its finished workers':
    # bench-torch.py reads it.
    cpu = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        cpu += usage.ru_utime + usage.ru_stime
    print(f"cpu {cpu:.3f}", flush=True)


if __name__ == "__main__":
    main()
