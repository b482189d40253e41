# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# One rank of a two-rank DistributedDataParallel job over gloo on the CPU,
# started as a launcher starts it: RANK, WORLD_SIZE, MASTER_ADDR and
# MASTER_PORT in the environment, one process per "node".  The leaking
# rank keeps every step's output together with its autograd graph.
#   train-ddp-node.py LEAKING_RANK STEPS
import datetime
import os
import sys

import torch
import torch.distributed as dist
from torch import nn


def main():
    leaking_rank, steps = (int(a) for a in sys.argv[1:3])
    torch.set_num_threads(1)
    # A peer that never comes ends the job in a minute, not in gloo's 30.
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank = dist.get_rank()
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
    print("rank", rank, "done", steps, "on", os.uname().nodename)


if __name__ == "__main__":
    main()
