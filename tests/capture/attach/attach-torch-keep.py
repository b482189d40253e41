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
# With --wait it says "ready" before it imports torch, so that an attach
# made then sees PyTorch's libraries mapped later; it waits for "go" on
# stdin, imports torch, makes one step, trains STEPS steps, says "done
# STEPS KEPT" and stays until its stdin ends, holding what it kept.
# Without it, it trains STEPS steps and exits, for `tidemark record`.
import sys
import time


def keep_activation(kept, h):
    kept.append(h.detach().clone())  # KEEP-LINE


def make_net(nn, width):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
            self.head = nn.Linear(width, 10)

        def forward(self, x, kept):
            h = self.body(x)
            keep_activation(kept, h)
            return self.head(h)

    return Net()


def train(torch, model, opt, kept, steps, pause_s):
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(256, 256)
    target = torch.randint(0, 10, (256,))
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(model(x, kept), target).backward()
        opt.step()
        time.sleep(pause_s)


def main():
    steps, pause_s = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
    wait = "--wait" in sys.argv[3:]
    if wait:
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            sys.exit(2)
    import torch

    torch.manual_seed(0)
    # One thread: the allocations run on the thread whose Python frames they have.
    torch.set_num_threads(1)
    model = make_net(torch.nn, 256)
    opt = torch.optim.AdamW(model.parameters(), lr=0.001)
    kept = []
    train(torch, model, opt, [], 1, 0.0)
    train(torch, model, opt, kept, steps, pause_s)
    if wait:
        print("done", steps, len(kept), flush=True)
        # Alive until told: at exit the kept tensors would be freed.
        sys.stdin.readline()


if __name__ == "__main__":
    main()
