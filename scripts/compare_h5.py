#!/usr/bin/env python3
"""Compares two srbench results files (run, splines or suite files) value by value with h5py.

    /usr/bin/python3 scripts/compare_h5.py OLD.h5 NEW.h5 [--ignore NAME ...]

Every group, dataset and attribute of either file must exist in the other with the same values
(bit for bit: NaN equals NaN, nothing else is tolerated), except the names given by --ignore
(default: the timings wall_s, tokens_per_s and eval_s, the root's `created` and each run's `build`, which
names the binary that ran it), wherever they occur — as
attributes, datasets or compound fields. Compound tables (/summary) are compared field by field.
Prints each difference; exit 0 when the files agree, 1 when they differ.
"""
import argparse
import sys

import h5py
import numpy as np

DEFAULT_IGNORE = ["wall_s", "tokens_per_s", "eval_s", "created", "build"]


def same_values(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))
    if a.dtype.kind == "O" or b.dtype.kind == "O" or a.dtype.kind in "SU":
        return [x.decode() if isinstance(x, bytes) else x for x in a.ravel().tolist()] == \
               [x.decode() if isinstance(x, bytes) else x for x in b.ravel().tolist()]
    return bool(np.array_equal(a, b))


class Comparison:
    def __init__(self, ignore):
        self.ignore = set(ignore)
        self.differences = 0
        self.compared = 0

    def differ(self, where, what):
        print(f"{where}: {what}")
        self.differences += 1

    def attrs(self, where, a, b):
        for name in sorted(set(a.attrs) | set(b.attrs)):
            if name in self.ignore:
                continue
            if name not in a.attrs or name not in b.attrs:
                self.differ(where, f"attribute {name} only in {'the second' if name not in a.attrs else 'the first'} file")
                continue
            self.compared += 1
            if not same_values(a.attrs[name], b.attrs[name]):
                self.differ(where, f"attribute {name}: {a.attrs[name]!r} != {b.attrs[name]!r}")

    def dataset(self, where, a, b):
        if a.dtype.names or b.dtype.names:
            fields_a, fields_b = set(a.dtype.names or ()), set(b.dtype.names or ())
            if fields_a != fields_b:
                self.differ(where, f"fields {sorted(fields_a)} != {sorted(fields_b)}")
            va, vb = a[()], b[()]
            for f in sorted(fields_a & fields_b):
                if f in self.ignore:
                    continue
                self.compared += 1
                if not same_values(va[f], vb[f]):
                    self.differ(where, f"field {f} differs")
            return
        self.compared += 1
        if not same_values(a[()], b[()]):
            self.differ(where, "values differ")

    def group(self, where, a, b):
        self.attrs(where, a, b)
        for name in sorted(set(a) | set(b)):
            path = where.rstrip("/") + "/" + name
            if name in self.ignore:
                continue
            if name not in a or name not in b:
                self.differ(path, f"only in {'the second' if name not in a else 'the first'} file")
                continue
            x, y = a[name], b[name]
            if isinstance(x, h5py.Group) != isinstance(y, h5py.Group):
                self.differ(path, "a group in one file, a dataset in the other")
            elif isinstance(x, h5py.Group):
                self.group(path, x, y)
            else:
                self.attrs(path, x, y)
                self.dataset(path, x, y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--ignore", nargs="*", default=DEFAULT_IGNORE)
    args = ap.parse_args()
    c = Comparison(args.ignore)
    with h5py.File(args.first, "r") as a, h5py.File(args.second, "r") as b:
        c.group("/", a, b)
    print(f"{args.first} vs {args.second}: {c.compared} values compared, {c.differences} difference(s)"
          f" (ignored: {', '.join(sorted(c.ignore))})")
    return 1 if c.differences else 0


if __name__ == "__main__":
    sys.exit(main())
