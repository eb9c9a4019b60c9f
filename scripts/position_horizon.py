#!/usr/bin/env python3
"""How many leading positions a run labels right: the horizon of a partial solution.

A model that has not fitted an automaton often labels the first positions of every sequence right
and then falls to chance: it has learned the automaton over a bounded horizon (a shortcut of
bounded depth) rather than the recurrence. From `eval/position_acc` (accuracy at each position,
docs/harness.md) of the condition-id row at `--length`, a run's horizon is the number of leading
scored positions whose accuracy is at least `--threshold` (0.9): 0 when the first is below it,
the number of scored positions when none is. Per (task entry, model entry, grid point) this
prints the mean horizon over the runs with its 95% percentile bootstrap interval over runs
(the report's bootstrap, srbench.analysis.bootstrap), the min and max, and the number of scored positions.

`--condition` takes another evaluation condition (a shift, e.g. p_write=0.1) instead of id;
`--blocks K` prints instead the error rate (1 - accuracy) in K equal blocks of the scored
positions, mean over runs: where in the sequence the errors sit.

  /usr/bin/python3 scripts/position_horizon.py results/shortcuts-32.h5 --length 32 [--threshold 0.9]
      [--tasks parity S5] [--models alibi-1 alibi-8] [--format markdown|csv]
  /usr/bin/python3 scripts/position_horizon.py results/shortcuts-32.h5 --length 32 --tasks flipflop \
      --condition p_write=0.1 --blocks 4
"""
import argparse
import math

import numpy as np

from srbench.analysis import bootstrap, fail, open_suite, text


def horizon(acc, threshold):
    """Leading scored positions (NaN = not scored, skipped) with accuracy >= threshold."""
    scored = acc[np.isfinite(acc)]
    below = np.flatnonzero(scored < threshold)
    return int(below[0]) if below.size else int(scored.size)


def blocks_of(acc, k):
    """Error rate (1 - mean accuracy) of each of k equal blocks of the scored positions."""
    scored = acc[np.isfinite(acc)]
    return [float(1.0 - b.mean()) if b.size else math.nan for b in np.array_split(scored, k)]


def read(path, length, threshold, tasks, models, condition="id", blocks=0):
    groups, order = {}, []
    with open_suite(path) as f:
        for g, key in f.runs(tasks, models):
            if "eval" not in g or "position_acc" not in g["eval"]:
                continue
            conds = [text(c) for c in g["eval/conditions"][:]]
            if condition not in conds:
                continue
            rows = np.flatnonzero((g["eval/length"][:] == length) & (g["eval/condition"][:] == conds.index(condition)))
            if rows.size == 0:
                continue
            acc = np.asarray(g["eval/position_acc"][rows[0]], dtype=float)
            if key not in groups:
                groups[key] = {"h": [], "blocks": [], "scored": int(np.isfinite(acc).sum())}
                order.append(key)
            groups[key]["h"].append(horizon(acc, threshold))
            if blocks:
                groups[key]["blocks"].append(blocks_of(acc, blocks))
    return [(k, groups[k]) for k in order]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file")
    p.add_argument("--length", type=int, required=True, help="the evaluated length")
    p.add_argument("--condition", default="id", help="the evaluation condition (default id)")
    p.add_argument("--blocks", type=int, default=0, help="print the error rate in this many blocks of positions")
    p.add_argument("--threshold", type=float, default=0.9)
    p.add_argument("--tasks", nargs="*", default=[])
    p.add_argument("--models", nargs="*", default=[])
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    a = p.parse_args(argv)
    if a.blocks < 0:
        fail(f"--blocks must be 0 or more, got {a.blocks}")
    groups = read(a.file, a.length, a.threshold, set(a.tasks), set(a.models), a.condition, a.blocks)
    if not groups:
        fail(f"{a.file}: no run has eval/position_acc for condition {a.condition} at length {a.length}"
                 + (" among --tasks/--models" if a.tasks or a.models else ""))
    if a.blocks:
        head = [f"block {i + 1}/{a.blocks}" for i in range(a.blocks)]
        if a.format == "csv":
            print("entry,model,grid,n," + ",".join(f"error_block{i + 1}" for i in range(a.blocks)))
        else:
            print("| entry | model | grid | n | " + " | ".join(head) + " |")
            print("|---|---|---|---|" + "---|" * a.blocks)
        for (entry, model, grid), g in groups:
            m = np.nanmean(np.asarray(g["blocks"], dtype=float), axis=0)
            if a.format == "csv":
                print(f"{entry},{model},{grid},{len(g['h'])}," + ",".join(f"{v:.10g}" for v in m))
            else:
                print(f"| {entry} | {model} | {grid or '-'} | {len(g['h'])} | " + " | ".join(f"{v:.3f}" for v in m) + " |")
        return
    if a.format == "csv":
        print("entry,model,grid,n,mean,ci_lo,ci_hi,min,max,scored")
    else:
        print(f"| entry | model | grid | n | horizon at length {a.length}, {a.condition} (acc ≥ {a.threshold}) | min | max "
              f"| scored |")
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
