#!/usr/bin/env python3
"""Every run's values as one long csv, and the statistics across seeds recomputed from it.

A suite file is not committed (results/ is not tracked), so a table of docs/results.md can only be
remade, or its intervals recomputed, from what docs/data/ keeps. This keeps the per-run values:
one row per (run, quantity, condition, length) with

  run_id, entry, task, model, grid, seed, fitted, quantity, condition, length, value

where quantity is
  a summary metric       every numeric column of the suite file's /summary (id_acc, ood_length_acc,
                         shift_acc, steps_to_target, final_train_loss, fitted, seen_frac, ...);
                         condition and length empty
  seq_acc, token_acc,    each evaluation row (`eval/`) at its condition and length
  loss, seen_frac
  horizon                the leading scored positions labelled with accuracy >= 0.9 at that row
                         (scripts/position_horizon.py's), where the run has eval/position_acc
  mean_H, max_H, min_H,  the run's attention summary (scripts/attention_pattern.py's: mean over its
  sparse_attn_max        heads of the normalised entropy, the most uniform and the sparsest head,
                         the sparsest head's attn_max); condition "diag" (trained) or "diag_init"
  diag/NAME[i,j]         with --diag: every element of every diagnostics array
                         (attn_entropy[layer, head], attn_max, value_entropy[layer], ...),
                         condition "diag" or "diag_init"

Values are written exactly (the shortest text that reads back as the same double).

  /usr/bin/python3 scripts/runs_csv.py results/shortcuts-32.h5 [--diag] > docs/data/shortcuts-32-runs.csv
  /usr/bin/python3 scripts/runs_csv.py --stats docs/data/shortcuts-32-runs.csv --quantity horizon \\
      --condition id --length 32 [--fitted] [--tasks parity] [--models alibi-4]

--stats prints, per (entry, model, grid, quantity, condition, length), the report's statistics over
the runs (srbench.analysis.seed_stats: n, mean, std, min, median, max and the 95% bootstrap
interval), with --fitted over the runs whose `fitted` is 1 only; steps_to_target's -1 (never
reached) is left out, as the report does.
"""
import argparse
import csv
import fnmatch
import math
import sys

import numpy as np

from attention_pattern import run_summary
from position_horizon import horizon
from srbench.analysis import fail, open_suite, read_csv, seed_stats, text

COLUMNS = ["run_id", "entry", "task", "model", "grid", "seed", "fitted", "quantity", "condition", "length",
           "value"]
EVAL = ["seq_acc", "token_acc", "loss", "seen_frac"]
STATS = ["n", "mean", "std", "min", "median", "max", "ci_lo", "ci_hi"]


def exact(v):
    v = float(v)
    return "nan" if math.isnan(v) else repr(v)


def run_rows(g, summary, elements=False):
    """(quantity, condition, length, value) of one run."""
    for k, v in summary.items():
        yield k, "", "", v
    if "eval" in g and "length" in g["eval"]:
        e = g["eval"]
        conds = [text(c) for c in e["conditions"][:]]
        lengths, which = e["length"][:], e["condition"][:]
        pos = e["position_acc"][:] if "position_acc" in e else None
        for r in range(len(lengths)):
            cond, length = conds[which[r]], int(lengths[r])
            for q in EVAL:
                if q in e:
                    yield q, cond, length, e[q][r]
            if pos is not None:
                yield "horizon", cond, length, horizon(np.asarray(pos[r], dtype=float), 0.9)
    for diag in ("diag", "diag_init"):
        if diag not in g:
            continue
        d = g[diag]
        if "attn_entropy" in d and "attn_max" in d and np.asarray(d["attn_entropy"]).size:
            s = run_summary(np.asarray(d["attn_entropy"], dtype=float), np.asarray(d["attn_max"], dtype=float))
            for k, v in s.items():
                yield k, diag, "", v
        for name in sorted(d) if elements else []:
            if not hasattr(d[name], "shape"):
                continue
            a = np.asarray(d[name], dtype=float)
            for idx in np.ndindex(a.shape):
                yield f"diag/{name}[{','.join(map(str, idx))}]", diag, "", a[idx]


def write(path, out, elements=False):
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    with open_suite(path) as f:
        summary = f.results.summary
        numeric = [c for c in summary.columns if c != "seed" and summary[c].dtype.kind in "biuf"]
        by_id = {r["run_id"]: r for r in summary.to_dict("records")}
        for g, (entry, model, grid) in f.runs():
            rid = g.name.split("/")[-1]
            a = g.attrs
            row = by_id.get(rid, {})
            values = {c: row[c] for c in numeric if c in row}
            fitted = int(a.get("fitted", row.get("fitted", -1)))
            head = [rid, entry, text(a.get("task", entry)), model, grid, int(a["seed"]), fitted]
            for q, cond, length, v in run_rows(g, values, elements):
                w.writerow(head + [q, cond, length, exact(v)])


def stats(path, a, out):
    rows = read_csv(path, COLUMNS, "a runs_csv.py file")
    groups, order = {}, []
    for r in rows:
        if a.fitted and r["fitted"] != "1":
            continue
        if a.tasks and r["entry"] not in a.tasks and r["task"] not in a.tasks:
            continue
        if a.models and r["model"] not in a.models:
            continue
        if not any(fnmatch.fnmatchcase(r["quantity"], q) for q in a.quantity):
            continue
        if a.condition is not None and r["condition"] != a.condition:
            continue
        if a.length is not None and r["length"] != str(a.length):
            continue
        v = float(r["value"])
        if r["quantity"] == "steps_to_target" and v < 0:
            continue
        key = (r["entry"], r["model"], r["grid"], r["quantity"], r["condition"], r["length"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(v)
    if not order:
        fail(f"{path}: no row matches --quantity {' '.join(a.quantity)}"
             + (f" --condition {a.condition}" if a.condition is not None else "")
             + (f" --length {a.length}" if a.length is not None else "")
             + (" among the fitted runs" if a.fitted else ""))
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["entry", "model", "grid", "quantity", "condition", "length"] + STATS)
    for key in order:
        s = seed_stats(groups[key])
        w.writerow(list(key) + [s["n"]] + [exact(s[k]) for k in STATS[1:]])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file", help="a suite file (.h5); with --stats, a csv this script wrote")
    p.add_argument("--diag", action="store_true", help="also every element of every diagnostics array")
    p.add_argument("--stats", action="store_true", help="statistics across seeds from a csv this script wrote")
    p.add_argument("--quantity", nargs="+", default=["*"], help="with --stats: quantities (shell patterns)")
    p.add_argument("--condition", help="with --stats: only this condition (id, a shift, diag, diag_init)")
    p.add_argument("--length", type=int, help="with --stats: only this evaluated length")
    p.add_argument("--fitted", action="store_true", help="with --stats: over the fitted runs only")
    p.add_argument("--tasks", nargs="*", default=[])
    p.add_argument("--models", nargs="*", default=[])
    a = p.parse_args(argv)
    if a.stats:
        stats(a.file, a, sys.stdout)
    else:
        write(a.file, sys.stdout, a.diag)


if __name__ == "__main__":
    main()
