# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A CPU training loop with two optimizers and an evaluation under
# `with torch.no_grad():` every third step, which `tidemark attach` joins
# while it runs: it says "ready" once torch is imported and one step made,
# waits for "go" on stdin, then trains until the file STOP exists, says
# "steps N" (the steps of the first optimizer made since "go") and stays
# until its stdin ends.  A test that dies leaves no loop behind: it also
# stops when its parent is gone.
#   attach-torch-steps.py STOP
import os
import sys

import torch
from torch import nn


def main():
    stop = sys.argv[1]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    # The first optimizer to step owns the steps; the second steps as often.
    body = torch.optim.SGD(model[0].parameters(), lr=0.01)
    head = torch.optim.Adam(model[2].parameters(), lr=0.001)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(32, 64)
    target = torch.randint(0, 10, (32,))

    def step():
        body.zero_grad()
        head.zero_grad()
        loss_fn(model(x), target).backward()
        body.step()
        head.step()

    step()
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit(2)
    steps = 0
    parent = os.getppid()
    while not os.path.exists(stop) and os.getppid() == parent:
        step()
        steps += 1
        if steps % 3 == 0:
            with torch.no_grad():
                model(x)
    print("steps", steps, flush=True)
    sys.stdin.readline()


if __name__ == "__main__":
    main()
