# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 The Tidemark authors
#
# Python frames of allocations on the main thread and on a second one, in
# functions whose names are not ASCII (their str objects are stored one,
# two and four bytes a character), and from two lines of one function in
# turn (each thread keeps the lines it has read).  Prints what sys.getprofile() says on
# each thread: the frames must not cost the program a profile function.
import sys
import threading

keep = []


def größe(n):
    return [{"k": i} for i in range(n)]  # größe makes


class Ωmega:
    def make(self, n):
        return [[i] for i in range(n)]  # make makes


def 𠀀(n):
    return [(i, i) for i in range(n)]  # 𠀀 makes


def alternate(n):
    out = []
    for i in range(n):
        out.append([i])  # alternate lists
        out.append({i})  # alternate sets
    return out


def worker(seen):
    seen.append(sys.getprofile())
    keep.append(Ωmega().make(20000))  # worker calls


def main():
    seen = []
    keep.append(größe(20000))  # main calls größe
    keep.append(𠀀(20000))  # main calls 𠀀
    keep.append(alternate(20000))  # main calls alternate
    t = threading.Thread(target=worker, args=(seen,))
    t.start()
    t.join()
    print("profile", sys.getprofile() is None, seen[0] is None)


main()
