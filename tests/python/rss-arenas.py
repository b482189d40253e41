# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# glibc's arenas holding freed memory: in each of five steps two more
# threads each write 256 blocks of 64 KiB (under glibc's mmap threshold, so
# in the thread's own arena), keep one block above them and free the rest,
# then wait, alive, so that no later thread takes their arena over.  Each
# step leaves 32 MiB more that glibc holds free.
#   rss-arenas.py
import threading

import tidemark

BLOCK = 64 * 1024
BLOCKS = 256
STEPS = 5
THREADS_PER_STEP = 2

done = threading.Event()
kept = []


def churn(ready):
    blocks = [bytearray(BLOCK) for _ in range(BLOCKS)]
    top = bytearray(BLOCK)
    del blocks
    ready.release()
    done.wait()
    kept.append(top)


def main():
    threads = []
    for step in range(STEPS):
        ready = threading.Semaphore(0)
        for _ in range(THREADS_PER_STEP):
            t = threading.Thread(target=churn, args=(ready,))
            t.start()
            threads.append(t)
        for _ in range(THREADS_PER_STEP):
            ready.acquire()
        tidemark.step(f"threads {len(threads)}")
    done.set()
    for t in threads:
        t.join()
    print(len(kept))


main()
