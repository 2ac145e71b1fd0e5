#!/usr/bin/env python3
"""Instructions per call of selected functions, from a callgrind output file.

    valgrind --tool=callgrind --callgrind-out-file=cg.out BINARY ...
    benchmarks/callgrind_per_call.py cg.out 'Ours|Nghttp2'

For every function whose name matches the regular expression, prints the
inclusive instruction count (Ir) of all its calls divided by the number of
calls, from callgrind's call records. Benchmarks give each timed body a
noinline function of its own, so this is the cost of one iteration without the
harness. Run with LD_BIND_NOW=1 so lazy symbol binding is not counted.

Reads both forms of callgrind's names: compressed ("fn=(12) name" once, then
"fn=(12)"; the default) and plain ("fn=name", from --compress-strings=no).
"""

import collections
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, pattern = sys.argv[1], re.compile(sys.argv[2])
    names = {}  # Compressed names: "(id) name" the first time, then "(id)".
    calls = collections.Counter()
    inclusive = collections.Counter()
    callee = None
    pending = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"(c?fn)=(?:\((\d+)\) ?)?(.*)$", line)
            if m:
                kind, ident, name = m.groups()
                if ident is not None:
                    if name:
                        names[ident] = name
                    name = names.get(ident, ident)
                if kind == "cfn":
                    callee = name
            elif line.startswith("calls="):
                pending = (callee, int(line[6:].split()[0]))
            elif pending and line[:1] and (line[0].isdigit() or line[0] in "+-*"):
                fields = line.split()
                calls[pending[0]] += pending[1]
                inclusive[pending[0]] += int(fields[1]) if len(fields) > 1 else 0
                pending = None
    for name in sorted(calls):
        if pattern.search(name):
            print(f"{inclusive[name] / calls[name]:10.0f} Ir/call {calls[name]:8d} calls  {name}")


if __name__ == "__main__":
    main()
