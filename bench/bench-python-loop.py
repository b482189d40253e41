# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A Python-heavy loop, no torch: dicts, lists, tuples and strings made and
# dropped by the million, a few kept, a step every ROUNDS iterations.
#   bench-python-loop.py [STEPS]
import sys

try:
    import tidemark
    step = tidemark.step
except ImportError:
    def step():
        pass

ROUNDS = 50000


def one_round(i, kept):
    record = {"id": i, "name": "item-%d" % i, "values": [i, i + 1, i + 2]}
    pair = (i, record["name"])
    words = [w.upper() for w in ("a", "bb", "ccc")]
    total = sum(record["values"]) + len(words) + len(pair[1])
    if i % 64 == 0:
        kept.append(record)
    return total


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    kept = []
    total = 0
    for s in range(steps):
        for i in range(s * ROUNDS, (s + 1) * ROUNDS):
            total += one_round(i, kept)
        step()
    print("done", steps, len(kept), total)


if __name__ == "__main__":
    main()
