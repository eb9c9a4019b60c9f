#!/usr/bin/python3
"""scripts/attention_reads.py (what each attention head reads) against an independent computation.

    PYTHONPATH=build/python /usr/bin/python3 test_attention_reads.py --srbench build/harness/srbench \
        --script scripts/attention_reads.py

A short flip-flop suite (start token, 2-layer ALiBi transformer, 60 steps, 2 seeds,
save_checkpoint) is swept and the script run on its run files with `--latest w1,w2`. The test
draws the same examples with `srbench sample --stream eval` (the vocabulary written out in the
task's order), computes every layer's α with the float64 PyTorch reference of model.md
(tests/parity/reference.py), and recomputes each column of each (run, layer, head) row with
whole-tensor operations over the queries 1..T−1: entropy, max, first, self, prev, on/share of each
input symbol and the weight on the latest write; then `--sparsest`'s mean and bootstrap interval
over runs of each run's least-entropy head per layer. Limit 1e-4 (float32 α against float64). The
heads must differ from one another in `first` and `entropy` by more than that, so that a script
that mixed heads up would fail. A --latest symbol the task lacks is refused with exit 2, and so is
--fitted when no run fitted (none does in 60 steps).
Needs torch, h5py, numpy, yaml, pandas; fails, never skips.
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

SUITE = """name: reads
seeds: [0, 1]
defaults:
  model: {layers: 2, d_model: 16, heads: 2, max_len: 40, position: alibi}
  train: {steps: 60, batch: 16, lr: 3e-3, warmup: 5, eval_every: 30, save_checkpoint: true, data_seed: 2,
          length: [1, 16]}
  eval: {lengths: [16], examples: 16, val_examples: 16}
tasks:
  - task: flipflop
    params: {start_token: true}
models:
  - name: alibi
"""
VOCAB = ["r", "w1", "w2", "q0", "q1", "q2", "<s>"]  # flipflop's tokens in the task's order, then <s>
N, EXAMPLES, TOL = 16, 40, 1e-4


def expected(alpha, tokens):
    """{column: [H] means over examples and queries 1..T−1} for α [B,H,T,T], tokens [B,T]."""
    B, H, T, _ = alpha.shape
    q = torch.arange(1, T)
    rows = alpha[:, :, 1:, :]  # [B,H,T-1,T]: the queries 1..T-1
    keys = torch.arange(T)
    causal = (keys[None, :] <= q[:, None]).double()  # [T-1,T]
    logp = torch.where(rows > 0, rows.clamp_min(1e-300).log(), torch.zeros_like(rows))
    out = {
        "entropy": (-(rows * logp).sum(-1) / torch.log(q.double() + 1)),
        "max": rows.max(-1).values,
        "first": rows[..., 0],
        "self": rows[:, :, torch.arange(T - 1), q],
        "prev": rows[:, :, torch.arange(T - 1), q - 1],
    }
    for name in ("r", "w1", "w2"):
        holds = (tokens == VOCAB.index(name)).double()  # [B,T]
        out[f"on:{name}"] = (rows * holds[:, None, None, :]).sum(-1)
        share = (causal[None] * holds[:, None, :]).sum(-1) / (q.double() + 1)  # [B,T-1]
        out[f"share:{name}"] = share[:, None, :].expand(B, H, T - 1)
    writes = (tokens == VOCAB.index("w1")) | (tokens == VOCAB.index("w2"))
    latest = torch.full((B, T), -1, dtype=torch.long)
    for t in range(T):  # the latest write at or before t
        latest[:, t] = torch.where(writes[:, t], t, latest[:, t - 1] if t else torch.full((B,), -1))
    lat = latest[:, 1:]  # [B,T-1]
    has = lat >= 0
    picked = rows.gather(-1, lat.clamp_min(0)[:, None, :, None].expand(B, H, T - 1, 1))[..., 0]
    means = {k: v.mean(dim=(0, 2)) for k, v in out.items()}
    means["latest"] = (picked * has[:, None, :]).sum(dim=(0, 2)) / has.sum()
    return means


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = sweep_run_files(a.srbench, SUITE, tmp)
        out = run(["/usr/bin/python3", a.script] + files + ["--length", str(N), "--examples", str(EXAMPLES),
                   "--latest", "w1,w2", "--srbench", a.srbench, "--format", "csv"])
        got = pd.read_csv(io.StringIO(out))
        print(got.to_string(index=False))
        lines = run([a.srbench, "sample", "flipflop", "-n", str(N), "--count", str(EXAMPLES), "--stream", "eval",
                     "--seed", "2", "--format", "jsonl", "--set", "start_token=true"]).splitlines()
        tokens = torch.tensor([[VOCAB.index(t) for t in json.loads(s)["tokens"]] for s in lines])
        targets = torch.full_like(tokens, -1)
        worst, spread, per_run = 0.0, [], {}
        for path in files:
            cfg, _, params = reference.load_checkpoint(path)
            with h5py.File(path, "r") as f:
                seed = int(f["runs"][list(f["runs"])[0]].attrs["seed"])
            alphas = []
            with torch.no_grad():
                reference.forward(cfg, params, tokens, targets, alphas=alphas)
            for l, alpha in enumerate(alphas):
                want = per_run[(seed, l)] = expected(alpha, tokens)
                spread.append((float(want["first"].max() - want["first"].min()),
                               float(want["entropy"].max() - want["entropy"].min())))
                for h in range(alpha.shape[1]):
                    row = got[(got["seed"] == seed) & (got["layer"] == l) & (got["head"] == h)]
                    if not check(len(row) == 1, f"seed {seed} layer {l} head {h}: {len(row)} rows, want 1"):
                        continue
                    for col, values in want.items():
                        if not check(col in row, f"no column {col}"):
                            continue
                        err = abs(float(row[col].iloc[0]) - float(values[h]))
                        worst = max(worst, err)
                        check(err <= TOL, f"seed {seed} layer {l} head {h} {col}: {float(row[col].iloc[0]):.6g}, "
                                          f"want {float(values[h]):.6g}")
        print(f"worst difference {worst:.2e} (limit {TOL}); heads' spread in first / entropy per layer: "
              + ", ".join(f"{f:.3f} / {e:.3f}" for f, e in spread))
        check(all(f > 10 * TOL and e > 10 * TOL for f, e in spread), "heads too alike to tell apart")
        # --sparsest: per layer, each run's head of least entropy, then its mean and interval over runs
        out = run(["/usr/bin/python3", a.script] + files + ["--length", str(N), "--examples", str(EXAMPLES),
                   "--latest", "w1,w2", "--sparsest", "--srbench", a.srbench, "--format", "csv"])
        summary = pd.read_csv(io.StringIO(out))
        print(summary.to_string(index=False))
        for l in sorted({l for _, l in per_run}):
            chosen = [{c: float(v[int(w["entropy"].argmin())]) for c, v in w.items()}
                      for (_, layer), w in per_run.items() if layer == l]
            row = summary[summary["layer"] == l]
            if not check(len(row) == 1 and int(row["runs"].iloc[0]) == len(chosen),
                         f"--sparsest layer {l}: {len(row)} rows, want 1 over {len(chosen)} runs"):
                continue
            for c in chosen[0]:
                values = [x[c] for x in chosen]
                lo, hi = bootstrap(values)
                got_c = [float(row[k].iloc[0]) for k in (c, f"{c}_lo", f"{c}_hi")]
                check(np.allclose(got_c, [np.mean(values), lo, hi], atol=TOL, rtol=0),
                      f"--sparsest layer {l} {c}: {got_c}, want {[np.mean(values), lo, hi]}")
        p = subprocess.run(["/usr/bin/python3", a.script, files[0], "--length", str(N), "--latest", "w9",
                            "--srbench", a.srbench], capture_output=True, text=True)
        print(f"--latest w9: exit {p.returncode}, {p.stderr.strip()}")
        check(p.returncode == 2 and "w9" in p.stderr, "--latest with a symbol the task lacks: exit 2 naming it")
        p = subprocess.run(["/usr/bin/python3", a.script] + files + ["--length", str(N), "--fitted", "--srbench",
                            a.srbench], capture_output=True, text=True)
        print(f"--fitted, no run fitted (60 steps): exit {p.returncode}, {p.stderr.strip()}")
        check(p.returncode == 2 and "fitted" in p.stderr, "--fitted with no fitted run: exit 2 saying so")
    return finish("every head's reads as recomputed")


if __name__ == "__main__":
    sys.exit(main())
