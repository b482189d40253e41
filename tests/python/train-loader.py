# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A training loop fed by a DataLoader with two worker processes; two
# optimizers step in each iteration (steps still count once per iteration).
#   train-loader.py EPOCHS
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        x = torch.full((16,), float(i % 7))
        return x, x.sum().unsqueeze(0)


def main():
    epochs = int(sys.argv[1])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
    body = torch.optim.SGD(model[0].parameters(), lr=0.001)
    head = torch.optim.SGD(model[2].parameters(), lr=0.001)
    loader = DataLoader(Squares(), batch_size=8, num_workers=2, persistent_workers=True)
    n = 0
    for _ in range(epochs):
        for x, y in loader:
            body.zero_grad()
            head.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            body.step()
            head.step()
            n += 1
    print("optimizer steps", n)


if __name__ == "__main__":
    main()
