# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A leak inside a package: leakpkg (which the test installs into a
# temporary site-packages on PYTHONPATH) fills a prefetch cache on its own
# thread, 64000 bytes a step, so that no frame of this script is on the
# stack that made them: the headline is the package's line.
#   package-leak.py STEPS
import sys

import leakpkg.cache
import tidemark


def main():
    steps = int(sys.argv[1])
    prefetcher = leakpkg.cache.Prefetcher()
    for _ in range(steps):
        prefetcher.fetch()
        tidemark.step()
    prefetcher.stop()
    print("done", steps)


main()
