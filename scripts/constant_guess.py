#!/usr/bin/env python3
"""The best constant guess of each task entry of a suite, and which runs score exactly it.

A model that outputs the same token at every scored position scores the fraction of that
token among the evaluation targets. The best such token is the floor below which a score says
nothing, and it can lie far above a uniform guess (the report's `chance`) when the evaluation set
is unbalanced (binary_addition: chance 1/3, best constant 0.50). For each task entry this script
evaluates, with the srbench module, every token of the task's vocabulary as a constant predictor
on exactly the evaluation sets the suite's runs use (same data_seed, lengths and examples), and
prints the best one's ood_token_acc (the chomsky score) and its token accuracy at the evaluated
lengths inside the training range (where there are any). With --results it counts the runs of that suite file whose ood_token_acc equals the best
constant's (within --tol): a plateau shared by many runs is a constant guess when it sits there.

  /usr/bin/python3 scripts/constant_guess.py configs/chomsky.yaml --results results/chomsky.h5

Needs `import srbench` (scripts/install-python.sh, or PYTHONPATH=build/python).
"""
import argparse
import math
import os
import sys

import numpy as np
import srbench
from srbench.analysis import fail, open_suite


def constant_scores(suite, srbench, run):
    """{token name: metrics of the predictor that outputs that token everywhere} for one run's
    entry, on its evaluation sets."""
    task = srbench.Task(run.task, **run.config.get("params", {}))
    out = {}
    for c, name in enumerate(task.vocab):
        res = suite.evaluate(lambda tokens, c=c: np.full(tokens.shape, c, dtype=np.int32), entry=run.entry,
                             seed=run.seed, model="constant-guess", run=run.id)
        rows = res.rows
        length = run.config["train"]["length"]
        lo, hi = (length, length) if isinstance(length, int) else (min(length), max(length))
        id_rows = rows[(rows["condition"] == "id") & (rows["length"] >= lo) & (rows["length"] <= hi)]
        out[name] = {"ood_token_acc": float(res.metrics["ood_token_acc"]),
                     "token_acc": float(np.mean(id_rows["token_acc"])) if len(id_rows) else math.nan}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("suite", help="the suite YAML")
    p.add_argument("--results", help="its suite file: count the runs at the best constant guess")
    p.add_argument("--tol", type=float, default=5e-4, help="how close counts as equal (default 5e-4)")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    args = p.parse_args()
    if not os.path.exists(args.suite):
        fail(f"{args.suite}: no such file")
    if not args.tol >= 0:
        fail(f"--tol must be >= 0, got {args.tol}")
    try:
        suite = srbench.load_suite(args.suite)
    except ValueError as e:
        fail(str(e))
    first = {}
    for r in suite.runs:
        first.setdefault(r.entry, r)
    scores = {}
    if args.results:
        f = open_suite(args.results)
        for g, (entry, _model, _grid) in f.runs():
            scores.setdefault(entry, []).append(float(g.attrs.get("ood_token_acc", math.nan)))
    rows = []
    for entry, run in first.items():
        per_token = constant_scores(suite, srbench, run)
        name, best = max(per_token.items(), key=lambda kv: (kv[1]["ood_token_acc"], kv[1]["token_acc"]))
        accs = [a for a in scores.get(entry, []) if not math.isnan(a)]
        at = sum(abs(a - best["ood_token_acc"]) <= args.tol for a in accs)
        rows.append((entry, name, best["ood_token_acc"], best["token_acc"], at, len(accs),
                     max(accs) if accs else math.nan))
    if args.format == "csv":
        print("entry,token,ood_token_acc,id_token_acc,runs_at_it,runs,max_run")
        for r in rows:
            print(",".join([r[0], r[1]] + [f"{x:.6f}" for x in r[2:4]] + [str(r[4]), str(r[5]), f"{r[6]:.6f}"]))
        return 0
    head = "| entry | best constant | its ood_token_acc | its id token_acc |"
    head += " runs at it | best run |" if args.results else ""
    print(head)
    print("|" + "---|" * (6 if args.results else 4))
    for r in rows:
        line = f"| {r[0]} | `{r[1]}` | {r[2]:.4f} | " + ("-" if math.isnan(r[3]) else f"{r[3]:.4f}") + " |"
        if args.results:
            line += f" {r[4]}/{r[5]} | {r[6]:.4f} |"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
