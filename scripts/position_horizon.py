#!/usr/bin/env python3
"""How many leading positions a run labels right: the horizon of a partial solution.

A model that has not fitted an automaton often labels the first positions of every sequence right
and then falls to chance: it has learned the automaton over a bounded horizon (a shortcut of
bounded depth) rather than the recurrence. From `eval/position_acc` (accuracy at each position,
docs/harness.md) of the condition-id row at `--length`, a run's horizon is the number of leading
scored positions whose accuracy is at least `--threshold` (0.9): 0 when the first is below it,
the number of scored positions when none is. Per (task entry, model entry, grid point) this
prints the mean horizon over the runs with its 95% percentile bootstrap interval over runs
(10,000 resamples, numpy seed 0), the min and max, and the number of scored positions.

  /usr/bin/python3 scripts/position_horizon.py results/shortcuts-32.h5 --length 32 [--threshold 0.9]
      [--tasks parity S5] [--models alibi-1 alibi-8] [--format markdown|csv]
"""
import argparse
import math
import sys

import h5py
import numpy as np

from attention_pattern import bootstrap, text


def horizon(acc, threshold):
    """Leading scored positions (NaN = not scored, skipped) with accuracy >= threshold."""
    scored = acc[np.isfinite(acc)]
    below = np.flatnonzero(scored < threshold)
    return int(below[0]) if below.size else int(scored.size)


def read(path, length, threshold, tasks, models):
    groups, order = {}, []
    with h5py.File(path, "r") as f:
        ids = list(f["runs"])
        if "summary" in f and "run_id" in (f["summary"].dtype.names or ()):
            listed = [text(r) for r in f["summary"]["run_id"][:]]
            ids = [r for r in listed if r in f["runs"]] + [r for r in ids if r not in set(listed)]
        for rid in ids:
            g = f["runs"][rid]
            a = g.attrs
            entry, model, grid = text(a["entry"]), text(a["model"]), text(a.get("grid", ""))
            if (tasks and entry not in tasks and text(a["task"]) not in tasks) or (models and model not in models):
                continue
            if "eval" not in g or "position_acc" not in g["eval"]:
                continue
            conds = [text(c) for c in g["eval/conditions"][:]]
            if "id" not in conds:
                continue
            rows = np.flatnonzero((g["eval/length"][:] == length) & (g["eval/condition"][:] == conds.index("id")))
            if rows.size == 0:
                continue
            acc = np.asarray(g["eval/position_acc"][rows[0]], dtype=float)
            key = (entry, model, grid)
            if key not in groups:
                groups[key] = {"h": [], "scored": int(np.isfinite(acc).sum())}
                order.append(key)
            groups[key]["h"].append(horizon(acc, threshold))
    return [(k, groups[k]) for k in order]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file")
    p.add_argument("--length", type=int, required=True, help="the evaluated length (condition id)")
    p.add_argument("--threshold", type=float, default=0.9)
    p.add_argument("--tasks", nargs="*", default=[])
    p.add_argument("--models", nargs="*", default=[])
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    a = p.parse_args(argv)
    groups = read(a.file, a.length, a.threshold, set(a.tasks), set(a.models))
    if not groups:
        sys.exit(f"{a.file}: no run has eval/position_acc for condition id at length {a.length}"
                 + (" among --tasks/--models" if a.tasks or a.models else ""))
    if a.format == "csv":
        print("entry,model,grid,n,mean,ci_lo,ci_hi,min,max,scored")
    else:
        print(f"| entry | model | grid | n | horizon at length {a.length} (acc ≥ {a.threshold}) | min | max | scored |")
        print("|---|---|---|---|---|---|---|---|")
    for (entry, model, grid), g in groups:
        h = np.asarray(g["h"], dtype=float)
        lo, hi = bootstrap(h)
        if a.format == "csv":
            print(f"{entry},{model},{grid},{h.size},{h.mean():.10g},{lo:.10g},{hi:.10g},{int(h.min())},{int(h.max())},"
                  f"{g['scored']}")
        else:
            ci = "" if math.isnan(lo) else f" [{lo:.1f}, {hi:.1f}]"
            print(f"| {entry} | {model} | {grid or '-'} | {h.size} | {h.mean():.1f}{ci} | {int(h.min())} | {int(h.max())} "
                  f"| {g['scored']} |")


if __name__ == "__main__":
    main()
