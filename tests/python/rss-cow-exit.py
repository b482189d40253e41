# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# A forked child that copies on write and is gone 50 ms later: the parent
# keeps a bytearray of 96 MiB whose pages it touched, forks, and the child
# writes to the first 40 MiB of them, waits 50 ms and leaves with
# os._exit, as a DataLoader worker does.  Its copy-on-write at its end is
# those 40 MiB, with what the interpreter writes of its own (reference
# counts of the parent's objects).
#   rss-cow-exit.py
import os
import time

MIB = 1 << 20
COPIED = 40 * MIB


def main():
    block = bytearray(96 * MIB)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    pid = os.fork()
    if pid == 0:
        for offset in range(0, COPIED, 4096):
            block[offset] = 2
        time.sleep(0.05)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print("copied", COPIED)
    print("status", status)


main()
