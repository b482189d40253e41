# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A training loop whose model keeps one tensor per step through a forgotten
# reference: Block.forward appends its output to a list attribute.
#   train-leaky.py [leak|leak-all|control] STEPS
# leak: only encoder.layers.2 keeps its outputs; leak-all: all four blocks
# do, through the same line, so one stack grows in four module scopes.
# The leaked tensor is 64 x 256 float32 = 65536 bytes per step; the line
# that makes it carries a LEAK-LINE comment: the test looks for that line.
import sys

import torch
from torch import nn

BATCH, WIDTH = 64, 256


class Block(nn.Module):
    def __init__(self, leak):
        super().__init__()
        self.fc = nn.Linear(WIDTH, WIDTH)
        self.leak = leak
        self.history = []

    def forward(self, x):
        y = torch.relu(self.fc(x))
        if self.leak:
            self.history.append(y.detach() * 1.0)  # LEAK-LINE
        return y


class Encoder(nn.Module):
    def __init__(self, leak):
        super().__init__()
        self.layers = nn.ModuleList([Block(leak == "leak-all" or (leak == "leak" and i == 2))
                                     for i in range(4)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Net(nn.Module):
    def __init__(self, leak):
        super().__init__()
        self.encoder = Encoder(leak)
        self.head = nn.Linear(WIDTH, 10)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    leak = sys.argv[1]
    steps = int(sys.argv[2])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net(leak)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(BATCH, WIDTH)
    target = torch.randint(0, 10, (BATCH,))
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        opt.step()
    print("done", steps)


if __name__ == "__main__":
    main()
