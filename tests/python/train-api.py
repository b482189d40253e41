# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A loop that marks its own steps and scopes through the tidemark package,
# without --torch: tidemark.step() ends each iteration; a `with
# tidemark.scope("data")` block, a function decorated with
# @tidemark.scope("decorated") and a module named by tidemark.watch() each
# leak one block per iteration through leaky-native's tide_test_native_leak,
# of BYTES + 8, BYTES + 16 and BYTES bytes.
#   train-api.py LEAKY_NATIVE_LIB STEPS BYTES
import ctypes
import sys

import torch
from torch import nn

import tidemark


class Cache(nn.Module):
    def __init__(self, leak, n_bytes):
        super().__init__()
        self.leak = leak
        self.n_bytes = n_bytes

    def forward(self, x):
        self.leak(self.n_bytes)
        return x


class Net(nn.Module):
    def __init__(self, leak, n_bytes):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.cache = Cache(leak, n_bytes)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.cache(self.encoder(x)))


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.tide_test_native_leak.argtypes = [ctypes.c_size_t]
    lib.tide_test_native_leak.restype = ctypes.c_void_p
    steps, n_bytes = int(sys.argv[2]), int(sys.argv[3])
    assert tidemark.enabled()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = tidemark.watch(Net(lib.tide_test_native_leak, n_bytes), "net")

    @tidemark.scope("decorated")
    def decorated():
        lib.tide_test_native_leak(n_bytes + 16)

    x = torch.randn(4, 8)
    for _ in range(steps):
        with tidemark.scope("data"):
            lib.tide_test_native_leak(n_bytes + 8)
        model(x)
        decorated()
        tidemark.step("iter")
    print("done", steps)


if __name__ == "__main__":
    main()
