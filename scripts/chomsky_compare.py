#!/usr/bin/env python3
"""Each cell of a Chomsky suite beside the class Delétang et al. (NNCH) give it, and whether that
class held at our budget — docs/results.md's comparison tables, made from what docs/data/ keeps.

A cell is (task, arch). Its score is NNCH's: the max over the cell's runs (seeds × learning rates,
and for the transformer also its position encodings) of ood_token_acc, the token accuracy averaged
over the lengths beyond training (chomsky.md §7.1). The verdict follows the paper's threshold of
0.90 (App. B.1): a cell the paper calls "solved" (or "solved (level statement)": §5.1's "solves
tasks up to the CS level", no per-task number) held when our max ≥ 0.90, one it calls "not solved"
held when our max < 0.90; cells the paper calls "non-trivial", "not stated", or does not list are
reported, not judged.

  /usr/bin/python3 scripts/chomsky_compare.py --table docs/data/repro-chomsky-tape-table.csv \\
      --runs docs/data/repro-chomsky-tape-runs.csv --paper docs/data/nnch-table2.csv [--format csv]

--table is `srbench report SUITE.h5 --chomsky --over train.lr --format csv` (level, chance and each
model entry's arch), --runs is scripts/runs_csv.py's file of the same suite (each run's score, its
`fitted` and `gen_length`: the longest evaluated length up to which every length is fitted), --paper
the paper's classes (task, model, paper_class). Several --table / --runs files are joined (the
suites of one hierarchy, each a column). Columns: the cell's runs n, its max and the run it comes
from (model entry, grid point, seed; its gen_length), k/n runs fitted at the training lengths, the
paper's class and the verdict; the last line counts the verdicts.
"""
import argparse
import csv
import math
import sys

from srbench.analysis import fail, fnum, read_csv

THRESHOLD = 0.90


def rows_of(path, need, kind):
    rows = read_csv(path, need, kind)
    if not rows:
        fail(f"{path}: no rows")
    return rows


def verdict(paper_class, score):
    if paper_class is None:
        return "not in the paper's table"
    if math.isnan(score):
        return "no score"
    if paper_class.startswith("solved"):
        return "held" if score >= THRESHOLD else "not held"
    if paper_class == "not solved":
        return "held" if score < THRESHOLD else "not held"
    return "not judged"


def cells(tables, runs, paper):
    """One dict per (task, arch), in the order of the tables."""
    arch_of, level, chance, order = {}, {}, {}, []
    for r in tables:
        arch_of[r["model"]] = r["arch"]
        level[r["task"]], chance[r["task"]] = r["level"], r["chance"]
        key = (r["task"], r["arch"])
        if key not in order:
            order.append(key)
    by_cell = {k: {} for k in order}
    for r in runs:
        if r["model"] not in arch_of:
            fail(f"runs: model entry '{r['model']}' is in no --table (tables name {sorted(arch_of)})")
        key = (r["task"], arch_of[r["model"]])
        if key not in by_cell:
            fail(f"runs: task '{r['task']}' with arch '{key[1]}' is in no --table")
        run = by_cell[key].setdefault(r["run_id"], {"model": r["model"], "grid": r["grid"], "seed": r["seed"],
                                                    "fitted": r["fitted"]})
        if r["condition"] == "" and r["quantity"] in ("ood_token_acc", "gen_length"):
            run[r["quantity"]] = fnum(r["value"])
    classes = {(p["task"], p["model"]): p["paper_class"] for p in paper}
    out = []
    for task, arch in order:
        rs = [r for r in by_cell[(task, arch)].values() if not math.isnan(r.get("ood_token_acc", math.nan))]
        best = max(rs, key=lambda r: r["ood_token_acc"]) if rs else None
        score = best["ood_token_acc"] if best else math.nan
        cls = classes.get((task, arch))
        out.append({
            "task": task, "level": level[task], "chance": chance[task], "arch": arch, "n": len(rs),
            "max": score, "fitted": sum(r["fitted"] == "1" for r in rs),
            "best_model": best["model"] if best else "", "best_grid": best["grid"] if best else "",
            "best_seed": best["seed"] if best else "", "best_gen_length": best.get("gen_length", math.nan) if best else math.nan,
            "paper_class": cls if cls is not None else "", "verdict": verdict(cls, score)})
    return out


def fmt(v, digits=3):
    return "–" if math.isnan(v) else f"{v:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", action="append", required=True, help="srbench report --chomsky --over ... --format csv")
    ap.add_argument("--runs", action="append", required=True, help="scripts/runs_csv.py output of the same suite")
    ap.add_argument("--paper", required=True, help="the paper's classes (docs/data/nnch-table2.csv)")
    ap.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    a = ap.parse_args()
    tables = [r for p in a.table for r in rows_of(p, ["task", "level", "chance", "model", "arch"],
                                                  "a `srbench report --chomsky --format csv` table")]
    runs = [r for p in a.runs for r in rows_of(p, ["run_id", "task", "model", "grid", "seed", "fitted", "quantity",
                                                   "condition", "value"], "a runs_csv.py file")]
    paper = rows_of(a.paper, ["task", "model", "paper_class"], "a csv of the paper's classes")
    rows = cells(tables, runs, paper)
    if a.format == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        cols = ["task", "level", "chance", "arch", "n", "max", "fitted", "best_model", "best_grid", "best_seed",
                "best_gen_length", "paper_class", "verdict"]
        w.writerow(cols)
        for r in rows:
            w.writerow([repr(r[c]) if isinstance(r[c], float) else r[c] for c in cols])
    else:
        print("| task | level | chance | arch | max (n runs) | from (model, grid, seed; held to) | fitted at 40 | NNCH class | verdict |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            held = "" if math.isnan(r["best_gen_length"]) else f"; {int(r['best_gen_length'])}"
            src = f"{r['best_model']}, {r['best_grid'] or '–'}, seed {r['best_seed']}{held}" if r["n"] else "–"
            print(f"| {r['task']} | {r['level']} | {fmt(fnum(r['chance']))} | {r['arch']} | {fmt(r['max'])} ({r['n']}) | "
                  f"{src} | {r['fitted']}/{r['n']} | {r['paper_class'] or '–'} | {r['verdict']} |")
    judged = [r for r in rows if r["verdict"] in ("held", "not held")]
    held = sum(r["verdict"] == "held" for r in judged)
    print(f"{'# ' if a.format == 'csv' else ''}held on {held} of {len(judged)} judged cells "
          f"(threshold {THRESHOLD}; {len(rows) - len(judged)} not judged)", file=sys.stderr if a.format == "csv" else sys.stdout)


if __name__ == "__main__":
    main()
