# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
"""`tidemark record --torch`: steps and module scopes without changing the
script.

- A step ends at every `torch.optim.Optimizer.step` of the first optimizer
  that steps (a loop with several optimizers still counts one step each),
  or at every `torch_xla` `mark_step`, whichever steps first.
- Every `nn.Module` forward is a scope (global forward pre/post hooks): the
  module's dotted path when its model is watched, else its class name.  A
  module called with no module above it is watched automatically, under its
  class name, so submodules get paths like `Net.encoder.layers.2`.
- Allocations made while a module is constructed (`__init__`) or moved
  (`_apply`, behind `.to()`, `.cuda()`, `.float()` ...) carry its scope.
- A process tells its torch.distributed rank once `init_process_group`
  returns (jobs started by `torch.multiprocessing.spawn` have no RANK in
  their environment), and a DataLoader worker its index when torch makes
  its WorkerInfo.
"""

import functools
import importlib.abc
import importlib.machinery
import sys
import threading
import weakref

import tidemark
from tidemark import _native, _pop, _push, module_path

_installed = False
_tls = threading.local()
_step_owner = None  # weakref to the first optimizer that stepped, or "xla"


def installed():
    return _installed


def _stack():
    stack = getattr(_tls, "modules", None)
    if stack is None:
        stack = _tls.modules = []
    return stack


def _scope_name(module, stack):
    path = module_path(module)
    if path is None and not stack:
        tidemark.watch(module, type(module).__name__)
        path = module_path(module)
    return path if path is not None else type(module).__name__


def _enter(module):
    stack = _stack()
    _push(_scope_name(module, stack))
    stack.append(module)


def _leave(module):
    # A forward that raised skipped its post hook: close its scope too.
    stack = _stack()
    while stack:
        top = stack.pop()
        _pop()
        if top is module:
            return


def _close_all():
    stack = _stack()
    while stack:
        stack.pop()
        _pop()


def _pre_hook(module, args):
    _enter(module)


def _post_hook(module, args, output):
    _leave(module)


# ---- steps -------------------------------------------------------------------

def _owner_step(owner):
    """A step source stepped: end a step if it owns steps."""
    global _step_owner
    current = _step_owner() if isinstance(_step_owner, weakref.ref) else _step_owner
    if current is None:
        _step_owner = weakref.ref(owner) if owner != "xla" else "xla"
        current = owner
    if current is owner:
        _close_all()
        tidemark.step()


def _wrap_step(cls):
    step = cls.__dict__.get("step")
    if step is None or getattr(step, "_tidemark", False):
        return

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if getattr(_tls, "in_step", False):  # a subclass calling super().step()
            return step(self, *args, **kwargs)
        _tls.in_step = True
        try:
            return step(self, *args, **kwargs)
        finally:
            _tls.in_step = False
            _owner_step(self)

    wrapper._tidemark = True
    cls.step = wrapper


def _hook_optimizers(torch):
    Optimizer = torch.optim.Optimizer
    init = Optimizer.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        _wrap_step(type(self))

    Optimizer.__init__ = __init__


def _hook_xla(xm):
    mark_step = xm.mark_step

    @functools.wraps(mark_step)
    def wrapper(*args, **kwargs):
        try:
            return mark_step(*args, **kwargs)
        finally:
            _owner_step("xla")

    xm.mark_step = wrapper


# ---- construction and moves ------------------------------------------------------

def _wrap_init(cls):
    init = cls.__dict__.get("__init__")
    if init is None or getattr(init, "_tidemark", False):
        return

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        building = getattr(_tls, "building", None)
        if building is None:
            building = _tls.building = []
        if building and building[-1] is self:  # super().__init__(): same scope
            return init(self, *args, **kwargs)
        building.append(self)
        _push(cls.__name__)
        try:
            return init(self, *args, **kwargs)
        finally:
            _pop()
            building.pop()

    __init__._tidemark = True
    cls.__init__ = __init__


def _hook_construction(torch):
    Module = torch.nn.Module
    todo = [Module]
    while todo:
        cls = todo.pop()
        _wrap_init(cls)
        todo.extend(cls.__subclasses__())

    def __init_subclass__(cls, **kwargs):
        super(Module, cls).__init_subclass__(**kwargs)
        _wrap_init(cls)

    Module.__init_subclass__ = classmethod(__init_subclass__)

    apply = Module._apply

    @functools.wraps(apply)
    def _apply(self, *args, **kwargs):
        _enter(self)
        try:
            return apply(self, *args, **kwargs)
        finally:
            _leave(self)

    Module._apply = _apply


# ---- process roles ----------------------------------------------------------------

def send_distributed_rank():
    """The rank and world size of torch.distributed, once it is set up."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            _native.info(dist.get_rank(), -1, dist.get_world_size(), -1)
    except Exception:  # the profiler must never break the program
        pass


def _hook_distributed(torch):
    dist = torch.distributed
    init = getattr(dist, "init_process_group", None)
    if init is None or getattr(init, "_tidemark", False):
        return

    @functools.wraps(init)
    def init_process_group(*args, **kwargs):
        result = init(*args, **kwargs)
        send_distributed_rank()
        return result

    init_process_group._tidemark = True
    dist.init_process_group = init_process_group


def _hook_loader_workers(torch):
    # torch's worker loop makes one WorkerInfo(id=...) in each worker
    # process, before the user's worker_init_fn runs.
    WorkerInfo = torch.utils.data._utils.worker.WorkerInfo
    init = WorkerInfo.__init__
    if getattr(init, "_tidemark", False):
        return

    @functools.wraps(init)
    def __init__(self, **kwargs):
        init(self, **kwargs)
        worker = kwargs.get("id")
        if isinstance(worker, int) and worker >= 0:
            _native.info(-1, -1, -1, worker)

    __init__._tidemark = True
    WorkerInfo.__init__ = __init__


def hook_model(model):
    """Forward hooks on the modules of one model (watch() without --torch)."""
    for module in model.modules():
        if not module.__dict__.get("_tidemark_hooked"):
            module.register_forward_pre_hook(_pre_hook)
            module.register_forward_hook(_post_hook)
            object.__setattr__(module, "_tidemark_hooked", True)


def install(torch):
    global _installed
    if _installed or not _native.active:
        return
    _installed = True
    from torch.nn.modules import module as module_mod
    module_mod.register_module_forward_pre_hook(_pre_hook)
    module_mod.register_module_forward_hook(_post_hook)
    _hook_optimizers(torch)
    _hook_construction(torch)
    for hook in (_hook_distributed, _hook_loader_workers):
        try:
            hook(torch)
        except Exception:  # a torch without these parts still gets the rest
            pass


# ---- after-import hooks ------------------------------------------------------------

_after_import = {}


class _Loader(importlib.abc.Loader):
    def __init__(self, loader, callback):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._callback(module)
        except Exception:  # the profiler must never break the import
            pass

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        callback = _after_import.get(name)
        if callback is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        del _after_import[name]
        spec.loader = _Loader(spec.loader, callback)
        return spec


def _when_imported(name, callback):
    if name in sys.modules:
        callback(sys.modules[name])
    else:
        _after_import[name] = callback


def install_when_imported():
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    _when_imported("torch", install)
    _when_imported("torch_xla.core.xla_model", _hook_xla)
