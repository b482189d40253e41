#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# bench-attach: the cost of `tidemark attach` on alloc-storm (8 threads of
# malloc/free).  Each run starts `sh -c 'read go; exec alloc-storm ...'`,
# attaches to the shell (or not, for the plain runs), then lets it go and
# times it from "go" to its exit, so plain and attached runs are timed the
# same way.  Runs are interleaved; medians of --runs (default 5).
#   bench-attach.py TIDEMARK ALLOC_STORM [--runs N] [--iterations N] [--malloc-iterations N]
# --uprobes malloc is measured on a shorter run (default 10000 iterations)
# against a plain run of the same length.
# Needs root.  Prints one line per mode with the median and the ratio to plain.
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(tidemark, storm, iterations, attach_args, outdir):
    target = subprocess.Popen(
        ['sh', '-c', 'read go; exec "$0" --iterations "$1"', storm, str(iterations)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    attach = None
    if attach_args is not None:
        r, w = os.pipe()
        trace = os.path.join(outdir, 'bench.tide')
        attach = subprocess.Popen(
            [tidemark, 'attach', '-p', str(target.pid), '-o', trace, '--quiet',
             '--ready-fd', str(w)] + attach_args, pass_fds=(w,))
        os.close(w)
        with os.fdopen(r) as ready:
            if ready.readline().strip() != 'attached':
                sys.exit('bench-attach: tidemark attach did not start')
    start = time.monotonic()
    out, _ = target.communicate(b'go\n')
    elapsed = time.monotonic() - start
    if attach is not None and attach.wait() != 0:
        sys.exit('bench-attach: tidemark attach failed')
    if target.returncode != 0:
        sys.exit('bench-attach: alloc-storm failed')
    return elapsed, out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__ if __doc__ else 'usage: bench-attach.py TIDEMARK ALLOC_STORM')
    tidemark, storm = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[sys.argv.index('--runs') + 1]) if '--runs' in sys.argv else 5
    iterations = (int(sys.argv[sys.argv.index('--iterations') + 1])
                  if '--iterations' in sys.argv else 200000)
    if os.geteuid() != 0:
        print('bench-attach: SKIP: attaching needs root')
        return 77
    malloc_iterations = (int(sys.argv[sys.argv.index('--malloc-iterations') + 1])
                         if '--malloc-iterations' in sys.argv else 10000)
    # (label, iterations, attach options or None for plain, the plain label it compares to)
    modes = [('plain', iterations, None, 'plain'),
             ('attach', iterations, [], 'plain'),
             ('plain (short)', malloc_iterations, None, 'plain (short)'),
             ('attach --uprobes malloc', malloc_iterations, ['--uprobes', 'malloc'],
              'plain (short)')]
    times = {m[0]: [] for m in modes}
    outputs = {}
    with tempfile.TemporaryDirectory(prefix='tide-bench-attach-') as outdir:
        for _ in range(runs):
            for label, n, args, _base in modes:
                elapsed, out = run_once(tidemark, storm, n, args, outdir)
                times[label].append(elapsed)
                outputs.setdefault(n, set()).add(out)
    if any(len(o) != 1 for o in outputs.values()):
        sys.exit('bench-attach: alloc-storm printed different results when attached')
    for label, n, _args, base in modes:
        median = statistics.median(times[label])
        print('bench-attach: %-24s median %9.1f ms  %7.3fx plain  (%d runs, --iterations %d)'
              % (label, median * 1000, median / statistics.median(times[base]), runs, n))
    return 0


if __name__ == '__main__':
    sys.exit(main())
