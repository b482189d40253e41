# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
"""Mark training steps and scopes for the Tidemark memory profiler.

    import tidemark
    tidemark.watch(model)            # module scopes get dotted paths
    for batch in loader:
        with tidemark.scope("data"):
            ...
        loss.backward(); opt.step()
        tidemark.step()              # end of one training step

Every call is a cheap no-op when the program does not run under
`tidemark record`: the functions live in libtidemark-preload.so, which
only the recorder preloads.
"""

import contextlib
import ctypes
import os
import threading

__all__ = ["step", "scope", "watch", "enabled"]


class _Native:
    """The preload's entry points, or None where the profiler is absent."""

    def __init__(self):
        self.step = self.push = self.pop = self.attach = self.info = None
        self.hook_allocators = self.exit_barrier = None
        self.active = False
        try:
            with_gil = ctypes.PyDLL(None)       # cheap calls, GIL kept
            without_gil = ctypes.CDLL(None)     # may wait on the socket
            enabled = with_gil.tidemark_preload_enabled
        except (OSError, AttributeError):
            return
        enabled.restype = ctypes.c_int
        enabled.argtypes = []
        if not enabled():
            return
        self.step = without_gil.tidemark_preload_step
        self.step.argtypes = [ctypes.c_char_p]
        self.step.restype = None
        self.push = with_gil.tidemark_preload_scope_push
        self.push.argtypes = [ctypes.c_char_p]
        self.push.restype = None
        self.pop = with_gil.tidemark_preload_scope_pop
        self.pop.argtypes = []
        self.pop.restype = None
        self.attach = with_gil.tidemark_preload_python_attach
        self.attach.argtypes = [ctypes.c_int]
        self.attach.restype = ctypes.c_int
        self.info = with_gil.tidemark_preload_process_info
        self.info.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.info.restype = None
        self.hook_allocators = with_gil.tidemark_preload_python_hook_allocators
        self.hook_allocators.argtypes = []
        self.hook_allocators.restype = ctypes.c_int
        self.exit_barrier = without_gil.tidemark_preload_exit_barrier
        self.exit_barrier.argtypes = []
        self.exit_barrier.restype = None
        self.active = True


_native = _Native()
_paths_lock = threading.Lock()


def enabled():
    """True when this process is being recorded by Tidemark."""
    return _native.active


def step(label=None):
    """Ends the current training step of this process."""
    if _native.active:
        _native.step(label.encode("utf-8", "replace") if label else None)


def _push(name):
    _native.push(name.encode("utf-8", "replace"))


def _pop():
    _native.pop()


class scope(contextlib.ContextDecorator):
    """A named region: allocations made inside it carry its name.

    Use as `with tidemark.scope("data"):` or as a decorator `@tidemark.scope("x")`.
    """

    def __init__(self, name):
        self.name = str(name)

    def __enter__(self):
        if _native.active:
            _push(self.name)
        return self

    def __exit__(self, *exc):
        if _native.active:
            _pop()
        return False


PATH_ATTR = "_tidemark_path"


def module_path(module):
    """The dotted path that watch() gave this module, or None."""
    return module.__dict__.get(PATH_ATTR)


def watch(model, name="model"):
    """Names the modules of `model` by their dotted paths from named_modules:
    `name` for the model itself, `name.encoder.layers.2` for a submodule.
    Without `tidemark record --torch`, also hooks their forward calls.
    Tells the profiler this process's torch.distributed rank, if it has one."""
    if not _native.active:
        return model
    with _paths_lock:
        for sub, module in model.named_modules():
            object.__setattr__(module, PATH_ATTR, f"{name}.{sub}" if sub else name)
    from . import torch_hooks
    if not torch_hooks.installed():
        torch_hooks.hook_model(model)
    torch_hooks.send_distributed_rank()
    return model
