# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A CPU training loop that `tidemark attach` joins while it runs: it says
# "ready" once torch is imported and the model built, waits for "go" on
# stdin, then trains STEPS steps.  DecoupledLinear.forward keeps the
# torch.cat of its input and output every step (a 2 MiB float32 tensor, the
# largest block the program makes, so its pages are fresh ones that the
# cat touches first); the line that makes it carries a LEAK-LINE comment:
# the test looks for that line.  It then says "done" and stays until its
# stdin ends, holding what it kept.
#   attach-torch-leak.py STEPS [PAUSE_MS]
# PAUSE_MS: a pause after each step, so that the leak spans several of the
# attach's timed steps however fast the machine runs the loop.
import sys
import time

import torch
from torch import nn

BATCH, WIDTH = 512, 256


class DecoupledLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(WIDTH, WIDTH)
        self.kept = []

    def forward(self, x):
        y = self.fc(x)
        self.kept.append(torch.cat([x.detach(), y.detach(), x.detach(), y.detach()], dim=1))  # LEAK-LINE
        return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = DecoupledLinear()
        self.head = nn.Linear(WIDTH, 10)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def train(model, steps, pause_s=0.0):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(BATCH, WIDTH)
    target = torch.randint(0, 10, (BATCH,))
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        opt.step()
        time.sleep(pause_s)


def main():
    steps = int(sys.argv[1])
    pause_s = int(sys.argv[2]) / 1000.0 if len(sys.argv) > 2 else 0.0
    torch.manual_seed(0)
    # One thread: the cat runs on the thread whose Python frames it has.
    torch.set_num_threads(1)
    model = Net()
    train(model, 1)
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit(2)
    train(model, steps, pause_s)
    print("done", steps, len(model.body.kept), flush=True)
    # Alive until told: at exit the kept tensors would be freed.
    sys.stdin.readline()


if __name__ == "__main__":
    main()
