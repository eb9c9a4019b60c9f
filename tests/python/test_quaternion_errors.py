#!/usr/bin/python3
"""scripts/quaternion_errors.py (the error element of each Q8 prediction) against an independent
computation.

    /usr/bin/python3 test_quaternion_errors.py --srbench build/harness/srbench --script scripts/quaternion_errors.py

A short suite (quaternion with a start token, a 1-layer transformer trained 60 steps at length 12,
so that it is right at the first positions and errs later, 2 seeds, save_checkpoint) is swept; the
script is run on its run files in csv. The test draws the same examples with `srbench sample
--format jsonl` (the eval stream under the runs' data seed), takes the predictions from its own
`srbench eval --failures`, multiplies quaternions as 4-vectors (Hamilton's product, not the
script's table), and checks every csv row: the predictions counted, each of the eight shares of
the error element target⁻¹·prediction and the four shares modulo a subgroup, per run then the mean
over runs and its bootstrap interval (the report's, srbench.analysis.bootstrap). Some band must
have errors and some element other than ±1 must be non-zero, so that a script that counts every
prediction right, or mixes up the sign, fails; the order target⁻¹·prediction (against
prediction·target⁻¹) is checked by a row of a hand-worked product. A run of another task is refused
with exit 2. Needs numpy, pandas, h5py; fails, never skips.
"""
import argparse
import io
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd

from checks import check, finish
from parity_report import eval_examples, eval_failures, run, sweep_run_files
from srbench.analysis import bootstrap

SUITE = """name: q8err
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 40, position: learned}
  train: {steps: 60, batch: 16, lr: 3e-3, warmup: 5, eval_every: 30, save_checkpoint: true, length: 12, data_seed: 3}
  eval: {lengths: [12], examples: 16, val_examples: 16}
tasks:
  - task: quaternion
    name: Q8
    params: {start_token: true}
models:
  - name: m
"""
OTHER = SUITE.replace("name: q8err", "name: parityerr").replace("task: quaternion", "task: parity").replace(
    "name: Q8", "name: C2")
ELEMENTS = ["+1", "-1", "+i", "-i", "+j", "-j", "+k", "-k"]
LENGTH, EXAMPLES, BANDS = 12, 150, [1, 4, 8]
# quaternions as (w, x, y, z)
VEC = {"+1": (1, 0, 0, 0), "+i": (0, 1, 0, 0), "+j": (0, 0, 1, 0), "+k": (0, 0, 0, 1)}
VEC |= {"-" + n[1]: tuple(-c for c in v) for n, v in list(VEC.items())}


def hamilton(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def name_of(v):
    return next(n for n, u in VEC.items() if tuple(u) == tuple(v))


def error(target, pred):
    """target⁻¹ · pred: the inverse of a unit quaternion is its conjugate."""
    w, x, y, z = VEC[target]
    return name_of(hamilton((w, -x, -y, -z), VEC[pred]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    # the hand-worked order: target i, prediction j: i⁻¹·j = −i·j = −k (j·i⁻¹ would be +k)
    check(error("+i", "+j") == "-k", f"the test's own product: i^-1 j = {error('+i', '+j')}, expected -k")
    with tempfile.TemporaryDirectory() as tmp:
        files = sweep_run_files(a.srbench, SUITE, os.path.join(tmp, "q8"))
        check(len(files) == 2, f"{len(files)} run files, expected 2")
        out = run([sys.executable, a.script] + files + ["--length", str(LENGTH), "--examples", str(EXAMPLES),
                                                        "--positions", ",".join(map(str, BANDS)), "--format", "csv",
                                                        "--srbench", a.srbench])
        table = pd.read_csv(io.StringIO(out), keep_default_na=False)
        examples = eval_examples(a.srbench, "quaternion", LENGTH, EXAMPLES, 3, ["--set", "start_token=true"])
        per_run = []  # counts[band][element] of each run
        for path in files:
            preds = eval_failures(a.srbench, path, "quaternion", LENGTH, EXAMPLES, 3, ["--set", "start_token=true"], tmp)
            counts = np.zeros((len(BANDS), 8), int)
            for i, ex in enumerate(examples):
                scored = [t for t, y in enumerate(ex["targets"]) if y is not None]
                for pos, t in enumerate(scored, start=1):
                    band = max(b for b in range(len(BANDS)) if BANDS[b] <= pos) if pos >= BANDS[0] else -1
                    if band < 0:
                        continue
                    got = preds[i][t] if i in preds else ex["targets"][t]
                    counts[band, ELEMENTS.index(error(ex["targets"][t], got))] += 1
            per_run.append(counts)
        check(len(table) == len(BANDS), f"{len(table)} csv rows, expected one per band ({len(BANDS)})")
        wrong_somewhere = right_somewhere = False
        for b, row in table.reset_index(drop=True).iterrows():
            totals = [c[b].sum() for c in per_run]
            check(int(row["predictions"]) == sum(totals), f"band {b}: {row['predictions']} predictions, expected {sum(totals)}")
            check(int(row["runs"]) == 2, f"band {b}: {row['runs']} runs, expected 2")
            groups = {n: [n] for n in ELEMENTS} | {"mod centre": ["+1", "-1"], "mod <i>": ["+1", "-1", "+i", "-i"],
                                                   "mod <j>": ["+1", "-1", "+j", "-j"],
                                                   "mod <k>": ["+1", "-1", "+k", "-k"]}
            for col, members in groups.items():
                shares = [c[b, [ELEMENTS.index(m) for m in members]].sum() / t for c, t in zip(per_run, totals)]
                lo, hi = bootstrap(shares)
                check(abs(float(row[col]) - np.mean(shares)) <= 5e-5,
                      f"band {b} {col}: {row[col]}, expected {np.mean(shares):.4f}")
                check(abs(float(row[col + " lo"]) - lo) <= 5e-5 and abs(float(row[col + " hi"]) - hi) <= 5e-5,
                      f"band {b} {col}: interval [{row[col + ' lo']}, {row[col + ' hi']}], expected [{lo:.4f}, {hi:.4f}]")
            right = sum(c[b, 0] for c in per_run)
            wrong_somewhere |= right < sum(totals)
            right_somewhere |= right > 0
            check(float(row["+1"]) < 1 or b == 0, f"band {b}: every prediction right; the suite should err beyond the first")
        check(wrong_somewhere and right_somewhere, "the runs should be right at some predictions and wrong at others")
        check(any(c[:, 2:].sum() > 0 for c in per_run), "no error element beyond ±1: the case cannot tell a sign mix-up")
        # another task: refused, exit 2, naming the task
        others = sweep_run_files(a.srbench, OTHER, os.path.join(tmp, "other"))
        p = subprocess.run([sys.executable, a.script, others[0], "--length", str(LENGTH), "--srbench", a.srbench],
                           capture_output=True, text=True)
        check(p.returncode == 2 and "parity" in p.stderr, f"a parity run: exit {p.returncode}, '{p.stderr.strip()}'")
    return finish("quaternion_errors.py's shares and intervals equal an independent count of target^-1 * prediction")


if __name__ == "__main__":
    sys.exit(main())
