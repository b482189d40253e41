# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A real training step on CUDA for run-on-gpu.sh: a small MLP, a few steps,
# and at each step end torch's own view of device memory, to compare with
# the device bytes in the trace:
#   step N reserved BYTES allocated BYTES
import sys

import torch

try:
    import tidemark  # importable in every process that `tidemark record` starts
except ImportError:
    sys.exit("gpu-torch-step: run it under `tidemark record`")

if not torch.cuda.is_available():
    sys.exit(77)

model = torch.nn.Sequential(
    torch.nn.Linear(4096, 8192), torch.nn.ReLU(), torch.nn.Linear(8192, 4096)
).cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(1, 7):
    x = torch.randn(512, 4096).pin_memory().cuda(non_blocking=True)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    loss_value = loss.item()  # a device->host copy
    torch.cuda.synchronize()
    print(f"step {step} reserved {torch.cuda.memory_reserved(0)} "
          f"allocated {torch.cuda.memory_allocated(0)}", flush=True)
    tidemark.step()
