# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A CPU training loop that keeps one 256 KiB tensor a step in
# keep_activation(), whose line carries a KEEP-LINE comment.  The kept
# tensor lands on pages that an earlier backward touched first, since
# PyTorch's CPU allocator hands freed memory back out: only its allocation
# names the line.  The optimizer is AdamW, whose step() runs under
# @torch.no_grad() in torch 1.13.
#   attach-torch-keep.py STEPS PAUSE_MS [--wait]
# With --wait it says "ready" once torch is imported and one step made,
# waits for "go" on stdin, trains STEPS steps, says "done STEPS KEPT" and
# stays until its stdin ends, holding what it kept; without it, it trains
# STEPS steps and exits, for `tidemark record`.
import sys
import time

import torch
from torch import nn

BATCH, WIDTH = 256, 256


def keep_activation(kept, h):
    kept.append(h.detach().clone())  # KEEP-LINE


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH))
        self.head = nn.Linear(WIDTH, 10)

    def forward(self, x, kept):
        h = self.body(x)
        keep_activation(kept, h)
        return self.head(h)


def train(model, opt, kept, steps, pause_s):
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(BATCH, WIDTH)
    target = torch.randint(0, 10, (BATCH,))
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(model(x, kept), target).backward()
        opt.step()
        time.sleep(pause_s)


def main():
    steps, pause_s = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
    wait = "--wait" in sys.argv[3:]
    torch.manual_seed(0)
    # One thread: the allocations run on the thread whose Python frames they have.
    torch.set_num_threads(1)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=0.001)
    kept = []
    train(model, opt, [], 1, 0.0)
    if wait:
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            sys.exit(2)
    train(model, opt, kept, steps, pause_s)
    if wait:
        print("done", steps, len(kept), flush=True)
        # Alive until told: at exit the kept tensors would be freed.
        sys.stdin.readline()


if __name__ == "__main__":
    main()
