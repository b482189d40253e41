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

    def holds_this_bootstrap(entry):
        # Another copy of this package (an installed one on the user's
        # PYTHONPATH beside a built one) has this sitecustomize too, which
        # would look for the next one and find this one again.
        return os.path.isfile(os.path.join(entry or ".", "tidemark", "_boot.py"))

    rest = [p for p in sys.path if not holds_this_bootstrap(p)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_tidemark_start()
_tidemark_chain()
