# SPDX-License-Identifier: MIT
# Copyright 2026 The Tidemark authors
"""leaky-training.py: the PyTorch example to run first.

    tidemark record --torch -o training.tide -- /usr/bin/python3 examples/leaky-training.py
    tidemark report training.tide --suspects
    tidemark-gui training.tide

A small classifier trained on a synthetic data set, fed by a DataLoader with
two worker processes, as real training jobs are.  It has the classic mistake
of training code: the `Probe` module keeps each step's activations "for
plotting later" in a Python list, so every step retains one more batch of
activations (BATCH x WIDTH float32 = 256 KiB) that is never freed.  The
line to blame carries a LEAK-LINE comment.  Everything else is allocated and
freed within its step.

    leaky-training.py [--steps N] [--control]

`--control` runs the same job without the leak: a profiler must then show no
suspect at all.
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

BATCH, FEATURES, WIDTH, CLASSES = 64, 128, 1024, 10


class SyntheticImages(Dataset):
    """Deterministic samples, made on the fly in the worker processes."""

    def __init__(self, n_samples):
        self.n_samples = n_samples

    def __len__(self):
        return self.n_samples

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(FEATURES, generator=g)
        return x, i % CLASSES


class Probe(nn.Module):
    """Watches the activations that pass through it."""

    def __init__(self, keep_history):
        super().__init__()
        self.keep_history = keep_history
        self.history = []

    def forward(self, x):
        if self.keep_history:
            self.history.append(x.detach().clone())  # LEAK-LINE
        return x


class Classifier(nn.Module):
    def __init__(self, keep_history):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(FEATURES, WIDTH), nn.ReLU(), Probe(keep_history),
            nn.Linear(WIDTH, WIDTH), nn.ReLU())
        self.head = nn.Linear(WIDTH, CLASSES)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--control", action="store_true",
                        help="run without the leak")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Classifier(keep_history=not args.control)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(SyntheticImages(args.steps * BATCH), batch_size=BATCH,
                        num_workers=2, persistent_workers=True)
    steps = 0
    for x, target in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        optimizer.step()
        steps += 1
    print(f"trained {steps} steps, final loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
