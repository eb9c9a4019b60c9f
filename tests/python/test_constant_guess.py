#!/usr/bin/python3
"""scripts/constant_guess.py against a count by hand: parity_check's label is the parity of the
1s of its input, so the best constant guess is the larger share of even and odd inputs among
the evaluation examples, which the test reads back from the predictor's own batches and labels
itself; and the count of runs at it, on a suite file made here with h5py.

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_constant_guess.py --script scripts/constant_guess.py
"""
import argparse
import io
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import pandas as pd
import srbench
from checks import check, finish


SUITE = """name: cg
seeds: [0]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 200}
  train: {steps: 10, batch: 4, length: [1, 10]}
  eval: {lengths: [10, 31, 57], examples: 40, val_examples: 8}
tasks:
  - task: parity_check
models:
  - name: m
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="srbench-cg-") as tmp:
        path = os.path.join(tmp, "cg.yaml")
        with open(path, "w") as f:
            f.write(SUITE)
        # the evaluation examples, as the predictor sees them; labels by hand
        suite = srbench.load_suite(path)
        seen = {}

        def record(tokens):
            for row in np.asarray(tokens):
                blank = int(np.where(row == 2)[0][0])  # `_` ends the input
                seen.setdefault(blank, []).append(int(np.sum(row[:blank] == 1)) % 2)
            return np.zeros(np.asarray(tokens).shape, dtype=np.int32)

        suite.evaluate(record, entry="parity_check", seed=0, model="rec")
        check(sorted(seen) == [10, 31, 57] and all(len(v) == 40 for v in seen.values()),
              f"40 examples at each length: { {k: len(v) for k, v in seen.items()} }")
        odd = {n: float(np.mean(v)) for n, v in seen.items()}
        want_ood = max(np.mean([1 - odd[31], 1 - odd[57]]), np.mean([odd[31], odd[57]]))
        token = "c0" if np.mean([1 - odd[31], 1 - odd[57]]) >= np.mean([odd[31], odd[57]]) else "c1"
        want_id = 1 - odd[10] if token == "c0" else odd[10]

        # a suite file: two runs exactly at the constant guess, one above it
        res_path = os.path.join(tmp, "cg.h5")
        with h5py.File(res_path, "w") as f:
            for i, acc in enumerate([want_ood, want_ood + 1e-6, want_ood + 0.1]):
                g = f.create_group(f"runs/r{i}")
                for k, v in {"entry": "parity_check", "task": "parity_check", "model": "m", "grid": ""}.items():
                    g.attrs[k] = v
                g.attrs["ood_token_acc"] = acc
        r = subprocess.run([sys.executable, a.script, path, "--results", res_path, "--format", "csv"],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
        if r.returncode == 0:
            df = pd.read_csv(io.StringIO(r.stdout))
            check(len(df) == 1 and df["entry"][0] == "parity_check", f"one row: {r.stdout}")
            check(df["token"][0] == token, f"best token {df['token'][0]} vs {token}")
            check(abs(df["ood_token_acc"][0] - want_ood) < 1e-6, f"ood {df['ood_token_acc'][0]} vs {want_ood}")
            check(abs(df["id_token_acc"][0] - want_id) < 1e-6, f"id {df['id_token_acc'][0]} vs {want_id}")
            check(df["runs_at_it"][0] == 2 and df["runs"][0] == 3, f"runs at it: {r.stdout}")
            check(abs(df["max_run"][0] - (want_ood + 0.1)) < 1e-6, "max run")
        # bad input: named, exit 2
        for args, what in [([os.path.join(tmp, "none.yaml")], "no such file"),
                           ([path, "--tol", "-1"], "--tol must be >= 0"),
                           ([path, "--results", os.path.join(tmp, "none.h5")], "no such file")]:
            r = subprocess.run([sys.executable, a.script] + args, capture_output=True, text=True)
            check(r.returncode == 2 and what in r.stderr, f"{args}: exit {r.returncode}, {r.stderr!r}")
    return finish("constant_guess.py")


if __name__ == "__main__":
    sys.exit(main())
