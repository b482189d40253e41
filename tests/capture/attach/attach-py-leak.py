# What tests/capture/attach/test-attach.c attaches to under each CPython of pyenv:
# plain Python, no PyTorch.  A Block's forward calls step through map, a
# C function (so the frames are two evaluations of the interpreter), and
# step calls Store.grow, which keeps bytearrays of 1 MiB (each written
# through as it is made).  It waits for a line on stdin before it grows them, and
# after, so that the attach sees all of it.
import sys


class Store:
    def __init__(self):
        self.kept = []

    def grow(self, size):
        self.kept.append(bytearray(b'x') * size)  # LEAK-LINE


def step(store, size):
    store.grow(size)  # CALLER-LINE


class Block:
    def forward(self, store, size):
        list(map(step, [store], [size]))  # FORWARD-LINE


def main(blocks):
    block = Block()
    # Past the interpreter's warm-up (3.11+ specializes a call after it
    # has run a few times), every block is made on the same native path.
    for _ in range(100):
        block.forward(Store(), 1)
    store = Store()
    print('ready', flush=True)
    sys.stdin.readline()
    for _ in range(blocks):
        block.forward(store, 1 << 20)
    print('done', len(store.kept), flush=True)
    sys.stdin.readline()


main(int(sys.argv[1]))
