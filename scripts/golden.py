#!/usr/bin/env python3
"""Golden results: every number of a suite file's runs as exact hex floats, written once and
compared with a fresh sweep's (docs/harness.md, "The same numbers on every machine").

    /usr/bin/python3 scripts/golden.py write results/cross-isa.h5 tests/golden/cross-isa.txt
    /usr/bin/python3 scripts/golden.py check results/cross-isa.h5 tests/golden/cross-isa.txt

One line per attribute or dataset of each run group (runs in run-id order, paths sorted):
`<run id>/<path> = <values>`, floats as exact hex (float.hex(), float32 widened exactly), integers
and text as they are. Left out: what is not a number of the run — the timings wall_s,
tokens_per_s and eval_s, the `build` that ran it — and the suite file's root. `check` exits 0
when every line equals the golden file's, 1 naming the first differences (with decimal values),
2 on bad input.
"""
import argparse
import sys

import h5py
import numpy as np

from compare_h5 import DEFAULT_IGNORE

IGNORE = set(DEFAULT_IGNORE)  # the timings, the root's `created` and the run's `build`: not numbers of the run


def text_of(v):
    a = np.asarray(v)
    if a.dtype.kind == "f":
        return " ".join(float(x).hex() for x in a.ravel())
    if a.dtype.kind in "iub":
        return " ".join(str(int(x)) for x in a.ravel())
    if a.dtype.names:
        return " | ".join(f"{n}: {text_of(a[n])}" for n in a.dtype.names)
    items = [x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel().tolist()]
    return " ".join(repr(x) for x in items)


def lines_of(path):
    out = []
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        print(f"golden.py: {path}: not a readable HDF5 file ({e})", file=sys.stderr)
        sys.exit(2)
    with f:
        if "runs" not in f:
            print(f"golden.py: {path}: no /runs group", file=sys.stderr)
            sys.exit(2)

        def walk(rid, where, g):
            for name in sorted(g.attrs):
                if name not in IGNORE:
                    out.append(f"{rid}{where}@{name} = {text_of(g.attrs[name])}")
            for name in sorted(g):
                if name in IGNORE:
                    continue
                x = g[name]
                if isinstance(x, h5py.Group):
                    walk(rid, f"{where}/{name}", x)
                else:
                    out.append(f"{rid}{where}/{name} = {text_of(x[()])}")

        for rid in sorted(f["runs"]):
            walk(rid, "", f["runs"][rid])
    return out


def decimal(line):
    """The line with its hex floats as decimals, for a reader."""
    def conv(tok):
        try:
            return repr(float.fromhex(tok)) if "0x" in tok else tok
        except ValueError:
            return tok
    head, _, vals = line.partition(" = ")
    return head + " = " + " ".join(conv(t) for t in vals.split(" ")[:8]) + (" ..." if vals.count(" ") >= 8 else "")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["write", "check"])
    p.add_argument("suite_file")
    p.add_argument("golden")
    a = p.parse_args()
    got = lines_of(a.suite_file)
    if a.mode == "write":
        with open(a.golden, "w") as f:
            f.write("\n".join(got) + "\n")
        print(f"golden.py: wrote {len(got)} lines to {a.golden}")
        return 0
    try:
        want = open(a.golden).read().splitlines()
    except OSError as e:
        print(f"golden.py: {a.golden}: cannot read ({e.strerror})", file=sys.stderr)
        return 2
    wanted, have = {l.partition(" = ")[0]: l for l in want}, {l.partition(" = ")[0]: l for l in got}
    bad = [k for k in wanted if k not in have or have[k] != wanted[k]] + [k for k in have if k not in wanted]
    if not bad:
        print(f"golden.py: {a.suite_file} equals {a.golden}: {len(want)} lines, "
              f"{sum(l.count('0x') for l in want)} floats, bit for bit")
        return 0
    for k in bad[:20]:
        print(f"  golden: {decimal(wanted[k]) if k in wanted else '(absent)'}")
        print(f"  fresh:  {decimal(have[k]) if k in have else '(absent)'}")
    print(f"golden.py: FAIL: {len(bad)} of {len(want)} lines differ from {a.golden} (the first 20 above)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
