# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A CPU training loop with two optimizers and an evaluation every third
# step, under `with torch.no_grad():` and in a function decorated with
# `@torch.no_grad()`, which `tidemark attach` joins while it runs: it says
# "ready" once torch is imported and one step made, waits for "go" on
# stdin, then trains until the file STOP exists, says "steps N" (the steps
# of the first optimizer made since "go") and stays until its stdin ends.
# The first optimizer steps with a closure, which it runs with gradients
# on inside its step.  A test that dies leaves no loop behind: it also
# stops when its parent is gone.
#   attach-torch-steps.py STOP FIRST SECOND
# FIRST and SECOND name torch.optim classes, "+foreach" for the variant.
import os
import sys

import torch
from torch import nn


def optimizer(spec, params):
    name, _, variant = spec.partition("+")
    kwargs = {"lr": 0.001}
    if name == "LBFGS":
        kwargs["max_iter"] = 1
    if variant == "foreach":
        kwargs["foreach"] = True
    return getattr(torch.optim, name)(params, **kwargs)


def main():
    stop = sys.argv[1]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    # The first optimizer to step owns the steps; the second steps as often.
    body = optimizer(sys.argv[2], model[0].parameters())
    head = optimizer(sys.argv[3], model[2].parameters())
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(32, 64)
    target = torch.randint(0, 10, (32,))

    def closure():
        body.zero_grad()
        head.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        return loss

    @torch.no_grad()
    def evaluate():
        return model(x)

    def step():
        body.step(closure)
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
            evaluate()
    print("steps", steps, flush=True)
    sys.stdin.readline()


if __name__ == "__main__":
    main()
