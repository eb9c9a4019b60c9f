#!/usr/bin/python3
"""scripts/curve_drops.py on hand-made run files: each kind (held, recovered, lost, never reached,
reached at the last evaluation, no curve), the step and value of the lowest later evaluation (the
first of equal ones), the loss and gradient norm before and at it, the counts per file and over
files, --all, --target, a bad --target; and on a suite swept by srbench, that it reads the run
file's own layout (its curve's length and values).

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_curve_drops.py \
        --srbench build/harness/srbench --script scripts/curve_drops.py
"""
import argparse
import csv
import io
import os
import subprocess
import tempfile

import h5py
import numpy as np
from checks import check, finish


def write_run(f, rid, seed, val, curve=True):
    g = f.create_group(f"runs/{rid}")
    for k, v in (("entry", "parity"), ("task", "parity"), ("model", "lstm"), ("grid", "train.lr=1e-3")):
        g.attrs[k] = np.bytes_(v)
    g.attrs["seed"] = np.int64(seed)
    g.attrs["ood_token_acc"] = np.float64(0.5 + seed / 100)
    if curve:
        n = len(val)
        g.create_dataset("curve/step", data=np.arange(1, n + 1, dtype=np.int64) * 100)
        g.create_dataset("curve/val_acc", data=np.array(val, dtype=float))
        g.create_dataset("curve/train_loss", data=np.arange(n, dtype=float) / 10 + seed)   # seed + k/10
        g.create_dataset("curve/grad_norm", data=np.arange(n, dtype=float) + 100 * seed)  # 100·seed + k


def run(script, *args):
    out = subprocess.run(["/usr/bin/python3", script, *args], capture_output=True, text=True)
    rows = [r for r in csv.DictReader(io.StringIO("\n".join(
        l for l in out.stdout.splitlines() if not l.startswith("#"))))] if "--format" in args else []
    return out, {r["run_id"]: r for r in rows}, [l for l in out.stdout.splitlines() if l.startswith("#")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    one, two = os.path.join(d, "one.h5"), os.path.join(d, "two.h5")
    with h5py.File(one, "w") as f:
        write_run(f, "held", 0, [0.2, 0.99, 1.0, 0.995])
        write_run(f, "recovered", 1, [0.5, 1.0, 0.6, 1.0])
        write_run(f, "lost", 2, [1.0, 1.0, 0.3, 0.4])
        write_run(f, "never", 3, [0.1, 0.98])
        write_run(f, "last", 4, [0.1, 0.5, 0.99])
        write_run(f, "nocurve", 5, [], curve=False)
    with h5py.File(two, "w") as f:
        write_run(f, "ties", 6, [1.0, 0.5, 0.5, 0.7])

    out, rows, lines = run(a.script, one, two, "--format", "csv")
    check(out.returncode == 0, f"exit 0: {out.stderr}")
    check(set(rows) == {"recovered", "lost", "ties"}, f"rows for the runs that did not hold: {sorted(rows)}")
    r = rows.get("recovered", {})
    # reached at index 1 (step 200), lowest later 0.6 at index 2 (step 300), last 1.0; the
    # evaluation before the lowest is index 1: loss 1 + 0.1, grad norm 100 + 1; at it 1.2, 102
    check(r.get("kind") == "recovered" and r.get("reached_step") == "200" and float(r.get("lowest", 0)) == 0.6
          and r.get("lowest_step") == "300" and float(r.get("last", 0)) == 1.0, f"recovered: {r}")
    check(abs(float(r.get("loss_before", 0)) - 1.1) < 1e-12 and float(r.get("grad_norm_before", 0)) == 101
          and abs(float(r.get("loss_at_lowest", 0)) - 1.2) < 1e-12 and float(r.get("grad_norm_at_lowest", 0)) == 102,
          f"recovered: the loss and gradient norm before and at the lowest: {r}")
    r = rows.get("lost", {})
    check(r.get("kind") == "lost" and r.get("reached_step") == "100" and float(r.get("lowest", 0)) == 0.3
          and r.get("lowest_step") == "300" and float(r.get("last", 0)) == 0.4
          and float(r.get("ood_token_acc", 0)) == 0.52, f"lost: reached at 100, lowest 0.3 at 300, last 0.4: {r}")
    r = rows.get("ties", {})
    check(r.get("kind") == "lost" and r.get("lowest_step") == "200", f"ties: the first of the two lowest (200): {r}")
    check(f"# {one}: 6 runs, 4 reached val_acc >= 0.99: held 2, recovered 1, lost 1" in lines,
          f"the first file's line (held: 'held' and 'last'; 'never' and 'nocurve' not reached): {lines}")
    check(f"# {two}: 1 runs" not in " ".join(lines), f"no line for a file of one run: {lines}")
    check("# all 2 files: 7 runs, 5 reached val_acc >= 0.99: held 2, recovered 1, lost 2" in lines,
          f"the line over both files: {lines}")

    out, rows, lines = run(a.script, one, "--format", "csv", "--all")
    check(set(rows) == {"held", "recovered", "lost", "last"}, f"--all: the held runs too: {sorted(rows)}")
    r = rows.get("last", {})
    check(r.get("kind") == "held" and r.get("reached_step") == "300" and r.get("lowest_step") == "-1"
          and r.get("lowest") == "nan", f"reached at the last evaluation: held, no later one: {r}")
    check(all("all " not in l for l in lines), f"one file: no line over the files: {lines}")

    out, rows, lines = run(a.script, one, "--format", "csv", "--target", "0.995", "--all")
    r = rows.get("held", {})
    check(r.get("reached_step") == "300" and r.get("kind") == "held", f"--target 0.995 (inclusive): held from 300: {r}")
    check("last" not in rows and f"# {one}: 6 runs, 3 reached val_acc >= 0.995: held 1, recovered 1, lost 1" in lines,
          f"--target 0.995: 'last' (0.99) never reaches it: {sorted(rows)} {lines}")

    out, _, _ = run(a.script, one, "--target", "1.5")
    check(out.returncode != 0 and "--target must be in (0, 1], got 1.5" in out.stderr, f"bad --target: {out.stderr}")
    out, _, _ = run(a.script, os.path.join(d, "missing.h5"))
    check(out.returncode != 0 and "missing.h5: no such file" in out.stderr, f"a missing file: {out.stderr}")
    out, _, _ = run(a.script, one)
    check(out.returncode == 0 and "| recovered | parity | lstm | train.lr=1e-3 | 1 | recovered | 200 | 0.600 (300) | 1.000 |"
          in out.stdout, f"markdown row: {out.stdout}")

    # a suite swept by srbench: its run file's curve as the script reads it
    suite = os.path.join(d, "s.yaml")
    with open(suite, "w") as f:
        f.write("name: s\nseeds: [0]\ndefaults:\n  model: {layers: 1, d_model: 16, heads: 2, max_len: 16}\n"
                "  train: {steps: 40, batch: 8, lr: 3e-3, warmup: 2, eval_every: 10, length: [1, 6]}\n"
                "  eval: {lengths: [6], examples: 16, val_examples: 16}\ntasks:\n  - task: parity\n")
    s = subprocess.run([a.srbench, "sweep", suite, "--out", os.path.join(d, "s.h5"), "--jobs", "1"], capture_output=True,
                       text=True)
    if not check(s.returncode == 0, f"sweep: {s.stdout} {s.stderr}"):
        return finish("")
    out, rows, lines = run(a.script, os.path.join(d, "s.h5"), "--format", "csv", "--target", "1e-9", "--all")
    with h5py.File(os.path.join(d, "s.h5"), "r") as f:
        (rid, g), = f["runs"].items()
        steps, val = g["curve/step"][:], g["curve/val_acc"][:]
    check(list(steps) == [10, 20, 30, 40], f"the swept run's curve steps: {list(steps)}")
    r = rows.get(rid, {})
    # every value ≥ 1e-9 unless a validation accuracy is exactly 0: reached at the first one ≥ it
    first = int(np.flatnonzero(val >= 1e-9)[0]) if (val >= 1e-9).any() else None
    check(first is not None and r.get("reached_step") == str(int(steps[first])) and float(r.get("last")) == float(val[-1]),
          f"the swept run: reached at its first nonzero evaluation, its last value {val}: {r}")
    return finish("curve_drops.py: kinds, lowest, loss and gradient norm, counts, --all, --target, errors, a swept run")


if __name__ == "__main__":
    raise SystemExit(main())
