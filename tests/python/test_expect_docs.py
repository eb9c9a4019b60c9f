#!/usr/bin/python3
"""The suites' `expect:` entries hold on the data docs/results.md was written from.

For every configs/*.yaml and configs/repro/*.yaml with an `expect:` list, each entry
(docs/harness.md, "Claims the suite checks itself") is evaluated on the suite's committed report
tables in docs/data/ — not on a results file, which is not committed — and must hold. A suite
whose status row in docs/results.md says "not yet run" has no data yet; its entries wait:

- `<suite>.csv` (`srbench report --format csv`; `<suite>-fitted.csv` with `--fitted`): one row per
  (entry, model, grid, metric) with n, mean, min, median, max over the runs whose value is
  defined, and the cell's counts (runs, fitted). It answers the summary metrics, seq_acc at a
  (length, condition) (`seq_acc[length=L,condition=C]` rows), shift_acc of one shift (that
  condition's seq_acc row, when it is evaluated at one length), and `fitted`: a run's fitted is 1
  or 0 where id_acc is defined, so over a cell it is `fitted` ones among id_acc's n values.
- `<suite>-lengths-fitted.csv` (`--lengths --fitted`): seq_acc by length, condition id, fitted runs.
- `<suite>-errors.csv` (`--errors`): 1 − token_acc by condition and length over all runs, so
  token_acc's mean is 1 − the error's mean and its min is 1 − the error's max.
- `<suite>-runs.csv` (scripts/runs_csv.py): every run's values. It alone answers a paired entry
  (`minus: B`: the differences with B's run of the same grid point and seed) and the ends of the
  mean's interval (`agg: ci_lo` / `ci_hi`, through srbench.analysis.seed_stats, the report's own
  statistics), as `srbench report --check` computes them from the suite file.
A fitted-only entry whose cell has every run fitted is answered by the all-runs tables, which
then hold the same runs. Grid axes not in `over` are not pooled (the entry is checked at each grid
point and holds where every point holds); `over` axes pool the cells: max of their maxima, min of
their minima, the mean weighted by n; a median over several cells, or a quantity no table has,
cannot be answered and is counted as such. A suite must have at least MIN_ANSWERED of its entries
answered, so that the test cannot pass by answering nothing.

    /usr/bin/python3 tests/python/test_expect_docs.py [--root .] [--suite NAME]
"""
import argparse
import csv
import glob
import math
import os
import statistics
import sys

import yaml

from checks import check, finish

MIN_ANSWERED = 0.8
PAGE = "docs/results.md"


class Unanswerable(Exception):
    """The committed tables do not determine the entry's value."""


def read_table(path):
    """A report csv as a list of dicts, or None when the suite has no such table."""
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def grid_without(grid, axes):
    """The grid string without the items of `axes` (harness/core/grid.cpp's grid_without)."""
    return " ".join(item for item in grid.split() if item.split("=", 1)[0] not in axes)


def number(text):
    return float(text) if text not in ("", "nan") else math.nan


class SuiteTables:
    def __init__(self, data_dir, suite):
        path = lambda tail: os.path.join(data_dir, suite + tail)
        self.summary = read_table(path(".csv"))
        self.summary_fitted = read_table(path("-fitted.csv"))
        self.lengths_fitted = read_table(path("-lengths-fitted.csv"))
        self.errors = read_table(path("-errors.csv"))
        self.runs = read_table(path("-runs.csv"))
        if self.summary is None:
            raise Unanswerable(f"no docs/data/{suite}.csv")

    def cells(self, x, over):
        """The entry's cells: grid without the `over` axes → the summary's id_acc rows pooled in it
        (one per grid point; each carries the point's grid and its runs and fitted counts)."""
        out = {}
        for r in self.summary:
            if r["entry"] == x["entry"] and r["model"] == x["model"] and r["metric"] == "id_acc":
                out.setdefault(grid_without(r["grid"], over), []).append(r)
        return out


def stats_row(table, x, grid, key_col, key):
    """The row of `table` for the entry's entry and model at `grid` whose `key_col` is `key`."""
    if table is None:
        raise Unanswerable(f"no table for {key}")
    rows = [r for r in table if r["entry"] == x["entry"] and r["model"] == x["model"] and r["grid"] == grid
            and r[key_col] == key]
    if len(rows) != 1:
        raise Unanswerable(f"{len(rows)} rows for {key} at grid '{grid}'")
    return rows[0]


def has_fitted_table(tables, x):
    if x["metric"] == "seq_acc" and x.get("condition", "id") == "id":
        return tables.summary_fitted is not None or tables.lengths_fitted is not None
    return x["metric"] != "token_acc" and tables.summary_fitted is not None


def all_runs_bound(tables, x, grid_row):
    """A fitted-only entry without a fitted table: the fitted runs are a subset of the cell's, so
    an `agg: max, at_most` claim holds when the maximum over all runs meets it (and `agg: min,
    at_least` likewise with the minimum); otherwise the tables cannot say."""
    agg = x.get("agg", "mean")
    if not ((agg == "max" and "at_most" in x) or (agg == "min" and "at_least" in x)):
        raise Unanswerable("a fitted-only value, no fitted table and no bound from all runs")
    if int(grid_row["fitted"]) == 0:
        return 0, None  # no fitted run: no value, the claim fails
    n, v = cell_stats(tables, dict(x, fitted_only=False), grid_row)
    if n == 0 or not holds(x, v[agg]):
        raise Unanswerable(f"a fitted-only {agg}: the {agg} over all runs ({v[agg] if n else 'none'}) does not settle it")
    return n, v


def cell_stats(tables, x, grid_row):
    """(n, mean, min, median, max) of the entry's quantity over one cell (grid point) of runs."""
    metric, grid, fitted_only = x["metric"], grid_row["grid"], bool(x.get("fitted_only", False))
    same_runs = fitted_only and int(grid_row["fitted"]) == int(grid_row["runs"])
    use_fitted = fitted_only and not same_runs

    def from_row(r, flip=False):
        n = int(r["n"])
        v = {k: number(r[k]) for k in ("mean", "min", "median", "max")}
        if flip:  # the table holds 1 - the quantity
            v = {"mean": 1 - v["mean"], "min": 1 - v["max"], "median": 1 - v["median"], "max": 1 - v["min"]}
        return n, v

    if metric == "fitted":
        k = int(grid_row["n"])  # runs with id_acc defined: fitted is 0 or 1 exactly there
        ones = int(grid_row["fitted"])
        values = [1.0] * ones if fitted_only else [0.0] * (k - ones) + [1.0] * ones
        if not values:
            return 0, None
        return len(values), {"mean": sum(values) / len(values), "min": min(values),
                             "median": statistics.median(values), "max": max(values)}
    if use_fitted and not has_fitted_table(tables, x):
        return all_runs_bound(tables, x, grid_row)
    if metric == "token_acc":
        rows = [e for e in tables.errors or [] if e["entry"] == x["entry"] and e["model"] == x["model"]
                and e["grid"] == grid and e["condition"] == x.get("condition", "id") and e["length"] == str(x["length"])]
        if len(rows) != 1:
            raise Unanswerable(f"{len(rows)} -errors.csv rows at length {x['length']}")
        return from_row(rows[0], flip=True)
    summary = tables.summary_fitted if use_fitted else tables.summary
    if metric == "seq_acc":
        key = f"seq_acc[length={x['length']},condition={x.get('condition', 'id')}]"
        if summary is None and x.get("condition", "id") == "id":  # --lengths --fitted has it
            r = [e for e in tables.lengths_fitted or [] if e["entry"] == x["entry"] and e["model"] == x["model"]
                 and e["grid"] == grid and e["quantity"] == "seq_acc" and e["length"] == str(x["length"])]
            if len(r) == 1:
                return from_row(r[0])
        return from_row(stats_row(summary, x, grid, "metric", key))
    if metric == "shift_acc" and "condition" in x:
        prefix, tail = "seq_acc[length=", f",condition={x['condition']}]"
        rows = [r for r in summary or [] if r["entry"] == x["entry"] and r["model"] == x["model"]
                and r["grid"] == grid and r["metric"].startswith(prefix) and r["metric"].endswith(tail)]
        if len(rows) != 1:
            raise Unanswerable(f"shift {x['condition']} at {len(rows)} lengths: a per-run mean the tables lack")
        return from_row(rows[0])
    return from_row(stats_row(summary, x, grid, "metric", metric))


def per_run(tables, x):
    """(model, grid, seed) → (value, fitted) of the entry's quantity for every run of its entry, from
    -runs.csv (NaN where the run lacks it: steps_to_target or fitted below 0, as the report)."""
    if tables.runs is None:
        raise Unanswerable("a paired entry or an interval's end needs docs/data/<suite>-runs.csv")
    m = x["metric"]
    if m in ("seq_acc", "token_acc"):
        q = (m, x.get("condition", "id"), str(x["length"]))
    elif m == "shift_acc" and "condition" in x:
        raise Unanswerable("one shift's shift_acc is not in -runs.csv")
    else:
        q = (m, "", "")
    out = {}
    for r in tables.runs:
        if r["entry"] == x["entry"] and (r["quantity"], r["condition"], r["length"]) == q:
            v = number(r["value"])
            if m in ("steps_to_target", "fitted") and v < 0:
                v = math.nan
            out[(r["model"], r["grid"], r["seed"])] = (v, r["fitted"] == "1")
    return out


def evaluate_runs(tables, x, over):
    """[(grid, value)] of the entry from its runs' values: with `minus`, the paired differences."""
    from srbench.analysis import seed_stats  # the report's statistics (the built module)
    values, fitted_only, minus = per_run(tables, x), bool(x.get("fitted_only", False)), x.get("minus")
    cells = {}
    for (model, grid, seed), (v, fitted) in values.items():
        if model != x["model"]:
            continue
        cell = cells.setdefault(grid_without(grid, over), [])
        if fitted_only and not fitted:
            continue
        if minus:
            partner = values.get((minus, grid, seed))
            if partner is None or (fitted_only and not partner[1]):
                continue
            v -= partner[0]
        if not math.isnan(v):
            cell.append(v)
    if not cells:
        raise Unanswerable("no runs of the entry's entry and model in -runs.csv")
    out = []
    for grid, cell in cells.items():
        st = seed_stats(cell)
        out.append((grid, st[x.get("agg", "mean")] if st["n"] else math.nan))
    return out


def evaluate(tables, x):
    """[(grid, value)] of the entry: one per grid point left after pooling the `over` axes."""
    over = x.get("over", [])
    over = [over] if isinstance(over, str) else list(over)
    agg = x.get("agg", "mean")
    if "minus" in x or agg in ("ci_lo", "ci_hi"):
        return evaluate_runs(tables, x, over)
    cells = tables.cells(x, over)
    if not cells:
        raise Unanswerable("no summary rows of the entry's entry and model")
    out = []
    for grid, rows in cells.items():
        parts = [cell_stats(tables, x, r) for r in rows]
        parts = [(n, v) for n, v in parts if n > 0 and v is not None and not math.isnan(v["mean"])]
        if not parts:
            out.append((grid, math.nan))  # k = 0: no value, the claim fails (as report --check)
        elif len(parts) == 1:
            out.append((grid, parts[0][1][agg]))
        elif agg == "max":
            out.append((grid, max(v["max"] for _, v in parts)))
        elif agg == "min":
            out.append((grid, min(v["min"] for _, v in parts)))
        elif agg == "mean":
            out.append((grid, sum(n * v["mean"] for n, v in parts) / sum(n for n, _ in parts)))
        else:
            raise Unanswerable(f"the {agg} over {len(parts)} pooled cells")
    return out


def holds(x, v):
    if math.isnan(v):
        return False
    if "at_least" in x:
        return v >= x["at_least"]
    if "at_most" in x:
        return v <= x["at_most"]
    lo, hi = x["between"]
    return lo <= v <= hi


def bound_text(x):
    if "at_least" in x:
        return f">= {x['at_least']}"
    if "at_most" in x:
        return f"<= {x['at_most']}"
    return f"in {x['between']}"


def claim_text(x):
    q = x["metric"] + (f"[length={x['length']}]" if "length" in x else "") + \
        (f"[condition={x['condition']}]" if "condition" in x else "")
    over = x.get("over")
    model = x["model"] + (f" − {x['minus']}" if "minus" in x else "")
    return (f"{x['entry']} · {model} · {q}, {x.get('agg', 'mean')}" + (f" over {over}" if over else "") +
            (" of fitted runs" if x.get("fitted_only") else "") + f", {bound_text(x)}")


def not_yet_run(root, where):
    """Whether the page's status table says the suite `where` (configs/….yaml) has not run yet: a
    suite may carry claims registered before it runs, which have no data to hold on until then."""
    with open(os.path.join(root, PAGE)) as f:
        for line in f:
            if line.startswith(f"| `{where}`"):
                return "not yet run" in line.rstrip().rstrip("|").rsplit("|", 1)[-1]
    return False


def check_suite(root, config):
    """Checks one suite's entries; returns (suite, answered, unanswered) or None without entries."""
    with open(config) as f:
        doc = yaml.safe_load(f)
    suite, where = doc["name"], os.path.relpath(config, root)
    listed = doc.get("expect") or []
    # The page's claims; an entry citing elsewhere (the README's quickstart) has its data elsewhere.
    entries = {i: x for i, x in enumerate(listed) if str(x.get("source", "")).startswith(PAGE)}
    if len(entries) < len(listed):
        print(f"{suite}: {len(listed) - len(entries)} entries cite another source than {PAGE}: not checked here")
    if not entries:
        return None
    try:
        tables = SuiteTables(os.path.join(root, "docs", "data"), suite)
    except Unanswerable as e:
        if not_yet_run(root, where):
            print(f"{suite}: not yet run (docs/results.md's status table): its {len(entries)} entries wait for its data")
            return None
        check(False, f"{where}: {len(entries)} expect: entries but {e}")
        return suite, 0, len(entries), []
    answered, unanswered = 0, []
    for i, x in entries.items():
        try:
            values = evaluate(tables, x)
        except Unanswerable as e:
            unanswered.append(f"  {where} expect[{i}] {claim_text(x)}: {e}")
            continue
        answered += 1
        for grid, v in values:
            check(holds(x, v), f"{where} expect[{i}] FAILS on docs/data: {claim_text(x)}"
                               f"{' at ' + grid if grid else ''}: measured {v:.6g}; source: {x['source']}")
    check(answered >= MIN_ANSWERED * len(entries),
          f"{where}: only {answered} of {len(entries)} expect: entries answered by docs/data (< {MIN_ANSWERED:.0%})")
    return suite, answered, len(unanswered), unanswered


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--suite", help="only configs/SUITE.yaml (repro/NAME for configs/repro/NAME.yaml)")
    ap.add_argument("--verbose", action="store_true", help="list the entries not answered")
    args = ap.parse_args()
    patterns = [args.suite] if args.suite else ["*", os.path.join("repro", "*")]
    configs = sorted(c for p in patterns for c in glob.glob(os.path.join(args.root, "configs", p + ".yaml")))
    results = [r for r in (check_suite(args.root, c) for c in configs) if r]
    check(results, f"no configs/*.yaml or configs/repro/*.yaml with expect: entries under {args.root}")
    total_answered = total_unanswered = 0
    for suite, answered, n_unanswered, lines in results:
        print(f"{suite}: {answered} answered, {n_unanswered} not answerable from docs/data")
        if args.verbose and lines:
            print("\n".join(lines))
        total_answered += answered
        total_unanswered += n_unanswered
    print(f"all: {total_answered} answered, {total_unanswered} not answerable")
    return finish(f"{total_answered} expect: entries of {len(results)} suites hold on docs/data")


if __name__ == "__main__":
    sys.exit(main())
