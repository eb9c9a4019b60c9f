#!/usr/bin/python3
"""scripts/chomsky_compare.py on hand-written csvs: a cell's max over its runs (and over a
transformer's encodings), the run it comes from, the fitted count, the verdict for each kind of
paper class, and clear errors for files that do not fit together.

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_chomsky_compare.py --script scripts/chomsky_compare.py
"""
import argparse
import csv
import io
import os
import tempfile
from checks import check, finish, run_script as run

# Two encodings of one arch (transformer) and a recurrent arch; four tasks.
TABLE = """task,entry,level,chance,model,arch,grid,runs,n,mean,std,min,median,max,ci_lo,ci_hi
parity_check,parity_check,R,0.5,lstm,lstm,,2,2,0.8,0,0,0,0.95,0,0
parity_check,parity_check,R,0.5,alibi,transformer,,2,2,0.5,0,0,0,0.6,0,0
parity_check,parity_check,R,0.5,rope,transformer,,2,2,0.5,0,0,0,0.7,0,0
bucket_sort,bucket_sort,CS,0.2,lstm,lstm,,2,2,0.8,0,0,0,0.91,0,0
cycle_navigation,cycle_navigation,R,0.2,lstm,lstm,,2,2,0.8,0,0,0,0.5,0,0
odds_first,odds_first,CS,0.5,lstm,lstm,,1,1,0.8,0,0,0,0.5,0,0
duplicate_string,duplicate_string,CS,0.5,lstm,lstm,,1,1,0.5,0,0,0,0.5,0,0
"""
PAPER = """task,level,model,paper_class,paper_score,score_source,class_basis
parity_check,R,lstm,solved,,,x
parity_check,R,transformer,not solved,,,x
bucket_sort,CS,lstm,not solved,,,x
cycle_navigation,R,lstm,"non-trivial generalization",,,x
duplicate_string,CS,lstm,not stated,,,x
"""
# runs: (run_id, task, model, grid, seed, fitted, ood_token_acc, gen_length)
RUNS = [
    ("a1", "parity_check", "lstm", "train.lr=1e-4", 0, 1, 0.95, 500),
    ("a2", "parity_check", "lstm", "train.lr=5e-4", 1, 0, 0.65, 0),
    ("b1", "parity_check", "alibi", "train.lr=1e-4", 0, 0, 0.6, 0),
    ("b2", "parity_check", "rope", "train.lr=3e-4", 1, 1, 0.7, 41),
    ("b3", "parity_check", "rope", "train.lr=5e-4", 0, 0, 0.55, 0),
    ("c1", "bucket_sort", "lstm", "train.lr=1e-4", 0, 1, 0.91, 143),
    ("c2", "bucket_sort", "lstm", "train.lr=1e-4", 1, 1, 0.899, 100),
    ("d1", "cycle_navigation", "lstm", "", 0, 0, 0.5, 0),
    ("e1", "odds_first", "lstm", "", 0, 0, 0.5, 0),
    ("f1", "duplicate_string", "lstm", "", 0, 0, 0.5, 0),
]


def runs_csv():
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["run_id", "entry", "task", "model", "grid", "seed", "fitted", "quantity", "condition", "length", "value"])
    for rid, task, model, grid, seed, fitted, score, gen in RUNS:
        w.writerow([rid, task, task, model, grid, seed, fitted, "id_acc", "", "", 0.25])
        w.writerow([rid, task, task, model, grid, seed, fitted, "ood_token_acc", "", "", score])
        w.writerow([rid, task, task, model, grid, seed, fitted, "gen_length", "", "", gen])
        # an evaluation row of the same name must not be taken for the summary value
        w.writerow([rid, task, task, model, grid, seed, fitted, "token_acc", "id", 40, 0.01])
    return out.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    paths = {n: os.path.join(d, n + ".csv") for n in ("table", "runs", "paper", "bad")}
    open(paths["table"], "w").write(TABLE)
    open(paths["runs"], "w").write(runs_csv())
    open(paths["paper"], "w").write(PAPER)
    base = ["--table", paths["table"], "--runs", paths["runs"], "--paper", paths["paper"]]

    out = run(a.script, *base, "--format", "csv")
    check(out.returncode == 0, f"csv: exit 0: {out.stderr}")
    rows = {(r["task"], r["arch"]): r for r in csv.DictReader(io.StringIO(out.stdout))}
    check(list(rows) == [("parity_check", "lstm"), ("parity_check", "transformer"), ("bucket_sort", "lstm"),
                         ("cycle_navigation", "lstm"), ("odds_first", "lstm"),
                         ("duplicate_string", "lstm")], f"cells in the table's order: {list(rows)}")
    # (expected n, max, fitted, best model, grid, seed, gen_length, class, verdict), worked by hand from RUNS
    want = {
        ("parity_check", "lstm"): ("2", 0.95, "1", "lstm", "train.lr=1e-4", "0", 500.0, "solved", "held"),
        # max over both encodings: rope's 0.7 beats alibi's 0.6; 0.7 < 0.9 under "not solved" holds
        ("parity_check", "transformer"): ("3", 0.7, "1", "rope", "train.lr=3e-4", "1", 41.0, "not solved", "held"),
        # 0.91 >= 0.90 where the paper says not solved: not held (the other seed's 0.899 does not count)
        ("bucket_sort", "lstm"): ("2", 0.91, "2", "lstm", "train.lr=1e-4", "0", 143.0, "not solved", "not held"),
        ("cycle_navigation", "lstm"): ("1", 0.5, "0", "lstm", "", "0", 0.0, "non-trivial generalization", "not judged"),
        ("odds_first", "lstm"): ("1", 0.5, "0", "lstm", "", "0", 0.0, "", "not in the paper's table"),
        ("duplicate_string", "lstm"): ("1", 0.5, "0", "lstm", "", "0", 0.0, "not stated", "not judged"),
    }
    for key, (n, mx, fitted, model, grid, seed, gen, cls, verdict) in want.items():
        r = rows.get(key)
        if not check(r is not None, f"cell {key} missing"):
            continue
        got = (r["n"], float(r["max"]), r["fitted"], r["best_model"], r["best_grid"], r["best_seed"],
               float(r["best_gen_length"]), r["paper_class"], r["verdict"])
        check(got == (n, mx, fitted, model, grid, seed, gen, cls, verdict), f"cell {key}: {got}")
    check("held on 2 of 3 judged cells" in out.stderr, f"csv: the count on stderr: {out.stderr!r}")

    md = run(a.script, *base)
    check(md.returncode == 0, f"markdown: exit 0: {md.stderr}")
    lines = md.stdout.strip().split("\n")
    check(lines[0].startswith("| task | level | chance | arch | max (n runs) |"), f"header: {lines[0]!r}")
    check("| parity_check | R | 0.500 | transformer | 0.700 (3) | rope, train.lr=3e-4, seed 1; 41 | 1/3 | not solved | held |"
          in lines, f"markdown row: {lines}")
    check(lines[-1] == "held on 2 of 3 judged cells (threshold 0.9; 3 not judged)", f"last line: {lines[-1]!r}")

    # files that do not fit together: clear errors, exit 2
    open(paths["bad"], "w").write(runs_csv().replace(",rope,", ",nope,"))
    bad = run(a.script, "--table", paths["table"], "--runs", paths["bad"], "--paper", paths["paper"])
    check(bad.returncode == 2 and "model entry 'nope' is in no --table" in bad.stderr, f"unknown model: {bad.stderr}")
    open(paths["bad"], "w").write("task,model\nx,y\n")
    bad = run(a.script, "--table", paths["table"], "--runs", paths["runs"], "--paper", paths["bad"])
    check(bad.returncode == 2 and "columns ['paper_class'] missing" in bad.stderr and paths["bad"] in bad.stderr,
          f"wrong paper csv: {bad.stderr}")
    bad = run(a.script, "--table", os.path.join(d, "absent.csv"), "--runs", paths["runs"], "--paper", paths["paper"])
    check(bad.returncode == 2 and "absent.csv: cannot read" in bad.stderr, f"absent file: {bad.stderr}")
    return finish("chomsky_compare.py: cells, maxima, verdicts and errors as worked by hand")


if __name__ == "__main__":
    raise SystemExit(main())
