# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A training loop that calls a leaking native library through ctypes once
# per step.   train-native.py LIBRARY STEPS BYTES
import ctypes
import sys

import torch
from torch import nn


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.tide_test_native_leak.argtypes = [ctypes.c_size_t]
    lib.tide_test_native_leak.restype = ctypes.c_void_p
    steps, n_bytes = int(sys.argv[2]), int(sys.argv[3])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.Adam(model.parameters(), lr=0.001)
    x, y = torch.randn(32, 64), torch.randn(32, 4)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        lib.tide_test_native_leak(n_bytes)  # NATIVE-LINE
    print("done", steps)


if __name__ == "__main__":
    main()
