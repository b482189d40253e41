#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Wall time of a Python-heavy loop without torch (bench-python-loop.py)
# plain and under `tidemark record` (default sampling, so every Python
# object goes through the sampler), and with --baseline TIDEMARK under
# another build's record; runs interleaved, medians, ratios to plain.
#   bench-python.py TIDEMARK [--runs N] [--steps N] [--baseline TIDEMARK]
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PYTHON = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "bench-python-loop.py")


def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv, cwd):
    """Wall time, and CPU time of the command and its children (the
    recorder included): on a busy machine the CPU time is the steadier."""
    cpu = cpu_of_children()
    start = time.monotonic()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start, cpu_of_children() - cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tidemark")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--baseline", help="another build's tidemark, run the same way")
    args = parser.parse_args()

    workload = [PYTHON, LOOP, str(args.steps)]
    modes = {"plain": None, "record": os.path.abspath(args.tidemark)}
    if args.baseline:
        modes["baseline record"] = os.path.abspath(args.baseline)
    times = {name: [] for name in modes}
    with tempfile.TemporaryDirectory(prefix="bench-python-") as tmp:
        trace = os.path.join(tmp, "run.tide")
        for i in range(args.runs):
            # Each round starts one mode later, so no mode always follows another.
            names = list(modes)
            names = names[i % len(names):] + names[:i % len(names)]
            for name in names:
                exe = modes[name]
                argv = workload if exe is None else [exe, "record", "-q", "--force", "-o", trace,
                                                     "--"] + workload
                times[name].append(timed(argv, tmp))
                if os.path.exists(trace):
                    os.unlink(trace)

    plain = statistics.median(t for t, _ in times["plain"])
    plain_cpu = statistics.median(c for _, c in times["plain"])
    print(f"workload: {' '.join(workload[1:])}")
    for name in modes:
        wall = statistics.median(t for t, _ in times[name])
        cpu = statistics.median(c for _, c in times[name])
        print(f"{name:16} median {wall:6.2f} s  ratio {wall / plain:5.2f}x   CPU {cpu:6.2f} s"
              f"  ratio {cpu / plain_cpu:5.2f}x   of {len(times[name])}:"
              f" {' '.join(f'{t:.2f}' for t, _ in times[name])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
