# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Shared and file-backed pages of a PyTorch process, one class a step:
#   step 1 "baseline"  torch imported;
#   step 2 "shmem"     a 16 MiB tensor moved to shared memory with
#                      share_memory_(), as DataLoader and
#                      torch.multiprocessing do;
#   step 3 "file"      a 32 MiB file mapped and read through.
#   rss-torch.py DIR   (DIR: where the file is written)
import mmap
import os
import sys

import torch

import tidemark

MIB = 1024 * 1024


def main():
    torch.set_num_threads(1)
    tidemark.step("baseline")

    shared = torch.ones(4 * MIB, dtype=torch.float32)
    shared.share_memory_()
    tidemark.step("shmem")

    path = os.path.join(sys.argv[1], "data.bin")
    with open(path, "wb") as f:
        f.write(b"\1" * (32 * MIB))
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    total = 0
    for offset in range(0, len(mapped), mmap.PAGESIZE):
        total += mapped[offset]
    tidemark.step("file")
    print(f"{shared.is_shared()} {total}")


main()
