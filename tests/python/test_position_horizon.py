#!/usr/bin/python3
"""scripts/position_horizon.py on hand-made run files: the horizon of hand-worked position
accuracies (unscored NaN positions skipped, a first position below the threshold, a row without
a drop), the row chosen by length and condition, and the mean and interval over runs recomputed.

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_position_horizon.py --script scripts/position_horizon.py
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
from checks import check, finish

nan = float("nan")


def write_run(f, rid, entry, model, seed, rows):
    """rows: [(length, condition index, position accuracies)]; conditions id and a shift."""
    g = f.create_group(f"runs/{rid}")
    for k, v in (("entry", entry), ("task", entry), ("model", model), ("grid", "")):
        g.attrs[k] = np.bytes_(v)
    g.attrs["seed"] = np.int64(seed)
    width = max(len(r[2]) for r in rows)
    P = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        P[i, :len(r[2])] = r[2]
    g.create_dataset("eval/length", data=np.array([r[0] for r in rows], dtype=np.int64))
    g.create_dataset("eval/condition", data=np.array([r[1] for r in rows], dtype=np.int64))
    g.create_dataset("eval/conditions", data=np.array([b"id", b"p1=0.9"], dtype=object), dtype=h5py.string_dtype())
    g.create_dataset("eval/position_acc", data=P)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    path = os.path.join(d, "suite.h5")
    with h5py.File(path, "w") as f:
        # start token unscored (NaN), then 1.0 1.0 0.95 0.5 ...: horizon 3
        write_run(f, "a0", "parity", "alibi", 0, [(4, 0, [nan, 1.0, 1.0, 0.95, 0.5]),
                                                   (4, 1, [nan, 0.1, 0.1, 0.1, 0.1]),
                                                   (8, 0, [nan] + [1.0] * 8)])
        write_run(f, "a1", "parity", "alibi", 1, [(4, 0, [nan, 0.89, 1.0, 1.0, 1.0])])  # horizon 0
        write_run(f, "a2", "parity", "alibi", 2, [(4, 0, [nan, 1.0, 1.0, 1.0, 0.92])])  # horizon 4
        write_run(f, "l0", "parity", "lstm", 0, [(4, 0, [nan, 1.0, 0.2, 1.0, 1.0])])    # horizon 1
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--length", "4", "--format", "csv"],
                         capture_output=True, text=True)
    check(out.returncode == 0, f"exit 0: {out.stderr}")
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    r = rows.get("alibi")
    check(r is not None and r["n"] == "3" and r["min"] == "0" and r["max"] == "4" and r["scored"] == "4",
          f"alibi: 3 runs, horizons 3, 0, 4 (min 0, max 4), 4 scored positions: {r}")
    if r:
        check(abs(float(r["mean"]) - 7 / 3) < 1e-6, f"alibi mean horizon 7/3: {r['mean']}")
        v = np.array([3.0, 0.0, 4.0])
        rng = np.random.default_rng(0)
        means = v[rng.integers(0, 3, size=(10000, 3))].mean(axis=1)
        check(abs(float(r["ci_lo"]) - np.quantile(means, 0.025)) < 1e-6
              and abs(float(r["ci_hi"]) - np.quantile(means, 0.975)) < 1e-6, f"alibi interval: {r}")
    check(rows.get("lstm", {}).get("mean") == "1" and rows["lstm"]["ci_lo"] == "nan", "lstm: horizon 1, one run")
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--length", "4", "--threshold", "0.95", "--format", "csv",
                          "--models", "alibi"], capture_output=True, text=True)
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    check(set(rows) == {"alibi"} and abs(float(rows["alibi"]["mean"]) - 2) < 1e-9,
          f"--threshold 0.95, inclusive, --models alibi: horizons 3, 0, 3, mean 2: {rows}")
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--length", "8", "--format", "csv"],
                         capture_output=True, text=True)
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    check(set(rows) == {"alibi"} and rows["alibi"]["n"] == "1" and rows["alibi"]["mean"] == "8",
          f"length 8: only the run that has it, no drop: horizon = the 8 scored positions: {rows}")
    # a shift condition, and the error rate in blocks: a0's p1=0.9 row is 0.1 at every position
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--length", "4", "--condition", "p1=0.9", "--format",
                          "csv"], capture_output=True, text=True)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    check(len(rows) == 1 and rows[0]["model"] == "alibi" and rows[0]["mean"] == "0",
          f"--condition p1=0.9: only a0 has it, horizon 0: {rows}")
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--length", "4", "--blocks", "2", "--format", "csv"],
                         capture_output=True, text=True)
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(out.stdout))}
    # alibi blocks: a0 [0, 0.275], a1 [0.055, 0], a2 [0, 0.04]; lstm [0.4, 0]
    want = [np.mean([0.0, 0.055, 0.0]), np.mean([0.275, 0.0, 0.04])]
    got = [float(rows["alibi"]["error_block1"]), float(rows["alibi"]["error_block2"])] if "alibi" in rows else []
    check(len(got) == 2 and np.allclose(got, want, atol=1e-9), f"--blocks 2, alibi: {got} vs {want}")
    check("lstm" in rows and np.allclose([float(rows["lstm"]["error_block1"]), float(rows["lstm"]["error_block2"])],
                                         [0.4, 0.0]), f"--blocks 2, lstm: {rows.get('lstm')}")
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--length", "16"], capture_output=True, text=True)
    check(out.returncode == 2 and "length 16" in out.stderr, "no run at that length: an error naming it")
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--length", "4", "--blocks", "-1"],
                         capture_output=True, text=True)
    check(out.returncode == 2 and "--blocks" in out.stderr, "--blocks -1: refused, naming it")
    out = subprocess.run(["/usr/bin/python3", a.script, os.path.join(d, "nosuch.h5"), "--length", "4"],
                         capture_output=True, text=True)
    check(out.returncode == 2 and "no such file" in out.stderr, f"a missing file: exit 2 naming it: {out.stderr!r}")
    sys.exit(finish("position_horizon.py"))


if __name__ == "__main__":
    main()
