#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
"""The merge benchmark: `tidemark merge` of --traces generated traces (one
host each, tide-gen-trace), medians of --runs.

Prints the input size, the median wall time of the whole merge (copies,
then the summaries of the job built again) with its MB/s of input, and the
merge's peak RSS, read from the kernel for that process alone (wait4), so
the generators do not count.  The merged trace is then checked: one host
per input in `report --processes`.

  bench/bench-merge.py BUILD_DIR [--traces 8] [--allocations 1400000]
                       [--counters 140000] [--runs 3] [--dir DIR]

The defaults give traces of about 100 MB each (tide-gen-trace's rows
take about 70 bytes per allocation with their indexes).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def generate(build, path, host, args):
    subprocess.run([os.path.join(build, "bench", "tide-gen-trace"), "-o", path,
                    "--allocations", str(args.allocations), "--counters", str(args.counters),
                    "--steps", "200", "--duration", "600", "--host", host],
                   check=True, stdout=subprocess.DEVNULL)


def merge_once(tidemark, inputs, output):
    """Wall seconds and peak RSS (bytes) of one merge."""
    if os.path.exists(output):
        os.unlink(output)
    start = time.monotonic()
    proc = subprocess.Popen([tidemark, "merge", "-q", "-o", output] + inputs)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("merge failed")
    return wall, usage.ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--traces", type=int, default=8)
    parser.add_argument("--allocations", type=int, default=1400000)
    parser.add_argument("--counters", type=int, default=140000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()

    tidemark = os.path.join(args.build, "app", "tidemark")
    work = tempfile.mkdtemp(prefix="bench-merge-", dir=args.dir)
    try:
        inputs = []
        for i in range(args.traces):
            path = os.path.join(work, "node-%d.tide" % i)
            generate(args.build, path, "node-%d" % i, args)
            inputs.append(path)
        total = sum(os.path.getsize(p) for p in inputs)
        output = os.path.join(work, "job.tide")
        walls, rss = [], []
        for _ in range(args.runs):
            wall, peak = merge_once(tidemark, inputs, output)
            walls.append(wall)
            rss.append(peak)
        report = subprocess.run([tidemark, "report", output, "--processes", "--format", "csv"],
                                check=True, capture_output=True, text=True).stdout
        hosts = {line.rsplit(",", 1)[1] for line in report.splitlines()[1:] if line}
        if len(hosts) != args.traces:
            sys.exit("the merged trace has %d hosts, not %d" % (len(hosts), args.traces))
        wall = statistics.median(walls)
        print("inputs: %d traces, %.1f MB in all (%.1f MB each), %d allocation rows each"
              % (args.traces, total / 1e6, total / 1e6 / args.traces, args.allocations))
        print("merge: median %.2f s of %d (%.2f-%.2f), %.1f MB/s; peak RSS %.1f MiB (max of runs);"
              " output %.1f MB"
              % (wall, args.runs, min(walls), max(walls), total / 1e6 / wall,
                 max(rss) / 1048576, os.path.getsize(output) / 1e6))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
