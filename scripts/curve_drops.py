#!/usr/bin/env python3
"""Runs that reached the target on the validation set and then fell back: solved, then lost.

A protocol that scores the model of the last step (NNCH's, and srbench's: no early stopping, no
best checkpoint) keeps in its score a run that had solved the task and lost it before the end. From
each run's validation curve (`curve/val_acc`, every `eval_every` steps: the validation examples'
accuracy by the run's fit metric, docs/harness.md), a run *reached* the target at the first
evaluation whose value is at least `--target` (0.99). Of the runs that did:

  held       every later evaluation at least the target
  recovered  some later evaluation below it, the last one at least the target
  lost       the last evaluation below the target

One row per run that reached the target and did not hold it (all of them with --all): the step
it reached the target, the lowest later value and its step, the last value, the training loss and
gradient norm logged at the evaluation before the lowest and at the lowest (`curve/train_loss`,
`curve/grad_norm`), and the run's ood_token_acc; then a line per file of more than one run (a suite
file) and a line over all the files, counting the runs, those that reached the target, and held /
recovered / lost. A fall between two evaluations that is over
by the next one is not seen.

  /usr/bin/python3 scripts/curve_drops.py results/repro-chomsky-stack.h5 [more files]
      [--target 0.99] [--all] [--format markdown|csv]

Each file is a suite file or a run file (results/<suite>/runs/*.h5); runs are taken in run-id order.
"""
import argparse
import math

import numpy as np

from srbench.analysis import fail, open_suite, text

KINDS = ["held", "recovered", "lost"]


def classify(val, target):
    """(kind, reached index, lowest later index) of a validation curve, or None when it never
    reaches the target; the lowest later index is None when there is no later evaluation."""
    val = np.asarray(val, dtype=float)
    hits = np.flatnonzero(val >= target)
    if hits.size == 0:
        return None
    i = int(hits[0])
    if i == len(val) - 1:
        return "held", i, None
    later = val[i + 1:]
    j = i + 1 + int(np.argmin(later))  # the first of equal lowest values
    if later.min() >= target:
        return "held", i, j
    return ("recovered" if val[-1] >= target else "lost"), i, j


def runs_of(path):
    """(run id, group) of every run of the file, by run id."""
    f = open_suite(path)
    if "runs" not in f.h5:
        fail(f"{path}: no /runs group: not an srbench suite or run file")
    return f, sorted(f.h5["runs"].items())


def rows_of(path, target, every):
    counts = dict.fromkeys(KINDS, 0)
    counts["runs"] = counts["reached"] = 0
    rows = []
    f, runs = runs_of(path)
    with f:
        for rid, g in runs:
            counts["runs"] += 1
            if "curve/val_acc" not in g or "curve/step" not in g:
                continue
            val, step = g["curve/val_acc"][:], g["curve/step"][:]
            c = classify(val, target)
            if c is None:
                continue
            kind, i, j = c
            counts["reached"] += 1
            counts[kind] += 1
            if kind == "held" and not every:
                continue

            def at(name, k):
                return float(g["curve/" + name][k]) if k is not None and "curve/" + name in g else math.nan

            a = g.attrs
            before = j - 1 if j is not None else None
            rows.append({
                "file": path, "run_id": rid, "entry": text(a["entry"]), "model": text(a["model"]),
                "grid": text(a.get("grid", "")), "seed": int(a["seed"]), "kind": kind,
                "reached_step": int(step[i]), "lowest": at("val_acc", j),
                "lowest_step": int(step[j]) if j is not None else -1, "last": float(val[-1]),
                "loss_before": at("train_loss", before), "grad_norm_before": at("grad_norm", before),
                "loss_at_lowest": at("train_loss", j), "grad_norm_at_lowest": at("grad_norm", j),
                "ood_token_acc": float(a["ood_token_acc"]) if "ood_token_acc" in a else math.nan,
            })
    return rows, counts


COLUMNS = ["file", "run_id", "entry", "model", "grid", "seed", "kind", "reached_step", "lowest", "lowest_step", "last",
           "loss_before", "grad_norm_before", "loss_at_lowest", "grad_norm_at_lowest", "ood_token_acc"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--target", type=float, default=0.99, help="the validation accuracy a run must reach (0.99)")
    p.add_argument("--all", action="store_true", help="a row for the runs that held the target too")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    a = p.parse_args(argv)
    if not 0 < a.target <= 1:
        fail(f"--target must be in (0, 1], got {a.target}")
    results = [(path, *rows_of(path, a.target, a.all)) for path in a.files]
    if a.format == "csv":
        print(",".join(COLUMNS))
        for _, rows, _ in results:
            for r in rows:
                print(",".join(repr(v) if isinstance(v, float) else str(v) for v in (r[c] for c in COLUMNS)))
    else:
        print("| run | entry | model | grid | seed | kind | reached at | lowest later (step) | last | loss, grad norm "
              "before → at the lowest | ood_token_acc |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for _, rows, _ in results:
            for r in rows:
                print(f"| {r['run_id']} | {r['entry']} | {r['model']} | {r['grid'] or '-'} | {r['seed']} | {r['kind']} "
                      f"| {r['reached_step']} | {r['lowest']:.3f} ({r['lowest_step']}) | {r['last']:.3f} "
                      f"| {r['loss_before']:.3g}, {r['grad_norm_before']:.3g} → {r['loss_at_lowest']:.3g}, "
                      f"{r['grad_norm_at_lowest']:.3g} | {r['ood_token_acc']:.3f} |")
    def line(what, c):
        print(f"# {what}: {c['runs']} runs, {c['reached']} reached val_acc >= {a.target:g}: held {c['held']}, "
              f"recovered {c['recovered']}, lost {c['lost']}")

    for path, _, c in results:
        if c["runs"] > 1:
            line(path, c)
    if len(results) > 1:
        line(f"all {len(results)} files", {k: sum(c[k] for _, _, c in results) for k in results[0][2]})


if __name__ == "__main__":
    main()
