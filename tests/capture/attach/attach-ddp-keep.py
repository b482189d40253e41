# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A two-rank DistributedDataParallel job over gloo on the CPU, started with
# torch.multiprocessing.spawn, whose rank 1 keeps one 256 KiB tensor a
# step in keep_activation() (its line carries a KEEP-LINE comment), under
# AdamW.
#   attach-ddp-keep.py PORT STEPS PAUSE_MS [GO]
# With GO (a file's path), rank 1 says "rank 1 pid N" once both ranks made
# a step, the ranks wait until GO exists, train STEPS steps, and rank 1
# says "done STEPS KEPT"; the job then ends when GO is removed.  Without
# it, the ranks train STEPS steps and the job exits, for `tidemark record`.
# The job also ends when the process that started it is gone.
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

WIDTH = 256


def keep_activation(kept, h):
    kept.append(h.detach().clone())  # KEEP-LINE


def wait_for(go, present, parent):
    while os.path.exists(go) != present and os.getppid() == parent:
        time.sleep(0.02)


def run(rank, port, steps, pause_s, go, parent):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH)))
    opt = torch.optim.AdamW(model.parameters(), lr=0.001)
    x = torch.randn(WIDTH, WIDTH)
    kept = []

    def step(keep):
        h = model(x)
        if keep:
            keep_activation(kept, h)
        h.pow(2).mean().backward()
        opt.step()
        opt.zero_grad()

    step(False)
    dist.barrier()
    if go:
        if rank == 1:
            print("rank 1 pid", os.getpid(), flush=True)
        wait_for(go, True, parent)
    for _ in range(steps):
        step(rank == 1)
        time.sleep(pause_s)
    if go and rank == 1:
        print("done", steps, len(kept), flush=True)
    if go:
        wait_for(go, False, parent)
    dist.barrier()
    dist.destroy_process_group()


def main():
    port, steps, pause_ms = (int(a) for a in sys.argv[1:4])
    go = sys.argv[4] if len(sys.argv) > 4 else None
    mp.spawn(run, args=(port, steps, pause_ms / 1000.0, go, os.getpid()), nprocs=2, join=True)


if __name__ == "__main__":
    main()
