# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A language model whose head is a stock nn.Linear, trained with SGD; the
# loop keeps every step's logits.  The logits are made inside torch's
# Linear.forward, called from the model's own forward line (LOGITS-LINE):
# the headline is that line, via torch's.  16 x 1000 float32 = 64000
# bytes a step.
#   linear-leak.py STEPS
import sys

import torch
from torch import nn

BATCH, WIDTH, VOCAB = 16, 64, 1000


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(WIDTH, WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))  # LOGITS-LINE


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = LM()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(BATCH, WIDTH)
    history = []
    for _ in range(steps):
        out = model(x)
        history.append(out.detach())
        out.sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    print("done", steps)


main()
