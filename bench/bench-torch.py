#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Wall time of a small PyTorch training loop (bench-torch-train.py) plain,
# under `tidemark record --torch` (default sampling) and, when installed,
# under heaptrack; runs interleaved, medians, ratios to plain.
#   bench-torch.py TIDEMARK [--runs N] [--steps N] [--heaptrack-runs N]
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PYTHON = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "bench-torch-train.py")


def timed(argv, cwd):
    start = time.monotonic()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tidemark")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--heaptrack-runs", type=int, default=3)
    args = parser.parse_args()
    args.tidemark = os.path.abspath(args.tidemark)

    workload = [PYTHON, TRAIN, str(args.steps)]
    heaptrack = shutil.which("heaptrack")
    times = {"plain": [], "tidemark": [], "heaptrack": []}
    with tempfile.TemporaryDirectory(prefix="bench-torch-") as tmp:
        trace = os.path.join(tmp, "run.tide")
        for i in range(args.runs):
            times["plain"].append(timed(workload, tmp))
            times["tidemark"].append(timed([args.tidemark, "record", "-q", "--torch", "-o",
                                            trace, "--"] + workload, tmp))
            os.unlink(trace)
            if heaptrack and i < args.heaptrack_runs:
                times["heaptrack"].append(timed([heaptrack, "-o", os.path.join(tmp, "ht")]
                                                + workload, tmp))
                for name in os.listdir(tmp):
                    if name.startswith("ht"):
                        os.unlink(os.path.join(tmp, name))

    plain = statistics.median(times["plain"])
    print(f"workload: {' '.join(workload[1:])} (whole process, import torch included)")
    print(f"plain              median {plain:7.2f} s  of {len(times['plain'])}")
    for name in ("tidemark", "heaptrack"):
        if times[name]:
            m = statistics.median(times[name])
            print(f"{name + (' --torch' if name == 'tidemark' else ''):18} median {m:7.2f} s"
                  f"  of {len(times[name])}  ratio {m / plain:5.2f}x")
        elif name == "heaptrack":
            print("heaptrack          not installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
