# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# The workload of bench-torch.py: a small MLP trained on random data
# (forward, backward, optimizer step), no leak.   bench-torch-train.py STEPS
import resource
import sys
import time

import torch
from torch import nn


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(
        nn.Linear(256, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(64, 256)
    y = torch.randint(0, 10, (64,))
    start = time.monotonic()
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    print(f"loop {time.monotonic() - start:.3f} s, loss {loss.item():.4f}")
    # The process's CPU time, its every thread's: bench-torch.py reads it.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"cpu {usage.ru_utime + usage.ru_stime:.3f}", flush=True)


if __name__ == "__main__":
    main()
