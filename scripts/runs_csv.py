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
  position_acc[j]        with --positions: each evaluation row's accuracy at position j (column j
                         of eval/position_acc, where the run has it: 0 is the first token, a start
                         token unscored), at its condition and length; positions the row does not
                         score (NaN) are left out

Values are written exactly (the shortest text that reads back as the same double).

  /usr/bin/python3 scripts/runs_csv.py results/shortcuts-32.h5 [--diag] [--positions] > docs/data/shortcuts-32-runs.csv
  /usr/bin/python3 scripts/runs_csv.py --stats docs/data/shortcuts-32-runs.csv --quantity horizon \\
      --condition id --length 32 [--fitted] [--tasks parity] [--models alibi-4]

--stats prints, per (entry, model, grid, quantity, condition, length), the report's statistics over
the runs (srbench.analysis.seed_stats: n, mean, std, min, median, max and the 95% bootstrap
interval), with --fitted over the runs whose `fitted` is 1 only; steps_to_target's -1 (never
reached) is left out, as the report does.

A suite run over several sessions (`--shard`s, run files restored from docs/data/runs/) keeps its
csv by appending each new shard's runs, after checking that the runs already in it came out the same:

  /usr/bin/python3 scripts/runs_csv.py --compare docs/data/X-runs.csv /tmp/new.csv
  /usr/bin/python3 scripts/runs_csv.py --append docs/data/X-runs.csv /tmp/new.csv

--compare takes the runs in both files and compares every value of each (same run, quantity,
condition and length; the timings wall_s, tokens_per_s and eval_s aside, which no two runs share):
a value in one file and not the other differs, as does any other value unless the two are the same
number (a nan equals a nan). It prints the counts, up to 20 differing values, and the runs only NEW has;
exit 0 when none differ, 1 otherwise. --append does the same and, when none differ, appends NEW's
rows of the runs OLD lacks to OLD (in NEW's order; OLD is left untouched when any value differs).
"""
import argparse
import csv
import fnmatch
import math
import os
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


def run_rows(g, summary, elements=False, positions=False):
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
                acc = np.asarray(pos[r], dtype=float)
                yield "horizon", cond, length, horizon(acc, 0.9)
                if positions:
                    for j in np.flatnonzero(np.isfinite(acc)):
                        yield f"position_acc[{j}]", cond, length, acc[j]
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


def write(path, out, elements=False, positions=False):
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
            for q, cond, length, v in run_rows(g, values, elements, positions):
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


TIMINGS = {"wall_s", "tokens_per_s", "eval_s"}


def same_value(x, y):
    """Two csv cells hold the same number (a nan equals a nan; text that is no number equals only itself)."""
    if x == y:
        return True
    try:
        x, y = float(x), float(y)
    except ValueError:
        return False
    return x == y or (math.isnan(x) and math.isnan(y))


def compare(old_path, new_path, append, out):
    old = read_csv(old_path, COLUMNS, "a runs_csv.py file")
    new = read_csv(new_path, COLUMNS, "a runs_csv.py file")
    old_ids = {r["run_id"] for r in old}
    both = old_ids & {r["run_id"] for r in new}

    def values(rows):
        v = {}
        for r in rows:
            if r["run_id"] in both and r["quantity"] not in TIMINGS:
                v[(r["run_id"], r["quantity"], r["condition"], r["length"])] = r["value"]
        return v

    a, b = values(old), values(new)
    differ = []
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        if x is None or y is None or not same_value(x, y):
            differ.append((k, x, y))
    added = [r for r in new if r["run_id"] not in old_ids]
    added_ids = list(dict.fromkeys(r["run_id"] for r in added))
    print(f"runs in both: {len(both)}, values compared: {len(set(a) | set(b))}, differ: {len(differ)}", file=out)
    for (rid, q, c, L), x, y in differ[:20]:
        print(f"  {rid} {q} {c or '-'} {L or '-'}: old {x if x is not None else 'absent'}, "
              f"new {y if y is not None else 'absent'}", file=out)
    if len(differ) > 20:
        print(f"  ... and {len(differ) - 20} more", file=out)
    print(f"runs only in {new_path}: {len(added_ids)}", file=out)
    if differ:
        if append:
            print(f"{old_path} left as it was: the runs in both differ", file=out)
        return 1
    if append and added:
        with open(old_path, "rb") as f:  # a file whose last line has no end gets one first
            size = f.seek(0, os.SEEK_END)
            if size:
                f.seek(size - 1)
            ends = size == 0 or f.read(1) == b"\n"
        with open(old_path, "a", newline="") as f:
            if not ends:
                f.write("\n")
            w = csv.writer(f, lineterminator="\n")
            for r in added:
                w.writerow([r[c] for c in COLUMNS])
        print(f"appended {len(added)} rows of {len(added_ids)} runs to {old_path}", file=out)
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file", help="a suite file (.h5); with --stats, a csv this script wrote; with --compare or "
                                "--append, the csv kept so far (OLD)")
    p.add_argument("new", nargs="?", help="with --compare or --append: a csv of the same suite written since (NEW)")
    p.add_argument("--diag", action="store_true", help="also every element of every diagnostics array")
    p.add_argument("--positions", action="store_true", help="also each evaluation row's accuracy by position")
    p.add_argument("--stats", action="store_true", help="statistics across seeds from a csv this script wrote")
    p.add_argument("--compare", action="store_true", help="OLD NEW: are the runs in both the same numbers?")
    p.add_argument("--append", action="store_true", help="OLD NEW: --compare, then append NEW's other runs to OLD")
    p.add_argument("--quantity", nargs="+", default=["*"], help="with --stats: quantities (shell patterns)")
    p.add_argument("--condition", help="with --stats: only this condition (id, a shift, diag, diag_init)")
    p.add_argument("--length", type=int, help="with --stats: only this evaluated length")
    p.add_argument("--fitted", action="store_true", help="with --stats: over the fitted runs only")
    p.add_argument("--tasks", nargs="*", default=[])
    p.add_argument("--models", nargs="*", default=[])
    a = p.parse_args(argv)
    if (a.compare or a.append) != (a.new is not None) or (a.compare and a.append) or \
            (a.new is not None and a.stats):
        p.error("--compare and --append each take two csv files (OLD NEW); the other modes one file")
    if a.compare or a.append:
        sys.exit(compare(a.file, a.new, a.append, sys.stdout))
    if a.stats:
        stats(a.file, a, sys.stdout)
    else:
        write(a.file, sys.stdout, a.diag, a.positions)


if __name__ == "__main__":
    main()
