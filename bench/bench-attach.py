#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# bench-attach: the cost of `tidemark attach` on alloc-storm (8 threads of
# malloc/free).  Each run starts `alloc-storm --wait`, which has loaded and
# waits for a line on stdin, attaches to it (or not, for the plain runs) as
# one attaches to a job that is already running, then lets it go and times
# it from "go" to its exit, so plain and attached runs are timed the same
# way.  Runs are interleaved; medians of --runs (default 5).
#   bench-attach.py TIDEMARK ALLOC_STORM [--runs N] [--iterations N] [--malloc-iterations N]
#                   [--torch TRAIN_SCRIPT [--torch-steps N]]
# --torch adds a PyTorch training loop (bench-torch-train.py --wait, run by
# /usr/bin/python3), plain, attached (its steps are the optimizer's), and
# attached with --step-interval (no optimizer-step uprobe): CPython's frames
# are walked at each sampled fault there.
# The default run is 10000000 iterations (about half a second here), so that
# what an attach costs once (symbolizing the first stacks) weighs as it would
# on a job; --uprobes malloc is measured on a shorter run (default 10000 iterations)
# against a plain run of the same length.
# Needs root.  Prints one line per mode with the median and the ratio to plain,
# and for attached modes what unwinding a sample's stack cost the recorder
# (the trace's unwound_stacks and unwind_ns meta).
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(tidemark, command, attach_args, outdir):
    target = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if target.stdout.readline() != b'waiting\n':
        sys.exit('bench-attach: %s did not start' % command[0])
    attach = None
    if attach_args is not None:
        r, w = os.pipe()
        trace = os.path.join(outdir, 'bench.tide')
        attach = subprocess.Popen(
            [tidemark, 'attach', '-p', str(target.pid), '-o', trace, '--force', '--quiet',
             '--ready-fd', str(w)] + attach_args, pass_fds=(w,))
        os.close(w)
        with os.fdopen(r) as ready:
            if ready.readline().strip() != 'attached':
                sys.exit('bench-attach: tidemark attach did not start')
    start = time.monotonic()
    target.stdin.write(b'go\n')
    target.stdin.close()
    out = target.stdout.read()
    # Reaped here rather than by Popen, for its CPU time.
    _, status, usage = os.wait4(target.pid, 0)
    elapsed = time.monotonic() - start
    target.returncode = os.waitstatus_to_exitcode(status)
    if attach is not None and attach.wait() != 0:
        sys.exit('bench-attach: tidemark attach failed')
    if target.returncode != 0:
        sys.exit('bench-attach: %s failed' % command[0])
    unwind = read_unwind_cost(trace) if attach is not None else (0, 0)
    return elapsed, usage.ru_utime + usage.ru_stime, out, unwind


def read_unwind_cost(trace):
    """(stacks unwound, nanoseconds spent) of one attached run."""
    db = sqlite3.connect(trace)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN "
                               "('unwound_stacks', 'unwind_ns')"))
    finally:
        db.close()
    return int(meta.get('unwound_stacks', 0)), int(meta.get('unwind_ns', 0))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__ if __doc__ else 'usage: bench-attach.py TIDEMARK ALLOC_STORM')
    tidemark, storm = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[sys.argv.index('--runs') + 1]) if '--runs' in sys.argv else 5
    iterations = (int(sys.argv[sys.argv.index('--iterations') + 1])
                  if '--iterations' in sys.argv else 10000000)
    if os.geteuid() != 0:
        print('bench-attach: SKIP: attaching needs root')
        return 77
    malloc_iterations = (int(sys.argv[sys.argv.index('--malloc-iterations') + 1])
                         if '--malloc-iterations' in sys.argv else 10000)
    def storm_command(n):
        return [storm, '--wait', '--iterations', str(n)]

    # (label, target command, attach options or None for plain, the plain label it compares to)
    modes = [('plain', storm_command(iterations), None, 'plain'),
             ('attach', storm_command(iterations), [], 'plain'),
             ('plain (short)', storm_command(malloc_iterations), None, 'plain (short)'),
             ('attach --uprobes malloc', storm_command(malloc_iterations),
              ['--uprobes', 'malloc'], 'plain (short)')]
    if '--torch' in sys.argv and subprocess.run(
            ['/usr/bin/python3', '-c', 'import torch'], stderr=subprocess.DEVNULL).returncode != 0:
        print('bench-attach: /usr/bin/python3 cannot import torch: no --torch runs')
    elif '--torch' in sys.argv:
        steps = (sys.argv[sys.argv.index('--torch-steps') + 1]
                 if '--torch-steps' in sys.argv else '300')
        train = ['/usr/bin/python3', sys.argv[sys.argv.index('--torch') + 1], steps, '--wait']
        # Steps by time leave out the optimizer-step uprobe: the pair
        # says what that uprobe costs.
        modes += [('plain torch', train, None, 'plain torch'),
                  ('attach torch', train, [], 'plain torch'),
                  ('attach torch, timed steps', train, ['--step-interval', '1000'],
                   'plain torch')]
    times = {m[0]: [] for m in modes}
    cpu = {m[0]: [] for m in modes}
    unwinds = {m[0]: [0, 0] for m in modes}
    outputs = {}
    with tempfile.TemporaryDirectory(prefix='tide-bench-attach-') as outdir:
        for _ in range(runs):
            for label, command, args, _base in modes:
                elapsed, cpu_s, out, (n_unwound, unwind_ns) = run_once(
                    tidemark, command, args, outdir)
                times[label].append(elapsed)
                cpu[label].append(cpu_s)
                unwinds[label][0] += n_unwound
                unwinds[label][1] += unwind_ns
                # The training loop prints its own time: only its loss counts.
                results = [line for line in out.splitlines()
                           if not line.startswith((b'loop ', b'cpu '))]
                results += [line.split(b', ')[1] for line in out.splitlines()
                            if line.startswith(b'loop ')]
                outputs.setdefault(' '.join(command), set()).add(b'\n'.join(results))
    if any(len(o) != 1 for o in outputs.values()):
        sys.exit('bench-attach: a target printed different results when attached')
    # Wall time is the figure; the target's own CPU time (user + system,
    # BPF programs included) says how much of a change is the target's
    # rather than other load on the machine.
    for label, command, _args, base in modes:
        median = statistics.median(times[label])
        cpu_median = statistics.median(cpu[label])
        print('bench-attach: %-26s median %9.1f ms  %7.3fx plain  cpu %7.3fx  (%d runs, %s)'
              % (label, median * 1000, median / statistics.median(times[base]),
                 cpu_median / statistics.median(cpu[base]), runs,
                 ' '.join(os.path.basename(a) for a in command[1:])))
    for label, _n, args, _base in modes:
        n_unwound, unwind_ns = unwinds[label]
        if args is not None and n_unwound > 0:
            print('bench-attach: %-26s %d stacks unwound, %.1f us each in the recorder'
                  % (label, n_unwound, unwind_ns / n_unwound / 1000))
    return 0


if __name__ == '__main__':
    sys.exit(main())
