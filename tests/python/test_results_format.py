#!/usr/bin/python3
"""docs/results-format.md against the files srbench writes.

results_fixture writes a 12-run suite's run files (one failed, one diverged, one with a
checkpoint); `srbench merge` joins them. This script (1) runs the page's plain-h5py reader on the
suite file and a run file and compares every value with srbench.read_results; (2) checks that the
reader verifies the checksum (a flipped byte is refused); (3) walks both files and checks that
every group, dataset and attribute they hold is listed on the page, each dataset with its type.

  /usr/bin/python3 test_results_format.py --srbench build/harness/srbench --fixture build/tests/results_fixture

Exit 0 when everything holds; 1 with a list of failures otherwise (it never skips).
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

import srbench
from checks import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "results-format.md")


def doc_reader(text):
    """The page's reader: the python block after its heading, executed."""
    section = text[text.index("## A reader in plain h5py"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {}
    exec(compile(code, DOC + " (reader)", "exec"), namespace)
    return namespace


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return a == b


def check_reader(reader, path):
    """The reader's values against srbench.read_results (itself tested against the C++ writer)."""
    got = reader["read_file"](path)
    want = srbench.read_results(path)
    check(got["root"]["format_version"] == 1 and got["root"]["suite"] == want.suite_yaml
          and got["root"]["srbench_commit"] == want.srbench_commit, f"{path}: root attributes {got['root']}")
    check([r["run_id"] for r in got["runs"]] == list(want.summary.run_id), f"{path}: run order")
    compared = 0
    for run in got["runs"]:
        row = want.summary[want.summary.run_id == run["run_id"]].iloc[0]
        for k in ("task", "entry", "model", "grid", "status", "seed", "id_acc", "ood_length_acc", "shift_acc",
                  "shortcut_gap", "steps_to_target", "final_train_loss", "fitted", "gen_length"):
            check(same(run[k], row[k].item() if isinstance(row[k], np.generic) else row[k]),
                  f"{run['run_id']} {k}: reader {run[k]!r}, read_results {row[k]!r}")
            compared += 1
        ev = want.evals[want.evals.run_id == run["run_id"]]
        check(len(ev) == len(run["eval"]), f"{run['run_id']}: {len(run['eval'])} eval rows, read_results {len(ev)}")
        for mine, (_, theirs) in zip(run["eval"], ev.iterrows()):
            for k in ("length", "condition", "loss", "token_acc", "seq_acc", "seen_frac", "input_space"):
                check(same(mine[k], theirs[k].item() if isinstance(theirs[k], np.generic) else theirs[k]),
                      f"{run['run_id']} eval {k}: reader {mine[k]!r}, read_results {theirs[k]!r}")
                compared += 1
        cu = want.curves[want.curves.run_id == run["run_id"]]
        check(run["curve"].get("step", []) == list(cu.step), f"{run['run_id']}: curve steps")
    return compared


def normalise(path):
    """An object's path as the page writes it: /runs/<run_id>/..., <param name>, <spline name>, layer<l>."""
    p = "/" + path
    p = re.sub(r"^/runs/[0-9a-f]{12}", "/runs/<run_id>", p)
    p = re.sub(r"/checkpoint/params/.+$", "/checkpoint/params/<param name>", p)
    p = re.sub(r"^(/runs/<run_id>/splines)/.+$", r"\1/<spline name>", p)
    p = re.sub(r"/routers/layer\d+$", "/routers/layer<l>", p)
    return p


def type_word(obj):
    if isinstance(obj, h5py.Group):
        return "group"
    if obj.dtype.names:
        return "compound"
    if h5py.check_string_dtype(obj.dtype) is not None:
        return "string"
    return str(obj.dtype)


def check_listed(doc, path):
    """Every object and attribute of the file on the page; datasets with their type in their row."""
    rows = {}
    for line in doc.splitlines():
        m = re.match(r"\| `(/[^`]*)` \| ([^|]*) \|", line)
        if m:
            rows[m.group(1)] = m.group(2)
    seen = set()
    attrs = set()

    def visit(name, obj):
        p = normalise(name)
        attrs.update(obj.attrs.keys())
        if p in seen:
            return
        seen.add(p)
        if not check(p in rows, f"{path}: {p} is not listed in docs/results-format.md"):
            return
        check(type_word(obj) in rows[p], f"{p}: the page says '{rows[p].strip()}', the file has {type_word(obj)}")

    with h5py.File(path, "r") as f:
        attrs.update(f.attrs.keys())
        f.visititems(visit)
    for a in sorted(attrs):
        check(f"`{a}`" in doc, f"{path}: attribute {a} is not listed in docs/results-format.md")
    return len(seen), len(attrs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--fixture", required=True)
    a = ap.parse_args()
    with open(DOC) as f:
        doc = f.read()
    reader = doc_reader(doc)
    tmp = tempfile.mkdtemp(prefix="srbench-format-")
    try:
        fx = subprocess.run([a.fixture, tmp], capture_output=True, text=True)
        if not check(fx.returncode == 0, f"results_fixture exit {fx.returncode}: {fx.stderr}"):
            return finish("")
        suite_file = os.path.join(tmp, "mini.h5")
        m = subprocess.run([a.srbench, "merge", os.path.join(tmp, "mini"), "--out", suite_file],
                           capture_output=True, text=True)
        if not check(m.returncode == 0, f"merge exit {m.returncode}: {m.stderr}"):
            return finish("")
        checkpoint = next(l.split()[1] for l in fx.stdout.splitlines() if l.startswith("checkpoint "))
        run_file = os.path.join(tmp, "mini", "runs", checkpoint + ".h5")
        compared = 0
        for path in (suite_file, run_file):
            check(reader["check_checksum"](path) is True, f"{path}: the reader does not verify its checksum")
            compared += check_reader(reader, path)
        # a flipped byte after the user block: the reader refuses the file
        damaged = os.path.join(tmp, "damaged.h5")
        shutil.copy(run_file, damaged)
        with open(damaged, "r+b") as f:
            f.seek(os.path.getsize(damaged) - 100)
            b = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([b[0] ^ 0x01]))
        check(reader["check_checksum"](damaged) is False, "a flipped byte passes the reader's checksum")
        try:
            reader["read_file"](damaged)
            check(False, "the reader read a damaged file")
        except ValueError as e:
            check("damaged" in str(e), f"the reader's error: {e}")
        objects = [check_listed(doc, p) for p in (suite_file, run_file)]
        check(compared > 500 and objects[0][0] > 30, f"compared {compared} values, {objects} objects/attributes")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish(f"the page's reader equals read_results on {compared} values; every object of a suite file "
                  f"({objects[0][0]} paths, {objects[0][1]} attributes) and a run file is listed")


if __name__ == "__main__":
    sys.exit(main())
