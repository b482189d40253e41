# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Steps and scopes through the documented names, as a Python program finds
# them without the tidemark package: ctypes.CDLL(None).tidemark_step.  Five
# steps (CTYPES_STEPS in named-steps.h); in each, a bytearray of 1 MiB made
# inside the scope "ctypes.block" and kept.
import ctypes

lib = ctypes.CDLL(None)
step = lib.tidemark_step
push = lib.tidemark_scope_push
pop = lib.tidemark_scope_pop
step.argtypes = [ctypes.c_char_p]
push.argtypes = [ctypes.c_char_p]
step.restype = push.restype = pop.restype = None

kept = []
for i in range(5):
    push(b"ctypes.block")
    block = bytearray(1 << 20)
    pop()
    kept.append(block)
    step(b"ctypes-%d" % (i + 1))
print("named-steps.py: %d steps" % len(kept))
