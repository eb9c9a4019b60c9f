#!/usr/bin/python3
"""scripts/runs_csv.py on a swept suite (an ALiBi transformer and an lstm on flip-flop, 3 seeds, two
lengths and a shift): every per-run value equals the suite file's, read independently with h5py
(summary columns, eval rows, the horizon recomputed by a loop over position_acc, the attention
summary over diag/attn_entropy); --stats over the csv equals `srbench report --format csv` (and
--fitted equals `report --fitted`) bit for bit, and position_horizon.py's and attention_pattern.py's
intervals; --positions gives every scored position's accuracy as the file has it; --compare /
--append on csvs cut from it (runs held back, one value changed, one timing changed, one value
missing, a last line without its end): the differing values found, the held-back runs appended and
nothing else, the kept csv untouched when a value differs; bad input exits 2 naming it.

    PYTHONPATH=build/python:tests/python:tests/parity /usr/bin/python3 tests/python/test_runs_csv.py \\
        --srbench build/harness/srbench --script scripts/runs_csv.py
"""
import argparse
import csv
import io
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
from checks import check, finish
from parity_report import sweep_run_files

SUITE = """name: rc
seeds: [0, 1, 2]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 40, position: alibi}
  train: {steps: 600, batch: 32, lr: 3e-3, warmup: 20, eval_every: 100, length: [1, 8]}
  eval: {lengths: [8, 16], examples: 32, val_examples: 16}
tasks:
  - task: flipflop
    params: {start_token: true}
    eval: {shifts: [{p_write: 0.1}]}
models:
  - name: alibi
  - name: lstm
    model: {arch: lstm, d_model: 32}
"""
SCRIPTS = os.path.dirname(os.path.abspath(__file__))


def same(a, b):
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or a == b


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def by_key(rows, *cols):
    return {tuple(r[c] for c in cols): r for r in rows}


def check_values(path, rows):
    """Every row against the suite file read here with h5py, and every run's rows present."""
    want = {}
    with h5py.File(path, "r") as f:
        table = f["summary"][:]
        names = [n for n in table.dtype.names if table.dtype[n].kind in "biuf" and n != "seed"]
        for rec in table:
            rid = rec["run_id"].decode() if isinstance(rec["run_id"], bytes) else str(rec["run_id"])
            for n in names:
                want[(rid, n, "", "")] = float(rec[n])
            g = f["runs"][rid]
            e = g["eval"]
            conds = [c.decode() if isinstance(c, bytes) else str(c) for c in e["conditions"][:]]
            for r in range(len(e["length"])):
                c, L = conds[e["condition"][r]], str(int(e["length"][r]))
                for q in ("seq_acc", "token_acc", "loss", "seen_frac"):
                    want[(rid, q, c, L)] = float(e[q][r])
                acc = [float(x) for x in e["position_acc"][r] if not math.isnan(float(x))]
                h = 0
                while h < len(acc) and acc[h] >= 0.9:
                    h += 1
                want[(rid, "horizon", c, L)] = float(h)
            for diag in ("diag", "diag_init"):
                if diag in g and "attn_entropy" in g[diag] and g[diag]["attn_entropy"].size:
                    ent = g[diag]["attn_entropy"][...].astype(float)
                    flat = [(ent[i, j], i, j) for i in range(ent.shape[0]) for j in range(ent.shape[1])]
                    lo = min(flat)
                    want[(rid, "mean_H", diag, "")] = float(np.mean(ent))
                    want[(rid, "max_H", diag, "")] = float(max(flat)[0])
                    want[(rid, "min_H", diag, "")] = float(lo[0])
                    want[(rid, "sparse_attn_max", diag, "")] = float(g[diag]["attn_max"][lo[1], lo[2]])
    got = {(r["run_id"], r["quantity"], r["condition"], r["length"]): r["value"] for r in rows}
    missing = [k for k in want if k not in got]
    check(not missing, f"{len(missing)} per-run values missing, e.g. {missing[:3]}")
    wrong = [(k, got[k], v) for k, v in want.items() if k in got and not same(got[k], v)]
    check(not wrong, f"{len(wrong)} per-run values differ from the suite file's, e.g. {wrong[:3]}")
    check(len(want) >= 18 * 6, f"only {len(want)} values compared")
    runs = {r["run_id"] for r in rows}
    check(len(runs) == 6, f"6 runs in the csv: {len(runs)}")
    check(any(r["quantity"] == "mean_H" for r in rows) and not any(r["quantity"].startswith("diag/") for r in rows),
          "without --diag: the attention summary and no diagnostics elements")


def stats(script, csv_path, *args):
    p = run(["/usr/bin/python3", script, "--stats", csv_path] + list(args))
    check(p.returncode == 0, f"--stats {args}: exit {p.returncode}: {p.stderr}")
    return list(csv.DictReader(io.StringIO(p.stdout)))


def check_report(srbench, script, path, csv_path, fitted):
    rep = run([srbench, "report", path, "--format", "csv"] + (["--fitted"] if fitted else []))
    check(rep.returncode == 0, f"report: {rep.stderr}")
    report = by_key(csv.DictReader(io.StringIO(rep.stdout)), "entry", "model", "metric")
    ours = stats(script, csv_path, "--quantity", "id_acc", "ood_length_acc", "shift_acc", "steps_to_target",
                 *(["--fitted"] if fitted else []))
    check(len(ours) >= 4 if not fitted else len(ours) >= 1, f"--stats rows: {len(ours)}")
    compared = 0
    for r in ours:
        want = report.get((r["entry"], r["model"], r["quantity"]))
        if not check(want is not None, f"no report row for {r['entry']} {r['model']} {r['quantity']}"):
            continue
        for k in ("n", "mean", "std", "min", "median", "max", "ci_lo", "ci_hi"):
            check(same(r[k], want[k]), f"{'fitted ' if fitted else ''}{r['entry']} {r['model']} {r['quantity']} {k}: "
                                       f"--stats {r[k]}, report {want[k]}")
        compared += 1
    return compared


def write_rows(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_compare(script, tmp, rows):
    """--compare and --append against sets of rows made here."""
    ids = list(dict.fromkeys(r["run_id"] for r in rows))
    held = set(ids[-2:])
    kept = [r for r in rows if r["run_id"] not in held]
    old, new = os.path.join(tmp, "old.csv"), os.path.join(tmp, "new.csv")
    write_rows(old, kept)
    write_rows(new, rows)
    shared = sum(1 for r in kept if r["quantity"] not in ("wall_s", "tokens_per_s", "eval_s"))

    def compare(mode, new_rows=None):
        if new_rows is not None:
            write_rows(new, new_rows)
        return run(["/usr/bin/python3", script, mode, old, new])

    p = compare("--compare")
    check(p.returncode == 0 and f"runs in both: {len(ids) - 2}, values compared: {shared}, differ: 0" in p.stdout
          and "runs only in" in p.stdout and p.stdout.rstrip().endswith(": 2"),
          f"--compare of a csv with its first {len(ids) - 2} runs: exit 0, {shared} values, 2 new runs: "
          f"{p.returncode} {p.stdout} {p.stderr}")
    # a timing differs: still the same numbers
    t = [dict(r) for r in rows]
    i = next(k for k, r in enumerate(t) if r["quantity"] == "wall_s" and r["run_id"] not in held)
    t[i]["value"] = repr(float(t[i]["value"]) + 1.0)
    p = compare("--compare", t)
    check(p.returncode == 0 and "differ: 0" in p.stdout, f"a wall_s changed is not a difference: {p.stdout}")
    # one value changed by one ulp, one value absent: both found, exit 1, --append leaves OLD as it was
    c = [dict(r) for r in rows]
    j = next(k for k, r in enumerate(c) if r["quantity"] == "token_acc" and r["run_id"] not in held
             and 0 < float(r["value"]))
    c[j]["value"] = repr(math.nextafter(float(c[j]["value"]), 0.0))
    gone = next(k for k, r in enumerate(c) if r["quantity"] == "final_train_loss" and r["run_id"] not in held)
    gone_key = c[gone]
    del c[gone]
    before = open(old).read()
    p = compare("--append", c)
    check(p.returncode == 1 and "differ: 2" in p.stdout and f"{c[j]['run_id']} token_acc" in p.stdout
          and f"{gone_key['run_id']} final_train_loss - -: old {gone_key['value']}, new absent" in p.stdout
          and "left as it was" in p.stdout,
          f"--append with one value off by an ulp and one absent: exit 1 naming both: {p.returncode} {p.stdout}")
    check(open(old).read() == before, "--append left the kept csv untouched when values differ")
    # --append: the held-back runs' rows added in NEW's order, nothing else; a second --append adds nothing
    p = compare("--append", rows)
    got = read_rows(old)
    check(p.returncode == 0 and got == kept + [r for r in rows if r["run_id"] in held],
          f"--append: the kept rows, then the 2 held-back runs' rows: exit {p.returncode}, "
          f"{len(got)} rows against {len(rows)}: {p.stdout} {p.stderr}")
    p = compare("--append", rows)
    check(p.returncode == 0 and read_rows(old) == got and "appended" not in p.stdout,
          f"a second --append adds nothing: {p.stdout}")
    # a kept csv whose last line has no end: the appended rows start on a line of their own
    write_rows(old, kept)
    with open(old, "rb+") as f:
        f.truncate(f.seek(0, os.SEEK_END) - 1)
    p = compare("--append", rows)
    check(p.returncode == 0 and read_rows(old) == kept + [r for r in rows if r["run_id"] in held],
          f"--append after a last line without its end: the same rows: {p.stdout} {p.stderr}")
    p = run(["/usr/bin/python3", script, "--compare", old])
    check(p.returncode == 2 and "two csv files" in p.stderr, f"--compare with one file: exit 2: {p.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sweep_run_files(a.srbench, SUITE, tmp)
        path = os.path.join(tmp, "suite.h5")
        p = run(["/usr/bin/python3", a.script, path])
        if not check(p.returncode == 0, f"runs_csv exit {p.returncode}: {p.stderr}"):
            return finish("")
        csv_path = os.path.join(tmp, "runs.csv")
        with open(csv_path, "w") as f:
            f.write(p.stdout)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        check_values(path, rows)
        n = check_report(a.srbench, a.script, path, csv_path, fitted=False)
        check(n >= 6, f"only {n} report rows compared")
        with h5py.File(path, "r") as f:
            any_fitted = bool((f["summary"]["fitted"][:] == 1).any())
        if check(any_fitted, "some run fitted (so --fitted is compared)"):
            check_report(a.srbench, a.script, path, csv_path, fitted=True)
        # the horizon against position_horizon.py's, attention against attention_pattern.py's
        for L in ("8", "16"):
            ph = run(["/usr/bin/python3", os.path.join(os.path.dirname(a.script), "position_horizon.py"), path,
                      "--length", L, "--format", "csv"])
            check(ph.returncode == 0, f"position_horizon: {ph.stderr}")
            theirs = by_key(csv.DictReader(io.StringIO(ph.stdout)), "entry", "model")
            ours = stats(a.script, csv_path, "--quantity", "horizon", "--condition", "id", "--length", L)
            check(len(ours) == 2 and len(theirs) == 2, f"horizon at {L}: 2 groups each: {len(ours)}, {len(theirs)}")
            for r in ours:
                t = theirs.get((r["entry"], r["model"]), {})
                for k in ("mean", "ci_lo", "ci_hi", "min", "max"):
                    check(t and abs(float(r[k]) - float(t[k])) <= 1e-9 * max(1.0, abs(float(t[k])))
                          or (t and math.isnan(float(r[k])) and math.isnan(float(t[k]))),
                          f"horizon at {L}, {r['model']} {k}: {r[k]} against position_horizon's {t.get(k)}")
        ap_ = run(["/usr/bin/python3", os.path.join(os.path.dirname(a.script), "attention_pattern.py"), path, "--all",
                   "--format", "csv"])
        check(ap_.returncode == 0, f"attention_pattern: {ap_.stderr}")
        theirs = by_key(csv.DictReader(io.StringIO(ap_.stdout)), "entry", "model", "metric")
        ours = stats(a.script, csv_path, "--quantity", "*_H", "sparse_attn_max", "--condition", "diag")
        check(len(ours) == 4, f"attention: 4 quantities of the one transformer: {len(ours)}")
        for r in ours:
            t = theirs.get((r["entry"], r["model"], r["quantity"]), {})
            for k in ("mean", "ci_lo", "ci_hi"):
                check(t and abs(float(r[k]) - float(t[k])) <= 1e-5, f"attention {r['quantity']} {k}: {r[k]} against "
                                                                   f"attention_pattern's {t.get(k)} (6 digits)")
        # --diag: the elements too, each equal to the array's
        p = run(["/usr/bin/python3", a.script, path, "--diag"])
        el = [r for r in csv.DictReader(io.StringIO(p.stdout)) if r["quantity"].startswith("diag/attn_entropy[")]
        with h5py.File(path, "r") as f:
            ok = 0
            for r in el:
                i, j = map(int, r["quantity"][len("diag/attn_entropy["):-1].split(","))
                ok += same(r["value"], f["runs"][r["run_id"]][r["condition"]]["attn_entropy"][i, j])
        check(len(el) == 3 * 2 * 2 and ok == len(el), f"--diag: attn_entropy elements {ok} of {len(el)} equal (want 12)")
        check_compare(a.script, tmp, rows)
        # --positions: each eval row's position accuracies, column by column, the unscored left out
        p = run(["/usr/bin/python3", a.script, path, "--positions"])
        pos = {(r["run_id"], r["quantity"], r["condition"], r["length"]): r["value"]
               for r in csv.DictReader(io.StringIO(p.stdout)) if r["quantity"].startswith("position_acc[")}
        want, nan_cols = {}, 0
        with h5py.File(path, "r") as f:
            for rid in f["runs"]:
                e = f["runs"][rid]["eval"]
                conds = [c.decode() if isinstance(c, bytes) else str(c) for c in e["conditions"][:]]
                for r in range(len(e["length"])):
                    row = e["position_acc"][r]
                    for j in range(len(row)):
                        if math.isnan(float(row[j])):
                            nan_cols += 1
                            continue
                        want[(rid, f"position_acc[{j}]", conds[e["condition"][r]], str(int(e["length"][r])))] = \
                            float(row[j])
        check(p.returncode == 0 and set(pos) == set(want) and all(same(pos[k], v) for k, v in want.items()),
              f"--positions: {len(pos)} rows against the files' {len(want)} scored positions, every value equal")
        check(len(want) >= 6 * 3 * 8 and nan_cols > 0,
              f"--positions compared {len(want)} values, {nan_cols} unscored columns left out (want both)")
        check(not any(k[1].startswith("position_acc[") for k in
                      ((r["run_id"], r["quantity"]) for r in rows)), "without --positions: no position_acc rows")
        # bad input
        bad = os.path.join(tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("a,b\n1,2\n")
        for cmd, needle in (([a.script, "--stats", bad], "not a runs_csv.py file"),
                            ([a.script, "--stats", csv_path, "--quantity", "nosuch"], "no row matches --quantity nosuch"),
                            ([a.script, os.path.join(tmp, "missing.h5")], "no such file")):
            p = run(["/usr/bin/python3"] + cmd)
            check(p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr,
                  f"{cmd[1:]}: exit 2 naming '{needle}': {p.returncode} {p.stderr.strip()}")
    return finish("runs_csv.py keeps every run's values, and its statistics are the report's")


if __name__ == "__main__":
    sys.exit(main())
