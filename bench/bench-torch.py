#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Wall time of a small PyTorch training loop (bench-torch-train.py) plain,
# under `tidemark record --torch` (default sampling) and, when installed,
# under heaptrack; runs interleaved, medians, ratios to plain.
#   bench-torch.py TIDEMARK [--runs N] [--steps N] [--workers N]
#                  [--heaptrack-runs N] [--compare OTHER_TIDEMARK]
#
# --workers N feeds the loop from a DataLoader with N worker processes.
#
# Beside the wall time stand CPU times, which other jobs on the machine
# change far less: the program's own (its every thread, the preload's
# included: what recording costs the program's side) and the recorder's
# (every CPU second that `tidemark record` and its children used, less the
# program's), then the recorder's CPU while it recorded, from the trace's
# meta (recorder_cpu_ns), and its share of the program's.  --compare records with a second build too, in the same
# rounds, so that a change is measured against the build before it; each
# round starts one mode later than the one before, and the two builds'
# ratios are paired by round: each round's "after" over its "before", the
# median of those with their extremes.
import argparse
import os
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

PYTHON = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "bench-torch-train.py")


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv, cwd):
    """Returns the wall time, the CPU time of every process waited for, and
    the workload's own CPU time, which it prints last."""
    cpu = children_cpu()
    start = time.monotonic()
    result = subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    elapsed = time.monotonic() - start
    cpu = children_cpu() - cpu
    program = [float(line.split()[1]) for line in result.stdout.decode().splitlines()
               if line.startswith("cpu ")]
    return elapsed, cpu, program[-1] if program else cpu


def timed_or_none(argv, cwd, limit):
    """timed() for a tool that may hang (heaptrack with forked DataLoader
    workers did): None past @limit seconds, its every process killed."""
    cpu = children_cpu()
    start = time.monotonic()
    with subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None
    elapsed = time.monotonic() - start
    cpu = children_cpu() - cpu
    program = [float(line.split()[1]) for line in out.decode().splitlines()
               if line.startswith("cpu ")]
    return elapsed, cpu, program[-1] if program else cpu


def recorder_cpu_meta(trace):
    """The recorder's CPU while it recorded, as the trace's meta says
    (recorder_cpu_ns): start-up and the summaries at its end left out."""
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'recorder_cpu_ns'").fetchone()
    finally:
        db.close()
    return row[0] / 1e9 if row else 0.0


def median(values):
    return statistics.median(values) if values else 0.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tidemark")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--heaptrack-runs", type=int, default=3)
    parser.add_argument("--compare", metavar="OTHER_TIDEMARK",
                        help="also record with this build (\"before\")")
    args = parser.parse_args()

    workload = [PYTHON, TRAIN, str(args.steps), str(args.workers)]
    heaptrack = shutil.which("heaptrack")
    builds = {"tidemark --torch": os.path.abspath(args.tidemark)}
    if args.compare:
        builds = {"before --torch": os.path.abspath(args.compare),
                  "after --torch": os.path.abspath(args.tidemark)}
    modes = ["plain"] + list(builds)
    runs = {name: [] for name in modes + ["heaptrack"]}
    with tempfile.TemporaryDirectory(prefix="bench-torch-") as tmp:
        trace = os.path.join(tmp, "run.tide")

        def run_mode(name):
            if name == "plain":
                runs[name].append(timed(workload, tmp))
                return
            run = timed([builds[name], "record", "-q", "--force", "--torch", "-o", trace, "--"]
                        + workload, tmp)
            runs[name].append(run + (recorder_cpu_meta(trace),))
            os.unlink(trace)

        for i in range(args.runs):
            for k in range(len(modes)):
                run_mode(modes[(i + k) % len(modes)])
            if heaptrack and i < args.heaptrack_runs:
                limit = 10 * median([r[0] for r in runs["plain"]])
                run = timed_or_none([heaptrack, "-o", os.path.join(tmp, "ht")] + workload, tmp,
                                    limit)
                if run is None:
                    print(f"heaptrack run {i + 1} killed after {limit:.0f} s", file=sys.stderr)
                else:
                    runs["heaptrack"].append(run)
                for name in os.listdir(tmp):
                    if name.startswith("ht"):
                        os.unlink(os.path.join(tmp, name))

    plain_wall = median([r[0] for r in runs["plain"]])
    plain_program = median([r[2] for r in runs["plain"]])
    print(f"workload: {' '.join(workload[1:])} (whole process, import torch included)")
    print(f"{'mode':18} {'wall':>8} {'ratio':>6}  {'program CPU':>11} {'ratio':>6}"
          f"  {'recorder CPU':>12}  {'while recording':>15}  (medians of N)")
    for name in modes + ["heaptrack"]:
        if not runs[name]:
            if name == "heaptrack" and not heaptrack:
                print("heaptrack          not installed")
            continue
        wall = median([r[0] for r in runs[name]])
        program = median([r[2] for r in runs[name]])
        line = (f"{name:18} {wall:7.2f}s {wall / plain_wall:5.2f}x  {program:10.2f}s"
                f" {program / plain_program:5.2f}x")
        if name in builds:
            meta = median([r[3] for r in runs[name]])
            line += (f"  {median([r[1] - r[2] for r in runs[name]]):11.2f}s"
                     f"  {meta:6.2f}s {100 * meta / program:5.1f}%")
        else:
            line += " " * 31
        print(line + f"  (N={len(runs[name])})")
    if args.compare:
        print_paired(runs["after --torch"], runs["before --torch"])
    return 0


def print_paired(after, before):
    """Each round's after over its before: wall, program CPU, recorder CPU."""
    print("after / before, paired by round: median (min-max)")
    for what, value in (("wall", lambda r: r[0]), ("program CPU", lambda r: r[2]),
                        ("recorder CPU", lambda r: r[1] - r[2])):
        ratios = sorted(value(a) / value(b) for a, b in zip(after, before) if value(b) > 0)
        if ratios:
            print(f"  {what:13} {median(ratios):.3f}x ({ratios[0]:.3f}-{ratios[-1]:.3f})")


if __name__ == "__main__":
    sys.exit(main())
