# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A two-rank DistributedDataParallel job over gloo on the CPU, started with
# torch.multiprocessing.spawn and so with no RANK in the environment.  The
# leaking rank keeps every step's output together with its autograd graph.
#   train-ddp.py PORT LEAKING_RANK STEPS
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn


def run(rank, port, leaking_rank, steps):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(64, 256), nn.ReLU(),
                                                              nn.Linear(256, 64)))
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    kept = []
    for _ in range(steps):
        x = torch.randn(256, 64)
        out = model(x)
        out.pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
        if rank == leaking_rank:
            kept.append(out)  # LEAK-LINE: the output and its graph stay alive
    dist.barrier()
    dist.destroy_process_group()


def main():
    port, leaking_rank, steps = (int(a) for a in sys.argv[1:4])
    mp.spawn(run, args=(port, leaking_rank, steps), nprocs=2, join=True)
    print("done", steps)


if __name__ == "__main__":
    main()
