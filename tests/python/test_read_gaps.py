#!/usr/bin/python3
"""scripts/read_gaps.py (flip-flop errors by the distance from a read to its write) against an
independent computation.

    /usr/bin/python3 test_read_gaps.py --srbench build/harness/srbench --script scripts/read_gaps.py

A short suite (ffl and flipflop with a start token, a 1-layer transformer trained 40 steps so that
it errs at some reads and not at others, 2 seeds, save_checkpoint) is swept; the script is run on
its run files under a shift. The test draws the same examples with `srbench sample`, predicts with
the float64 PyTorch reference of model.md (tests/parity/reference.py) and finds each read's write
by scanning back from the read (ffl: pair by pair to the nearest `w`; flipflop: to the nearest
`w1`/`w2`, or to the start), then checks every csv row (position band × gap bin, the first band starting after position 1 so
that reads before it must be left out): reads and wrong reads exactly
(up to the reads where the reference's two best logits are within 1e-4, which float32 may order
otherwise), the mean error rate over runs and its bootstrap interval. Some bin must have wrong
reads and some right ones, so that a script counting all or none fails. With --by-write, every
row is checked again per kind of write, found by scanning back to the write before the read's
(change, repeat, first, none), with the stale errors (a prediction equal to the state before the
read's write); some row must hold a stale error and some a wrong read that is not stale. Bad
--bins are refused with exit 2. Needs torch, h5py, numpy, yaml, pandas; fails, never skips.
"""
import argparse
import io
import json
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import pandas as pd
import torch

import reference
from checks import check, finish
from parity_report import run, sweep_run_files
from srbench.analysis import bootstrap

SUITE = """name: gaps
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 80, position: alibi}
  train: {steps: 40, batch: 16, lr: 3e-3, warmup: 5, eval_every: 20, save_checkpoint: true, data_seed: 4}
  eval: {examples: 16, val_examples: 16}
tasks:
  - task: ffl
    params: {p_i: 0.6, start_token: true}
    train: {length: [4, 20]}
    eval: {lengths: [20]}
  - task: flipflop
    params: {start_token: true}
    train: {length: [1, 24]}
    eval: {lengths: [24]}
models:
  - name: alibi
"""
# task: (vocabulary in the task's order, then <s>; --set of the script; length; gap bins; position bands)
CASES = {
    "ffl": (["w", "r", "i", "0", "1", "<s>"], ["--set", "p_i=0.9"], 20, [1, 3, 6, 12], [2, 11]),
    "flipflop": (["r", "w1", "w2", "q0", "q1", "q2", "<s>"], ["--set", "p_write=0.2"], 24, [1, 2, 5, 10], [1, 13]),
}
EXAMPLES, MARGIN = 300, 1e-4


def brute_gaps(task, tokens):
    """{token index of a read: (its gap, its pair or input number, the kind of its write, the state
    before that write)}, found by scanning back from each read to its write and from there to the
    write before."""
    gaps = {}
    if task == "ffl":
        for t in range(1, len(tokens), 2):  # instructions sit at odd positions after <s>
            if tokens[t] != "r":
                continue
            back = t - 2
            while back >= 1 and tokens[back] != "w":
                back -= 2
            if back < 1:
                continue
            older = back - 2
            while older >= 1 and tokens[older] != "w":
                older -= 2
            before = tokens[older + 1] if older >= 1 else None
            kind = "first" if before is None else "repeat" if before == tokens[back + 1] else "change"
            gaps[t] = ((t - back) // 2, (t + 1) // 2, kind, before)
    else:
        for t in range(1, len(tokens)):
            if tokens[t].startswith("w"):
                continue
            back = t - 1
            while back >= 1 and not tokens[back].startswith("w"):
                back -= 1
            older = back - 1
            while older >= 1 and not tokens[older].startswith("w"):
                older -= 1
            if back == 0:  # the start token: no write precedes
                kind, before = "none", None
            else:
                before = "q" + tokens[older][1:] if older >= 1 else "q0"
                kind = "repeat" if before == "q" + tokens[back][1:] else "change"
            gaps[t] = (t - back, t, kind, before)
    return gaps


KINDS = ["change", "repeat", "first", "none"]


def expected(srbench, task, run_files, sets, length, data_seed, bins, bands):
    """Per run: reads, wrong, unsure and stale [band, bin, kind]."""
    names = CASES[task][0]
    ids = {s: i for i, s in enumerate(names)}
    out = run([srbench, "sample", task, "-n", str(length), "--count", str(EXAMPLES), "--stream", "eval", "--seed",
               str(data_seed), "--format", "jsonl", "--set", "start_token=true"] + sets)
    examples = [json.loads(s) for s in out.splitlines()]
    tokens = torch.tensor([[ids[t] for t in e["tokens"]] for e in examples])
    targets = torch.tensor([[ids[t] if t else -1 for t in e["targets"]] for e in examples])
    per_run = []
    for path in run_files:
        cfg, _, params = reference.load_checkpoint(path)
        with torch.no_grad():
            logits, _ = reference.forward(cfg, params, tokens, targets)
        top2 = logits.topk(2, dim=-1).values
        close = (top2[..., 0] - top2[..., 1]) < MARGIN
        pred = logits.argmax(-1)
        reads, wrong, unsure, stale = (np.zeros((len(bands), len(bins), len(KINDS)), int) for _ in range(4))
        for i, e in enumerate(examples):
            for t, (gap, pos, kind, before) in brute_gaps(task, e["tokens"]).items():
                if gap < bins[0] or pos < bands[0]:
                    continue
                b = max(m for m in range(len(bins)) if bins[m] <= gap)
                k = max(m for m in range(len(bands)) if bands[m] <= pos)
                c = KINDS.index(kind)
                reads[k, b, c] += 1
                wrong[k, b, c] += int(pred[i, t] != targets[i, t])
                unsure[k, b, c] += int(close[i, t])
                stale[k, b, c] += int(before is not None and pred[i, t] != targets[i, t] and pred[i, t] == ids[before])
        per_run.append((reads.sum(2), wrong.sum(2), unsure.sum(2), reads, wrong, unsure, stale))
    return per_run


def check_by_write(task, got, want, bins, bands):
    """--by-write's rows: one per (band, bin, kind) with reads, in KINDS order."""
    cells = [(k, b, c) for k in range(len(bands)) for b in range(len(bins)) for c in range(len(KINDS))
             if any(r[3][k, b, c] for r in want)]
    if not check(len(got) == len(cells), f"{task} --by-write: {len(got)} rows, want one per band, bin and kind "
                                         f"with reads ({len(cells)})"):
        return
    any_stale = any_fresh = False
    for (k, b, c), (_, row) in zip(cells, got.iterrows()):
        reads, wrong, unsure, stale = (sum(int(r[m][k, b, c]) for r in want) for m in (3, 4, 5, 6))
        any_stale |= stale > unsure
        any_fresh |= wrong - stale > unsure
        where = f"{task} --by-write positions {bands[k]}+ gap {bins[b]}+ {KINDS[c]}"
        check(row["pos_lo"] == bands[k] and row["gap_lo"] == bins[b] and row["write"] == KINDS[c]
              and int(row["reads"]) == reads and abs(int(row["wrong"]) - wrong) <= unsure
              and abs(int(row["stale"]) - stale) <= unsure,
              f"{where}: {row['write']} reads {row['reads']} wrong {row['wrong']} stale {row['stale']}, "
              f"want {reads}, {wrong} and {stale} (± {unsure})")
        rates = [r[4][k, b, c] / r[3][k, b, c] for r in want if r[3][k, b, c] > 0]
        if not unsure:
            check(int(row["runs"]) == len(rates) and np.isclose(row["error_rate"], np.mean(rates)),
                  f"{where}: rate {row['error_rate']} over {row['runs']} runs, want {np.mean(rates)} over {len(rates)}")
    check(any_stale and any_fresh, f"{task} --by-write: the check needs a stale error and a wrong read that is not "
                                   f"stale (stale {any_stale}, other {any_fresh})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for path in sweep_run_files(a.srbench, SUITE, tmp):
            with h5py.File(path, "r") as f:
                task = f["runs"][list(f["runs"])[0]].attrs["task"]
            files.setdefault(task.decode() if isinstance(task, bytes) else str(task), []).append(path)
        for task, (_, sets, length, bins, bands) in CASES.items():
            paths = files[task]
            out = run(["/usr/bin/python3", a.script] + paths + ["--length", str(length), "--examples", str(EXAMPLES),
                       "--bins", ",".join(map(str, bins)), "--positions", ",".join(map(str, bands)),
                       "--srbench", a.srbench, "--format", "csv"] + sets)
            got = pd.read_csv(io.StringIO(out))
            want = expected(a.srbench, task, paths, sets, length, 4, bins, bands)
            print(f"{task}: {len(paths)} runs\n{got.to_string(index=False)}")
            cells = [(k, b) for k in range(len(bands)) for b in range(len(bins))]
            if not check(len(got) == len(cells), f"{task}: {len(got)} rows, want one per band and bin ({len(cells)})"):
                continue
            any_wrong = any_right = False
            for (k, b), (_, row) in zip(cells, got.iterrows()):
                reads = sum(int(r[0][k, b]) for r in want)
                wrong = sum(int(r[1][k, b]) for r in want)
                unsure = sum(int(r[2][k, b]) for r in want)
                any_wrong |= wrong > unsure
                any_right |= reads - wrong > unsure
                where = f"{task} positions {bands[k]}+ gap {bins[b]}+"
                check(row["pos_lo"] == bands[k] and row["gap_lo"] == bins[b] and int(row["reads"]) == reads
                      and abs(int(row["wrong"]) - wrong) <= unsure,
                      f"{where}: reads {row['reads']} wrong {row['wrong']}, want {reads} and {wrong} (± {unsure})")
                if unsure:
                    continue
                rates = [r[1][k, b] / r[0][k, b] for r in want if r[0][k, b] > 0]
                lo, hi = bootstrap(rates)
                check(int(row["runs"]) == len(rates) and np.allclose([row["error_rate"], row["ci_lo"], row["ci_hi"]],
                                                                     [np.mean(rates) if rates else np.nan, lo, hi], equal_nan=True),
                      f"{where}: rate {row['error_rate']} [{row['ci_lo']}, {row['ci_hi']}] "
                      f"over {row['runs']} runs, want {np.mean(rates)} [{lo}, {hi}] over {len(rates)}")
            check(any_wrong and any_right, f"{task}: the model's reads are all right or all wrong; the check needs both")
            out = run(["/usr/bin/python3", a.script] + paths + ["--length", str(length), "--examples", str(EXAMPLES),
                       "--bins", ",".join(map(str, bins)), "--positions", ",".join(map(str, bands)),
                       "--srbench", a.srbench, "--format", "csv", "--by-write"] + sets)
            got = pd.read_csv(io.StringIO(out), keep_default_na=False, na_values=[""])
            print(f"{task} --by-write:\n{got.to_string(index=False)}")
            check_by_write(task, got, want, bins, bands)
        p = subprocess.run(["/usr/bin/python3", a.script] + files["ffl"] + ["--length", "20", "--bins", "4,2",
                            "--srbench", a.srbench], capture_output=True, text=True)
        print(f"--bins 4,2: exit {p.returncode}, {p.stderr.strip()}")
        check(p.returncode == 2 and "--bins" in p.stderr, f"--bins 4,2: exit {p.returncode} (want 2 naming --bins)")
    return finish("reads and errors by gap as recomputed")


if __name__ == "__main__":
    sys.exit(main())
