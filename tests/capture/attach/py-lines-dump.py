# Prints, for every code object compiled from each file given: the
# CPython version, its first line, its line table in hex (co_lnotab before
# 3.10, co_linetable from it) and the line of each code unit as that
# interpreter says (0: none): co_positions from 3.11, co_lines in 3.10,
# dis.findlinestarts before.  py-lines.txt is its output under pyenv's 3.8
# to 3.13, for py-lines-gaps.py, attach-py-leak.py and each version's
# json/decoder.py:
#
#   for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
#     python$v py-lines-dump.py py-lines-gaps.py attach-py-leak.py \
#       $(python$v -c 'import json.decoder; print(json.decoder.__file__)')
#   done > py-lines.txt
import dis, sys

def walk(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, 'co_code'):
            yield from walk(c)

def lines_of(co):
    v = sys.version_info[:2]
    if v >= (3, 11):
        return co.co_linetable, [p[0] or 0 for p in co.co_positions()]
    n = len(co.co_code) // 2
    if v == (3, 10):
        out = [0] * n
        for start, end, line in co.co_lines():
            for o in range(start, end, 2):
                out[o // 2] = line or 0
        return co.co_linetable, out
    starts = list(dis.findlinestarts(co))
    out = []
    for u in range(n):
        line = co.co_firstlineno
        for addr, l in starts:
            if addr <= 2 * u:
                line = l
        out.append(line)
    return co.co_lnotab, out

version = '%d.%d' % sys.version_info[:2]
for path in sys.argv[1:]:
    for co in walk(compile(open(path).read(), path, 'exec')):
        table, lines = lines_of(co)
        print(version, co.co_firstlineno, table.hex() or '-', ','.join(map(str, lines)))
