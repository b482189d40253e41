#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
"""The record benchmark: alloc-bench plain, under `tidemark record`
in default sampling mode and with --all, and under heaptrack when it is
installed, all in this one invocation, runs interleaved; medians of --runs.

Prints each mode's median wall time and its ratio to plain (with the
quartiles of the per-run ratios), the recorder's own peak RSS (from the
trace's meta), and the trace size per recorded allocation.

Every run of a profiled mode sits between two plain runs, and its ratio
is its time over the mean of those two; the ratio printed is the median of
a mode's ratios.  A shared machine's speed drifts by a fifth between
minutes, and a bracket's runs are seconds apart, so the pairing cancels
the drift that a ratio of two medians keeps, and the bracket the part of
it that moves steadily.  (Before, a round had one plain run for all its
modes, up to 25 s away from some of them.)  Brackets cannot cancel the
noise between neighbouring runs: the quartiles of the default mode's
ratios spread by a tenth or more.  Nor the machine's state between
invocations, which moves a median by several points within half an hour.
Each round starts one mode later than the one before, so that every mode
runs after every other as often.  A recording's trace is deleted once it
is read, before the next run starts: a recording that replaced the 260 MB
trace of the last --all run paid 25 ms of its time to unlink it.

Beside each wall ratio stands the median CPU ratio: the user and system
time of a run and of every process it waited for (the recorder's threads,
the program's), over that of the plain runs on either side.  alloc-bench's
4 threads keep this 2-core machine's cores busy, so every CPU second the
profiler spends, the program waits for: the two ratios agree unless the
machine moved under a run.  The recorder's own share is its
threads' CPU time until the program ended, from the trace's meta
(recorder_cpu_ns).  The stand-in recorder of --breakdown runs in this
script and is not counted, so that mode's CPU ratio is the program's side
alone.

The recordings keep their symbol cache (tide-symbol-cache.h) in the
bench's own folder, filled by one recording before the rounds, as a
user's second recording of a program finds it; `record --no-symbol-cache`
runs beside them and shows what a first recording pays.

  bench/bench-record.py BUILD_DIR [--runs 9] [--ops N] [--intervals 262144,1048576]
                        [--breakdown] [--program storm-bench|steps-bench]
                        [--baseline OTHER_BUILD_DIR]

--program storm-bench records an allocation storm instead (storm-bench.c:
4 threads of small blocks and little work each, about three times as many
allocations a second as alloc-bench makes, so that the hooks on the common
malloc and free cost what they cost in a real storm).  --ops is then each thread's
number of allocations (default 4500000).  The storm runs plain and under
`record` only (with --intervals and --breakdown when asked): --all would
write tens of millions of rows, and heaptrack takes minutes.

--program steps-bench records a program that keeps --ops blocks of 256 B
live (default 300000) while it marks 100 steps of a few milliseconds of
work each (steps-bench.c): what each step end costs where a job holds many
recorded blocks.  It runs plain, under `record` and under `record --all`,
which records every kept block, as the sampled blocks of a job with a
large heap are.

--baseline adds `record` and `record --all` with another build's tidemark,
in the same invocation, so that two builds compare.

--intervals adds `record --sample-bytes N` for each N, to show what the
sampling interval trades: fewer samples cost less, and estimates of leaks
made of blocks smaller than N get noisier (relative sd about sqrt(N / L)
for a leak of L bytes).

--breakdown adds two runs of alloc-bench under the preload library alone,
its records read and thrown away by a stand-in recorder in this script:
one with a sampling interval of 1 TiB (the hooks' cost: every malloc and
free passes through them, and nothing is sampled) and one with the
default interval (the program's whole side: sampling, stacks, records,
sends).  What `record` costs beyond the second is the recorder's.  A
third mode records with the stack memo off (tide-preload-unwind.c), so that
every sample is walked by unw_backtrace.
"""
import argparse
import os
import resource
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def settle():
    """Starts every run from the same quiet machine.  Right after a --all
    recording's big trace was deleted, a plain run of alloc-bench ran
    several percent faster than after another plain run, and as fast after
    a sync and a short pause: whichever run followed a big deletion ran
    fast."""
    os.sync()
    time.sleep(0.2)


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd, env=None):
    """Runs @cmd; returns its wall time, the CPU time of it and every
    process it waited for (the recorder's threads and the program's), and
    its output."""
    settle()
    cpu = children_cpu()
    start = time.monotonic()
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    elapsed = time.monotonic() - start
    cpu = children_cpu() - cpu
    if result.returncode != 0:
        sys.exit("bench: %s failed (%d): %s" % (cmd[0], result.returncode,
                                                result.stderr.decode(errors="replace")[-400:]))
    return elapsed, cpu, result.stdout


def trace_facts(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    rows = db.execute("SELECT count(*) FROM allocations").fetchone()[0]
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    db.close()
    return (rows, int(meta.get("recorder_peak_rss", 0)), int(meta.get("dropped_events", 0)),
            int(meta.get("recorder_cpu_ns", 0)) / 1e9)


WIRE_EXIT_BARRIER = 30   # TIDE_WIRE_EXIT_BARRIER, capture/wire/tide-wire.h
WIRE_HEADER_BYTES = 16


def drain_connection(conn):
    """Reads a process's records and drops them; answers an exit barrier as
    the recorder does, so that a program that marked steps need not wait."""
    with conn:
        while True:
            message = conn.recv(1 << 17)
            if not message:
                return
            if int.from_bytes(message[:2], "little") == WIRE_EXIT_BARRIER:
                conn.send(message[:WIRE_HEADER_BYTES])


def start_stand_in_recorder(path):
    """A listening socket where the preload library finds a recorder that
    only reads: the cost of the program's side alone."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(path)
    server.listen(64)

    def accept_forever():
        while True:
            conn, _ = server.accept()
            threading.Thread(target=drain_connection, args=(conn,), daemon=True).start()

    threading.Thread(target=accept_forever, daemon=True).start()


def remove_trace(path):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--ops", type=int, default=None,
                        help="the program's work: 1500000 for alloc-bench, 4500000 for storm-bench,"
                             " 300000 blocks kept for steps-bench")
    parser.add_argument("--program", choices=["alloc-bench", "storm-bench", "steps-bench"],
                        default="alloc-bench")
    parser.add_argument("--baseline", default=None,
                        help="another build directory, recorded with in the same invocation")
    parser.add_argument("--intervals", default="",
                        help="comma-separated sampling intervals to run besides the default")
    parser.add_argument("--breakdown", action="store_true",
                        help="also run the program under the preload library alone")
    args = parser.parse_args()

    tidemark = os.path.join(args.build_dir, "app", "tidemark")
    if args.ops is None:
        args.ops = {"storm-bench": 4500000, "steps-bench": 300000}.get(args.program, 1500000)
    program = [os.path.join(args.build_dir, "bench", args.program), str(args.ops)]
    heaptrack = shutil.which("heaptrack")
    work = tempfile.mkdtemp(prefix="tide-bench-")
    trace = os.path.join(work, "bench.tide")
    env = dict(os.environ, TIDEMARK_SYMBOL_CACHE=os.path.join(work, "symbols"))

    modes = {
        "plain": lambda: run(program),
        "record": lambda: run([tidemark, "record", "-q", "--force", "-o", trace, "--"] + program, env),
        "record --no-symbol-cache": lambda: run([tidemark, "record", "-q", "--force", "--no-symbol-cache",
                                                 "-o", trace, "--"] + program, env),
        "record --all": lambda: run([tidemark, "record", "-q", "--force", "--all", "-o", trace, "--"] + program,
                                    env),
    }
    for interval in filter(None, args.intervals.split(",")):
        modes["record -s %s" % interval] = (
            lambda n=interval: run([tidemark, "record", "-q", "--force", "--sample-bytes", n, "-o", trace, "--"]
                                   + program, env))
    if args.breakdown:
        stand_in = os.path.join(work, "stand-in.sock")
        start_stand_in_recorder(stand_in)
        preload = dict(os.environ, TIDEMARK_SOCKET=stand_in,
                       LD_PRELOAD=os.path.join(args.build_dir, "capture", "preload",
                                               "libtidemark-preload.so"))
        hooks = dict(preload, TIDEMARK_SAMPLE_BYTES=str(1 << 40))
        modes["preload, hooks only"] = lambda: run(program, hooks)
        modes["preload, stand-in recorder"] = lambda: run(program, preload)
        no_memo = dict(env, TIDEMARK_UNWIND_MEMO="0")
        modes["record, no stack memo"] = lambda: run([tidemark, "record", "-q", "--force", "-o", trace, "--"]
                                                     + program, no_memo)
    if args.baseline:
        other = os.path.join(args.baseline, "app", "tidemark")
        modes["baseline record"] = lambda: run([other, "record", "-q", "--force", "-o", trace, "--"]
                                               + program, env)
        modes["baseline record --all"] = lambda: run([other, "record", "-q", "--force", "--all", "-o",
                                                      trace, "--"] + program, env)
    if args.program == "storm-bench":
        del modes["record --no-symbol-cache"], modes["record --all"]
        modes.pop("baseline record --all", None)
        heaptrack = None
    if args.program == "steps-bench":
        del modes["record --no-symbol-cache"]
        heaptrack = None
    if heaptrack:
        modes["heaptrack"] = lambda: run([heaptrack, "-o", os.path.join(work, "ht")] + program)

    modes["record"]()
    remove_trace(trace)
    times = {name: [] for name in modes}
    cpu_times = {name: [] for name in modes}
    ratios = {name: [] for name in modes if name != "plain"}
    cpu_ratios = {name: [] for name in modes if name != "plain"}
    recorder_cpus = {name: [] for name in modes}
    facts = {}
    expected = None
    profiled = [name for name in modes if name != "plain"]

    def run_mode(name):
        nonlocal expected
        elapsed, cpu, out = modes[name]()
        times[name].append(elapsed)
        cpu_times[name].append(cpu)
        if name != "heaptrack":
            # Profiling must not change what the program computes.
            expected = expected or out
            if out != expected:
                sys.exit("bench: %s changed the program's output" % name)
        if "record" in name:
            rows, peak, dropped, recorder_cpu = trace_facts(trace)
            facts[name] = (rows, peak, dropped, os.path.getsize(trace))
            recorder_cpus[name].append(recorder_cpu)
            remove_trace(trace)
        return elapsed, cpu

    for round_index in range(args.runs):
        # Each round starts one mode later, so that no mode always runs
        # right after the same one (heaptrack's, or --all's, aftermath).
        shift = round_index % len(profiled)
        before = run_mode("plain")
        for name in profiled[shift:] + profiled[:shift]:
            elapsed, cpu = run_mode(name)
            after = run_mode("plain")
            ratios[name].append(elapsed / ((before[0] + after[0]) / 2))
            cpu_ratios[name].append(cpu / ((before[1] + after[1]) / 2))
            before = after
        for leftover in os.listdir(work):
            if leftover.startswith("ht"):
                os.unlink(os.path.join(work, leftover))

    work_done = ("%d blocks kept" % args.ops if args.program == "steps-bench"
                 else "%d ops x 4 threads" % args.ops)
    print("%s, %s, %d rounds; each ratio is the median of a mode's runs"
          " over the plain runs on either side" % (args.program, work_done, args.runs))
    for name, samples in times.items():
        median = statistics.median(samples)
        if name == "plain":
            print("%-28s %7.3f s  1.00x  (%d runs)  CPU %.2f s" % (name, median, len(samples),
                                                              statistics.median(cpu_times[name])))
            continue
        line = "%-28s %7.3f s  %5.2fx" % (name, median, statistics.median(ratios[name]))
        if len(ratios[name]) >= 4:
            # The spread of the per-run ratios: this machine's speed moves
            # even between neighbouring runs, and this says by how much.
            q1, _, q3 = statistics.quantiles(ratios[name], n=4)
            line += " (quartiles %.2f-%.2f)" % (q1, q3)
        line += "  CPU %5.2fx" % statistics.median(cpu_ratios[name])
        if recorder_cpus[name]:
            line += " (recorder %.2f s)" % statistics.median(recorder_cpus[name])
        if name in facts:
            rows, peak, dropped, size = facts[name]
            line += "  recorder peak RSS %5.1f MiB  %9d rows  %5.1f bytes/row  dropped %d" % (
                peak / 1048576.0, rows, size / max(rows, 1), dropped)
        print(line)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
