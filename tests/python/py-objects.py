# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Plain Python, no torch: log_metrics keeps 20,000 small dicts a step in a
# history list, churn builds 60,000 dicts twice a step and keeps none.
#   py-objects.py STEPS [tracemalloc]
# With PY_OBJECTS_LARGE=1 in the environment, log_blobs keeps 4,000 bytes
# objects of 633 bytes a step instead: larger than pymalloc serves, so
# CPython's object allocator passes each on to malloc.
# With PY_OBJECTS_GROWN=1, log_rows keeps 4,000 lists a step, each grown
# by append (CPython reallocs its items), beside as many that it drops.
# PY_OBJECTS_CHURN=N makes churn build N dicts at a time instead of 60,000.
# With "tracemalloc", the program measures itself: it prints how many
# bytes the lines of log_metrics hold live after the first step and after
# the last, as tracemalloc counts them (the most recent frame of each
# trace); tracemalloc keeps its own tables outside what it traces.
import os
import sys

try:
    import tidemark
    step = tidemark.step
except ImportError:  # the measuring run, without the profiler
    def step():
        pass

history = []
CHURN = int(os.environ.get("PY_OBJECTS_CHURN", "60000"))


def log_metrics(n):
    for i in range(20000):
        history.append({"step": n, "i": i, "loss": 0.5})  # KEEP-LINE


def churn(n):
    for _ in range(2):
        tmp = [{"step": n, "i": i} for i in range(CHURN)]  # CHURN-LINE
        del tmp


def log_blobs(n):
    for i in range(4000):
        history.append(bytes(600))  # KEEP-LARGE-LINE


def log_rows(n):
    for i in range(4000):
        row = []
        scratch = []
        for j in range(12):
            row.append(j)  # KEEP-GROWN-LINE
            scratch.append(j)
        history.append(row)


def live_in(function, tracemalloc):
    code = function.__code__
    lines = range(code.co_firstlineno, code.co_firstlineno + 10)
    snapshot = tracemalloc.take_snapshot()
    return sum(stat.size for stat in snapshot.statistics("lineno")
               if stat.traceback[0].filename == code.co_filename
               and stat.traceback[0].lineno in lines)


def main():
    steps = int(sys.argv[1])
    measure = len(sys.argv) > 2 and sys.argv[2] == "tracemalloc"
    keep = log_metrics
    if os.environ.get("PY_OBJECTS_LARGE") == "1":
        keep = log_blobs
    elif os.environ.get("PY_OBJECTS_GROWN") == "1":
        keep = log_rows
    if measure:
        import tracemalloc
        tracemalloc.start(1)
    first = 0
    for n in range(steps):
        churn(n)
        keep(n)
        step()
        if measure and n == 0:
            first = live_in(keep, tracemalloc)
    if measure:
        print(keep.__name__, first, live_in(keep, tracemalloc))
    print("done", steps)


if __name__ == "__main__":
    main()
