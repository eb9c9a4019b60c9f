#!/usr/bin/python3
"""A suite's expect: list and `srbench report --check / --agg / --over` (harness.md, "Claims the
suite checks itself" and "Aggregation across seeds"), against numpy over the suite file itself.

results_fixture writes the run files of its 12-run suite (parity; models a and b; grid train.lr;
seeds 0-2; one run missing, one failed, one diverged) with made-up results; this script adds
expect: lists to that suite, merges, and checks:
  - the run ids do not change when an expect: list is added (fixture ids and sweep --dry-run);
  - entries that hold: --check exits 0, and every row's value, mean and k/n equal numpy's;
  - an entry that fails: exit 1, that row FAILS, the others hold;
  - malformed entries: a ConfigError (exit 2) naming file:line, at sweep --dry-run and at --check;
  - report --agg max --over seed,train.lr --format csv: every value equals numpy's.

  /usr/bin/python3 test_expect.py --srbench build/harness/srbench --fixture build/tests/results_fixture

Exit 0 when everything holds; 1 with a list of failures otherwise (it never skips).
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
import pandas as pd
from checks import check, finish

BASE, BASE_LINES = "", 0  # the fixture's suite text (results_fixture --suite) and its line count
AGG = {"mean": np.mean, "median": np.median, "max": np.max, "min": np.min}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def same(a, b):
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def write(path, content):
    with open(path, "w") as f:
        f.write(content)
    return path


def make_suite_file(a, tmp, name, suite_yaml, stored_yaml=None):
    """The fixture's run files for suite_yaml (storing stored_yaml if given), merged; (path, ids)."""
    d = os.path.join(tmp, name)
    suite = write(os.path.join(tmp, name + ".yaml"), suite_yaml)
    cmd = [a.fixture, d, suite] + ([write(os.path.join(tmp, name + ".stored.yaml"), stored_yaml)] if stored_yaml else [])
    fx = run(cmd)
    check(fx.returncode == 0, f"results_fixture {name}: exit {fx.returncode}: {fx.stderr}")
    ids = [l.split()[2] for l in fx.stdout.splitlines() if l.startswith("run ")]
    path = os.path.join(tmp, name + ".h5")
    m = run([a.srbench, "merge", os.path.join(d, "mini"), "--out", path])
    check(m.returncode == 0, f"merge {name}: exit {m.returncode}: {m.stderr}")
    return path, ids


class Runs:
    """Every run of a suite file as numpy sees it: summary metrics, and eval rows by (length, condition)."""

    def __init__(self, path):
        with h5py.File(path, "r") as f:
            self.df = pd.DataFrame(f["summary"][:])
            for c in ("run_id", "entry", "model", "grid", "status"):
                self.df[c] = [text(v) for v in self.df[c]]
            self.evals = {}
            for rid in self.df["run_id"]:
                ev = f["runs"][rid]["eval"]
                conds = [text(c) for c in ev["conditions"][:]]
                self.evals[rid] = {(int(L), conds[C]): (float(s), float(t)) for L, C, s, t in
                                   zip(ev["length"][:], ev["condition"][:], ev["seq_acc"][:], ev["token_acc"][:])}

    def cell(self, model, lr=None):
        d = self.df[(self.df["entry"] == "parity") & (self.df["model"] == model)]
        return d if lr is None else d[d["grid"] == f"train.lr={lr}"]

    def values(self, runs, metric, length=None, condition=None, fitted_only=False):
        out = []
        for _, r in runs.iterrows():
            if fitted_only and r["fitted"] != 1:
                continue
            rows = self.evals[r["run_id"]]
            if metric in ("seq_acc", "token_acc"):
                v = rows.get((length, condition or "id"), (math.nan, math.nan))[metric == "token_acc"]
            elif metric == "shift_acc" and condition:  # that shift's rows' mean seq_acc
                accs = [acc for (L, c), (acc, _) in rows.items() if c == condition]
                v = float(np.mean(accs)) if accs else math.nan
            else:
                v = float(r[metric])
                if metric in ("steps_to_target", "fitted") and v < 0:
                    v = math.nan
            if not math.isnan(v):
                out.append(v)
        return np.array(out)


def entry(model, metric, bound, agg="mean", over=None, length=None, condition=None, fitted_only=False, minus=None):
    e = f"  - {{entry: parity, model: {model}, metric: {metric}, agg: {agg}, {bound}"
    if minus:
        e += f", minus: {minus}"
    if over:
        e += f", over: [{', '.join(over)}]"
    if length is not None:
        e += f", length: {length}"
    if condition:
        e += f', condition: "{condition}"'
    if fitted_only:
        e += ", fitted_only: true"
    return e + ', source: "test"}\n'


def bound_for(agg, values):
    """A bound the aggregate of `values` (one list per grid point) meets: tight, on the measured side."""
    v = [float(AGG[agg](x)) for x in values]
    if agg == "mean":
        return f"between: [{min(v) - 1e-9!r}, {max(v) + 1e-9!r}]"
    return f"at_least: {min(v)!r}" if agg in ("max", "min") else f"at_most: {max(v)!r}"


def paired_values(R, metric, lr=None, length=None, fitted_only=False):
    """metric(a) − metric(b) for each run of a (at learning rate lr, or all) and b's run of the same grid
    point and seed, where both are defined (and both fitted under fitted_only)."""
    b = R.cell("b")
    out = []
    for _, ra in R.cell("a", lr).iterrows():
        rb = b[(b["grid"] == ra["grid"]) & (b["seed"] == ra["seed"])]
        if len(rb) != 1 or (fitted_only and (ra["fitted"] != 1 or rb.iloc[0]["fitted"] != 1)):
            continue
        va, vb = R.values(ra.to_frame().T, metric, length), R.values(rb, metric, length)
        if len(va) and len(vb):
            out.append(va[0] - vb[0])
    return np.array(out)


def paired_entries(R):
    """Claims on a − b paired by seed (minus: b), pooled over the learning rates and one per rate:
    [(yaml entry, the rows --check must print)]; a claim no pair enters (k = 0) is untestable."""
    out = []
    for metric, agg, over, length, fitted_only in (("id_acc", "mean", ["train.lr"], None, False),
                                                   ("token_acc", "median", None, 16, False),
                                                   ("id_acc", "min", ["train.lr"], None, True),
                                                   ("id_acc", "ci_lo", None, None, False)):
        cells = [(None, "")] if over else [(lr, f"train.lr={lr}") for lr in ("0.001", "0.01")]
        values = [paired_values(R, metric, lr, length, fitted_only) for lr, _ in cells]
        ci = agg.startswith("ci_")  # the interval's end: checked against report --compare's (main)
        bound = "at_least: -1" if ci or any(len(v) == 0 for v in values) else bound_for(agg, values)
        rows = [(metric, None if ci else float(AGG[agg](v)) if len(v) else math.nan,
                 float(np.mean(v)) if len(v) else math.nan,
                 len(v), len(R.cell("a", lr)), grid,
                 "holds" if len(v) >= (2 if ci else 1) else "FAILS" if len(v) else "FAILS: untestable (k = 0)")
                for (lr, grid), v in zip(cells, values)]
        out.append((entry("a", metric, bound, agg, over, length, fitted_only=fitted_only, minus="b"), rows))
    check(sum(r[3] for _, rows in out for r in rows) >= 6, "the paired claims compare too few pairs")
    return out


def holding_entries(R):
    """(yaml entries, the rows --check must print: metric, value, mean, k, n, grid, result), all holding."""
    specs = [  # model, metric, agg, over, length, condition
        ("a", "id_acc", "mean", ["seed", "train.lr"], None, None),
        ("b", "shift_acc", "max", ["train.lr"], None, None),
        ("a", "seq_acc", "median", ["train.lr"], 16, None),
        ("b", "token_acc", "min", None, 4, "p1=0.9"),  # no over: one row per learning rate
        ("b", "steps_to_target", "min", ["train.lr"], None, None),
        ("a", "shift_acc", "mean", ["train.lr"], None, "p1=0.9"),
    ]
    yaml, rows = "", []
    for model, metric, agg, over, length, cond in specs:
        cells = [(R.cell(model), "")] if over else [(R.cell(model, lr), f"train.lr={lr}") for lr in ("0.001", "0.01")]
        values = [R.values(runs, metric, length, cond) for runs, _ in cells]
        if any(len(v) == 0 for v in values):
            check(False, f"the fixture has no {metric} values for model {model}")
            continue
        yaml += entry(model, metric, bound_for(agg, values), agg, over, length, cond)
        for (runs, grid), v in zip(cells, values):
            rows.append((metric, float(AGG[agg](v)), float(np.mean(v)), len(v), len(runs), grid, "holds"))
    return yaml, rows


def fitted_only_entry(R):
    """An at_least -1 claim over the fitted runs only: holds when one fitted, fails (no value) otherwise."""
    runs = R.cell("a")
    v = R.values(runs, "id_acc", fitted_only=True)
    row = ("id_acc", float(np.max(v)) if len(v) else math.nan, float(np.mean(v)) if len(v) else math.nan, len(v),
           len(runs), "", "holds" if len(v) else "FAILS: untestable (k = 0)")
    return entry("a", "id_acc", "at_least: -1", "max", ["train.lr"], fitted_only=True), row


def untestable_entry(R):
    """A claim no value enters (k = 0): a model none of whose runs fitted, under fitted_only, or a
    metric none of its runs defines (steps_to_target never reached). It cannot hold whatever its
    bound, and says it was untestable."""
    for model in sorted(set(R.df[R.df["entry"] == "parity"]["model"])):
        runs = R.cell(model)
        for metric, fitted_only in (("id_acc", True), ("steps_to_target", False)):
            if len(R.values(runs, metric, fitted_only=fitted_only)) == 0:
                row = (metric, math.nan, math.nan, 0, len(runs), "", "FAILS: untestable (k = 0)")
                return entry(model, metric, "at_least: -1", "max", ["train.lr"], fitted_only=fitted_only), row
    check(False, "the fixture has a model whose runs give no value for a claim (none fitted, or no steps_to_target)")
    return "", None


def check_rows(out, rows):
    df = pd.read_csv(io.StringIO(out), keep_default_na=False, na_values=["nan", ""])
    check(list(df.columns) == ["claim", "file_line", "grid", "value", "mean", "ci_lo", "ci_hi", "k", "n", "source",
                               "result"], f"--check csv columns {list(df.columns)}")
    check(len(df) == len(rows), f"--check rows {len(df)} != {len(rows)}")
    for i, ((metric, value, mean, k, n, grid, want), (_, got)) in enumerate(zip(rows, df.iterrows())):
        check(metric in got["claim"], f"row {i}: claim {got['claim']} names {metric}")
        check(("" if pd.isna(got["grid"]) else text(got["grid"])) == grid, f"row {i}: grid '{got['grid']}' != '{grid}'")
        if value is None:  # an interval's end (agg ci_lo / ci_hi): the row's own interval, inside [min, max]
            value = got["ci_lo"] if "low end" in got["claim"] else got["ci_hi"]
            check(got["k"] < 2 or got["ci_lo"] <= got["mean"] <= got["ci_hi"],
                  f"row {i}: interval {got['ci_lo']}, {got['ci_hi']}")  # one value (k = 1): no interval, fails
        check(same(got["value"], value), f"row {i} {metric}: value {got['value']} != numpy {value}")
        check(same(got["mean"], mean), f"row {i} {metric}: mean {got['mean']} != numpy {mean}")
        check((got["k"], got["n"]) == (k, n), f"row {i} {metric}: k/n {got['k']}/{got['n']} != {k}/{n}")
        check(got["result"] == want, f"row {i} {metric}: {got['result']}, expected {want}")
        check("(stored suite):" in text(got["file_line"]), f"row {i}: file_line {got['file_line']}")


def dry_run_ids(a, path):
    r = run([a.srbench, "sweep", path, "--dry-run"])
    check(r.returncode == 0, f"sweep --dry-run {path}: exit {r.returncode}: {r.stderr}")
    return [l.split()[1] for l in r.stdout.splitlines()[1:] if l.strip() and l.split()[0].isdigit()]


MALFORMED = [  # (entry, what the message must name)
    ('{entry: parity, model: a, metric: id_acc, at_lest: 0.5, source: "x"}', "did you mean 'at_least'"),
    ('{entry: parity, model: c, metric: id_acc, at_least: 0.5, source: "x"}', "no model entry 'c'"),
    ('{entry: parit, model: a, metric: id_acc, at_least: 0.5, source: "x"}', "did you mean 'parity'"),
    ('{entry: parity, model: a, metric: id_accc, at_least: 0.5, source: "x"}', "no metric 'id_accc'"),
    ('{entry: parity, model: a, metric: seq_acc, length: 32, at_least: 0.5, source: "x"}', "length 32"),
    ('{entry: parity, model: a, metric: seq_acc, length: 4, condition: "p1=0.5", at_least: 0.5, source: "x"}',
     "no condition of entry parity 'p1=0.5'"),
    ('{entry: parity, model: a, metric: id_acc, over: [model.layers], at_least: 0.5, source: "x"}',
     "no grid axis 'model.layers'"),
    ('{entry: parity, model: a, metric: id_acc, at_least: 0.5, at_most: 0.9, source: "x"}', "exactly one of"),
    ('{entry: parity, model: a, metric: id_acc, at_least: 0.5}', "missing key 'source'"),
    ('{entry: parity, model: a, metric: id_acc, agg: best, at_least: 0.5, source: "x"}', "no aggregation 'best'"),
    ('{entry: parity, model: a, metric: id_acc, between: [0.9, 0.1], source: "x"}', "is above high"),
    ('{entry: parity, model: a, metric: id_acc, length: 4, at_least: 0.5, source: "x"}', "length goes with"),
    ('{entry: parity, model: a, metric: id_acc, condition: "p1=0.9", at_least: 0.5, source: "x"}',
     "condition goes with"),
    ('{entry: parity, model: a, metric: shift_acc, condition: id, at_least: 0.5, source: "x"}',
     "no condition of entry parity 'id'"),
    ('{entry: parity, model: a, metric: seq_acc, at_least: 0.5, source: "x"}', "needs a length"),
    ('[parity, a]', "expected a map"),
    ('{entry: parity, model: a, minus: a, metric: id_acc, at_least: 0.5, source: "x"}', "minus names the claim's own"),
    ('{entry: parity, model: a, minus: bb, metric: id_acc, at_least: 0.5, source: "x"}', "did you mean 'b'"),
]


def check_malformed(a, tmp, good_yaml):
    line = BASE_LINES + 3  # "expect:" on BASE_LINES + 1, one good entry, then the malformed one
    for i, (e, needle) in enumerate(MALFORMED):
        y = write(os.path.join(tmp, f"bad{i}.yaml"), good_yaml + "  - " + e + "\n")
        r = run([a.srbench, "sweep", y, "--dry-run"])
        check(r.returncode == 2, f"malformed {e}: sweep --dry-run exit {r.returncode} (expected 2): {r.stderr}")
        check(f"bad{i}.yaml:{line}" in r.stderr and needle in r.stderr,
              f"malformed {e}: message names bad{i}.yaml:{line} and '{needle}': {r.stderr}")
    # --check on a suite file whose stored suite text has a malformed entry: exit 2, located
    path, _ = make_suite_file(a, tmp, "stored-bad", BASE, good_yaml + "  - " + MALFORMED[1][0] + "\n")
    r = run([a.srbench, "report", path, "--check"])
    check(r.returncode == 2, f"--check on a malformed stored entry: exit {r.returncode} (expected 2): {r.stderr}")
    check(f"(stored suite):{line}" in r.stderr and "no model entry 'c'" in r.stderr,
          f"--check's error names the stored suite's line {line}: {r.stderr}")


def check_agg_over(a, R, path):
    r = run([a.srbench, "report", path, "--agg", "max", "--over", "seed,train.lr", "--format", "csv"])
    if not check(r.returncode == 0, f"report --agg max --over: exit {r.returncode}: {r.stderr}"):
        return
    df = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False, na_values=["nan", ""])
    check(set(df["agg"]) == {"max"} and set(df["over"]) == {"seed,train.lr"}, "csv labels agg and over")
    check(sorted(set(df["model"])) == ["a", "b"] and set(df["grid"].fillna("")) == {""}, "one cell per model")
    compared = 0
    for _, row in df.iterrows():
        v = R.values(R.cell(row["model"]), row["metric"])
        compared += 1
        check(same(row["value"], np.max(v) if len(v) else math.nan), f"--agg max {row['model']} {row['metric']}")
        check((row["k"], row["n"]) == (len(v), len(R.cell(row["model"]))), f"k/n {row['model']} {row['metric']}")
    check(compared >= 14, f"compared only {compared} --agg values")
    t = run([a.srbench, "report", path, "--agg", "median", "--over", "train.lr"])
    check(t.returncode == 0 and "median over seeds × train.lr" in t.stdout and "k/n" in t.stdout,
          f"the table labels the aggregation: {t.stdout[:400]}")
    bad = run([a.srbench, "report", path, "--agg", "best"])
    check(bad.returncode == 2 and "--agg must be mean, median, max or min" in bad.stderr, f"--agg best: {bad.stderr}")
    bad = run([a.srbench, "report", path, "--over", "model.layers"])
    check(bad.returncode == 2 and "not a grid axis" in bad.stderr, f"--over model.layers: {bad.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--fixture", required=True)
    a = ap.parse_args()
    global BASE, BASE_LINES
    BASE = run([a.fixture, "--suite"]).stdout  # the fixture's suite; expect: lists are appended to it
    BASE_LINES = BASE.count("\n")
    check(BASE.startswith("name: mini\n"), f"results_fixture --suite prints the suite: {BASE[:80]}")
    with tempfile.TemporaryDirectory(prefix="srbench-expect-") as tmp:
        base_path, base_ids = make_suite_file(a, tmp, "base", BASE)
        R = Runs(base_path)
        holding, rows = holding_entries(R)
        paired = paired_entries(R)
        p_path, _ = make_suite_file(a, tmp, "paired", BASE + "expect:\n" + "".join(y for y, _ in paired))
        r = run([a.srbench, "report", p_path, "--check", "--format", "csv"])
        check_rows(r.stdout, [row for _, rows_ in paired for row in rows_])
        check(r.returncode == (0 if all(row[6] == "holds" for _, rows_ in paired for row in rows_) else 1),
              f"--check on the paired claims: exit {r.returncode}")
        check("a − b" in r.stdout and "paired" in r.stdout, "a paired claim reads 'a − b …, paired'")
        # the paired id_acc interval per learning rate is report --compare a b's (its own code)
        got = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False, na_values=["nan", ""])
        cmp = pd.read_csv(io.StringIO(run([a.srbench, "report", p_path, "--compare", "a", "b", "--format", "csv"]).stdout),
                          keep_default_na=False, na_values=["nan", ""])
        ends = got[got["claim"].str.contains("low end")]
        check(len(ends) == 2, f"two ci_lo rows (one per learning rate): {len(ends)}")
        for _, e in ends.iterrows():
            c = cmp[(cmp["metric"] == "id_acc") & (cmp["grid"] == e["grid"])]
            check(len(c) == 1 and same(c.iloc[0]["diff_ci_lo"], e["value"]) and same(c.iloc[0]["diff_mean"], e["mean"])
                  and int(c.iloc[0]["diff_n"]) == e["k"],
                  f"ci_lo at {e['grid']}: {e['value']} / {e['mean']} / k {e['k']} against --compare's {c.to_dict('records')}")
        for y, rows_ in paired:  # the claims that hold join the holding list
            if all(row[6] == "holds" for row in rows_):
                holding += y
                rows += rows_
        good_yaml = BASE + "expect:\n" + holding.splitlines(keepends=True)[0]

        path, ids = make_suite_file(a, tmp, "holds", BASE + "expect:\n" + holding)
        check(ids == base_ids and len(ids) == 12, "an expect: list leaves the fixture's run ids unchanged")
        check(dry_run_ids(a, os.path.join(tmp, "base.yaml")) == dry_run_ids(a, os.path.join(tmp, "holds.yaml")) ==
              base_ids, "sweep --dry-run lists the same run ids with and without expect:")
        r = run([a.srbench, "report", path, "--check", "--format", "csv"])
        check(r.returncode == 0, f"--check, all hold: exit {r.returncode}: {r.stdout} {r.stderr}")
        check_rows(r.stdout, rows)
        t = run([a.srbench, "report", path, "--check"])
        check(t.returncode == 0 and f"{len(rows)} of {len(rows)} hold" in t.stdout, f"table form: {t.stdout}")

        failing = entry("a", "id_acc", f"at_least: {rows[0][1] + 0.01!r}", "mean", ["seed", "train.lr"])
        fitted_yaml, fitted_row = fitted_only_entry(R)
        untestable_yaml, untestable_row = untestable_entry(R)
        path, _ = make_suite_file(a, tmp, "fails", BASE + "expect:\n" + holding + failing + fitted_yaml + untestable_yaml)
        r = run([a.srbench, "report", path, "--check", "--format", "csv"])
        check(r.returncode == 1, f"--check, one fails: exit {r.returncode}: {r.stderr}")
        lx = run([a.srbench, "report", path, "--check", "--format", "latex"])
        body = lx.stdout[lx.stdout.find("\\midrule\n"):lx.stdout.find("\\bottomrule")].splitlines()[1:]
        n_claims = len(list(csv.reader(io.StringIO(r.stdout)))) - 1  # the csv form's rows
        check(lx.returncode == 1 and len(body) == n_claims and sum("FAILS" in l for l in body) >= 1
              and lx.stdout.rstrip().splitlines()[-1].startswith("% ") and " hold" in lx.stdout.splitlines()[-1],
              f"--check --format latex: exit {lx.returncode} (expected 1), {len(body)} rows for {n_claims} claims:\n"
              f"{lx.stdout}{lx.stderr}")
        if r.returncode == 1:
            check_rows(r.stdout, rows + [rows[0][:6] + ("FAILS",), fitted_row] + ([untestable_row] if untestable_row else []))

        check_malformed(a, tmp, good_yaml)
        check_agg_over(a, R, base_path)
        r = run([a.srbench, "report", base_path, "--check"])
        check(r.returncode == 0 and "no expect: entries" in r.stdout, f"--check without expect: {r.stdout}")
    return finish("expect: entries and report --check / --agg / --over against numpy")


if __name__ == "__main__":
    sys.exit(main())
