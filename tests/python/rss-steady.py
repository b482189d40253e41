# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A plain steady leak: each of 25 steps of about 60 ms keeps a bytearray of
# 20 MiB whose pages it touched, and nothing else grows.  Its private
# memory grows by 20 MiB a step, all of it heap.  A step waits after its
# marker, not before it, so that what the recorder reads at the step end
# (it reads as it finds the marker, while the program goes on) is the step
# end's, on a loaded machine too.
#   rss-steady.py
import time

import tidemark

MIB = 1 << 20
STEPS = 25


def main():
    kept = []
    for _ in range(STEPS):
        block = bytearray(20 * MIB)
        for offset in range(0, len(block), 4096):
            block[offset] = 1
        kept.append(block)
        tidemark.step()
        time.sleep(0.04)
    print("kept", len(kept))


main()
