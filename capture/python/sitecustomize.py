# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Bootstrap that `tidemark record` puts first on PYTHONPATH.  Starts the
# tidemark package in every Python process of the recording, then runs the
# sitecustomize this one hides (Debian ships one), if any.

def _tidemark_start():
    import os
    if not os.environ.get("TIDEMARK_SOCKET"):
        return
    try:
        from tidemark import _boot
        _boot.start()
    except Exception:  # the program must run even if the profiler cannot
        pass


def _tidemark_chain():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_tidemark_start()
_tidemark_chain()
