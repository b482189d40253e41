# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
"""Start-up of a Python process under `tidemark record` (imported by the
bootstrap sitecustomize): Python frames on every thread, the process's
rank, and with --torch the PyTorch hooks once torch is imported."""

import atexit
import os
import sys
import threading

from . import _native


def _attach(skip):
    try:
        _native.attach(skip)
    except Exception:  # never let the profiler break the program
        pass


def _thread_start(frame, event, arg):
    # Installed with threading.setprofile: runs once, on the first event of
    # a new thread, and removes itself (frames read in place) or puts the C
    # profile function in its place.  Skip this function's frame and
    # _attach's: no "return" of theirs is ever seen.
    _attach(2)


def _hook_allocators():
    # Python objects through the preload's sampler.  Not while tracemalloc
    # traces (-X tracemalloc, PYTHONTRACEMALLOC): its stop() would put back
    # the allocators it found and drop ours from under sampled objects.
    try:
        import _tracemalloc
        if _tracemalloc.is_tracing():
            return
    except ImportError:
        pass
    try:
        _native.hook_allocators()
    except Exception:  # never let the profiler break the program
        pass


def _env_int(name):
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return -1


def _send_rank():
    rank, local, world = (_env_int(n) for n in ("RANK", "LOCAL_RANK", "WORLD_SIZE"))
    if rank >= 0 or local >= 0 or world >= 0:
        _native.info(rank, local, world, -1)


def _exit_barrier():
    try:
        _native.exit_barrier()
    except Exception:  # never let the profiler break the program
        pass


def start():
    if not _native.active:
        return
    # Registered first, so run last of the program's exit handlers, but
    # before the interpreter frees what the program kept: the recorder
    # measures the last step and takes its last reading while that memory
    # is still the program's.
    atexit.register(_exit_barrier)
    _hook_allocators()
    _attach(0)
    threading.setprofile(_thread_start)
    _send_rank()
    # A forked child (a DataLoader worker) is a new process to the recorder.
    os.register_at_fork(after_in_child=_send_rank)
    if os.environ.get("TIDEMARK_TORCH") == "1":
        from . import torch_hooks
        torch_hooks.install_when_imported()
