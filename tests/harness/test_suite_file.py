#!/usr/bin/python3
"""The suite file as h5py and pandas see it (harness.md, "Results (HDF5)" and "Across seeds").

results_fixture writes the run files of a 12-run suite with made-up results (one run left out,
one failed, one diverged, one with a checkpoint); `srbench merge` joins them. This script checks
the layout with h5py and pandas alone (names, dtypes, shapes, attributes) and that every number
of `srbench report --format csv` equals what numpy computes from the HDF5 file itself.

  /usr/bin/python3 test_suite_file.py --srbench build/harness/srbench --fixture build/tests/results_fixture

Exit 0 when everything holds; 1 with a list of failures otherwise (it never skips).
"""
import argparse
import io
import math
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import pandas as pd
import yaml
from checks import check, finish
from srbench import _srbench

SUMMARY_FIELDS = ["run_id", "task", "entry", "model", "seed", "grid", "status", "id_acc", "ood_length_acc",
                  "shift_acc", "shortcut_gap", "steps_to_target", "final_train_loss", "wall_s", "tokens_per_s",
                  "ood_token_acc", "fitted"]
STRING_FIELDS = {"run_id", "task", "entry", "model", "grid", "status"}
INT_FIELDS = {"seed", "steps_to_target", "fitted"}
RUN_ATTRS_STR = {"config", "task", "entry", "model", "grid", "status", "message", "splines_from", "splines_task",
                 "build"}
RUN_ATTRS_INT = {"seed", "steps_to_target", "bits_per_byte", "fitted"}
RUN_ATTRS_FLOAT = {"wall_s", "tokens_per_s", "id_acc", "ood_length_acc", "shift_acc", "shortcut_gap",
                   "final_train_loss", "ood_token_acc", "chance", "eval_s"}
METRICS = ["id_acc", "ood_length_acc", "ood_token_acc", "shift_acc", "shortcut_gap", "final_train_loss"]
TRAIN_MIN, TRAIN_MAX = 2, 8  # the fixture suite's train.length


def add_later_metrics(fields):
    """The layout above is docs/harness.md's, written out by hand. A metric added to the metric
    table after it (fields: _srbench.metric_fields()) is expected where the table puts it: its own
    run attribute and a trailing /summary column of its kind, and its report line when it is
    summarised (numpy's statistics of its column, as for the others)."""
    known = set(SUMMARY_FIELDS) | RUN_ATTRS_INT | RUN_ATTRS_FLOAT
    for m in fields:
        if m["name"] in known:
            continue
        SUMMARY_FIELDS.append(m["name"])
        (INT_FIELDS if m["kind"] == "int" else set()).add(m["name"])
        (RUN_ATTRS_INT if m["kind"] == "int" else RUN_ATTRS_FLOAT).add(m["name"])
        if m["summarised"]:
            METRICS.append(m["name"])


add_later_metrics(_srbench.metric_fields())


def same(a, b, rtol=1e-12):
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12)


def is_utf8_vlen(dtype):
    info = h5py.check_string_dtype(dtype)
    return info is not None and info.encoding == "utf-8" and info.length is None


def text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def stats(values):
    """n, mean, std (ddof=1), min, median, max of the non-NaN values."""
    v = np.array([x for x in values if not math.isnan(x)], dtype=np.float64)
    if len(v) == 0:
        return 0, math.nan, math.nan, math.nan, math.nan, math.nan
    std = float(np.std(v, ddof=1)) if len(v) > 1 else math.nan
    return len(v), float(np.mean(v)), std, float(np.min(v)), float(np.median(v)), float(np.max(v))


def check_layout(f, expected_ids, checkpoint_id):
    root = dict(f.attrs)
    check(set(root) == {"format_version", "srbench_version", "srbench_commit", "suite", "created"},
          f"root attrs {sorted(root)}")
    check(f.attrs.get_id("format_version").dtype == np.int64 and root.get("format_version") == 1,
          "format_version: int64 1")
    check(str(root.get("srbench_commit")) == COMMIT[0], f"srbench_commit {root.get('srbench_commit')} != {COMMIT[0]}")
    for name in ("srbench_version", "srbench_commit", "suite", "created"):
        check(is_utf8_vlen(f.attrs.get_id(name).dtype), f"root attr {name}: variable-length UTF-8")
    check(str(root.get("suite", "")).startswith("name: mini\n"), "root attr suite holds the suite YAML")
    check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(root.get("created", ""))) is not None,
          f"created is ISO-8601 UTC: {root.get('created')}")
    check(set(f.keys()) == {"summary", "runs"}, f"root members {sorted(f.keys())}")

    s = f["summary"]
    check(s.shape == (len(expected_ids),), f"summary shape {s.shape}")
    check(list(s.dtype.names) == SUMMARY_FIELDS, f"summary fields {s.dtype.names}")
    for name in SUMMARY_FIELDS:
        dt = s.dtype[name]
        if name in STRING_FIELDS:
            check(is_utf8_vlen(dt), f"summary.{name}: variable-length UTF-8 string, got {dt}")
        elif name in INT_FIELDS:
            check(dt == np.dtype("<i8"), f"summary.{name}: int64, got {dt}")
        else:
            check(dt == np.dtype("<f8"), f"summary.{name}: float64, got {dt}")

    df = pd.DataFrame(f["summary"][:])
    check(list(df.columns) == SUMMARY_FIELDS, "pandas.DataFrame(summary) has the fields as columns")
    for c in STRING_FIELDS:
        df[c] = df[c].map(text)
    check(list(df["run_id"]) == expected_ids, "summary rows follow the runs' order in the suite")
    check(set(f["runs"].keys()) == set(expected_ids), "one /runs group per summary row")

    for _, row in df.iterrows():
        rid = row["run_id"]
        g = f["runs"][rid]
        attrs = set(g.attrs)
        check(attrs == RUN_ATTRS_STR | RUN_ATTRS_INT | RUN_ATTRS_FLOAT, f"{rid} attrs {sorted(attrs)}")
        for a in RUN_ATTRS_STR:
            check(is_utf8_vlen(g.attrs.get_id(a).dtype), f"{rid}@{a}: variable-length UTF-8")
        for a in RUN_ATTRS_INT:
            check(g.attrs.get_id(a).dtype == np.int64, f"{rid}@{a}: int64")
        for a in RUN_ATTRS_FLOAT:
            check(g.attrs.get_id(a).dtype == np.float64, f"{rid}@{a}: float64")
        for name in SUMMARY_FIELDS[1:]:
            want = row[name]
            got = g.attrs[name]
            ok = text(got) == want if name in STRING_FIELDS else same(got, want)
            check(ok, f"{rid}: summary.{name} {want!r} equals the run's attribute {got!r}")

        curve = g["curve"]
        # val_token_acc only under train.fit_metric: token_acc
        token_fit = "fit_metric: token_acc" in text(g.attrs["config"])
        check(set(curve.keys()) == {"step", "train_loss", "val_acc", "lr", "grad_norm"} | (
            {"val_token_acc"} if token_fit else set()), f"{rid}/curve members")
        n = curve["step"].shape
        for k in curve:
            check(curve[k].ndim == 1 and curve[k].shape == n, f"{rid}/curve/{k}: 1-D, aligned")
            check(curve[k].dtype == (np.int64 if k == "step" else np.float64), f"{rid}/curve/{k} dtype")
        ev = g["eval"]
        check(set(ev.keys()) == {"length", "condition", "loss", "token_acc", "seq_acc", "conditions", "seen_frac",
                                 "input_space", "position_acc"}, f"{rid}/eval members")
        n = ev["length"].shape
        for k in ("length", "condition", "loss", "token_acc", "seq_acc", "seen_frac", "input_space"):
            check(ev[k].ndim == 1 and ev[k].shape == n, f"{rid}/eval/{k}: 1-D, aligned")
            check(ev[k].dtype == (np.int64 if k in ("length", "condition") else np.float64), f"{rid}/eval/{k} dtype")
        check(is_utf8_vlen(ev["conditions"].dtype), f"{rid}/eval/conditions: variable-length UTF-8")
        check(ev["position_acc"].ndim == 2 and ev["position_acc"].shape[0] == n[0] and ev["position_acc"].dtype == np.float64,
              f"{rid}/eval/position_acc: [rows, positions] float64")
        conds = [text(c) for c in ev["conditions"][:]]
        check(conds[:1] == ["id"], f"{rid}/eval/conditions starts with id: {conds}")
        check(all(0 <= c < len(conds) for c in ev["condition"][:]), f"{rid}/eval/condition indexes conditions")

        # the derived metrics agree with the evaluation rows (harness.md's definitions)
        if row["status"] != "failed":
            L, C, A = ev["length"][:], ev["condition"][:], ev["seq_acc"][:]
            id_rows = A[(C == 0) & (L >= TRAIN_MIN) & (L <= TRAIN_MAX)]
            ood_rows = A[(C == 0) & (L > TRAIN_MAX)]
            shift = min(np.mean(A[C == c]) for c in range(1, len(conds)))
            check(same(row["id_acc"], np.mean(id_rows)), f"{rid}: id_acc from eval rows")
            check(same(row["ood_length_acc"], np.mean(ood_rows)), f"{rid}: ood_length_acc from eval rows")
            ood_tokens = ev["token_acc"][:][(C == 0) & (L > TRAIN_MAX)]
            check(same(row["ood_token_acc"], np.mean(ood_tokens)), f"{rid}: ood_token_acc from eval rows")
            check(same(row["shift_acc"], shift), f"{rid}: shift_acc from eval rows")
            check(same(row["shortcut_gap"], np.mean(id_rows) - min(np.mean(ood_rows), shift)), f"{rid}: shortcut_gap")

        has_diag = "diag" in g
        check(has_diag == (row["status"] != "failed"), f"{rid}: diag present exactly when there are diagnostics")
        if has_diag:
            d = g["diag"]
            check(set(d.keys()) == {"attn_entropy", "attn_max", "value_entropy", "hidden_entropy"}, f"{rid}/diag")
            check(d["attn_entropy"].shape == (1, 2) and d["attn_max"].shape == (1, 2), f"{rid}/diag [layers,heads]")
            check(d["value_entropy"].shape == (1,) and d["hidden_entropy"].shape == (1,), f"{rid}/diag [layers]")
            check(all(d[k].dtype == np.float64 for k in d), f"{rid}/diag float64")
            # the same measures at initialisation: same members and shapes, other values
            if check("diag_init" in g, f"{rid}: diag_init beside diag"):
                d0 = g["diag_init"]
                check(set(d0.keys()) == set(d.keys()) and all(d0[k].shape == d[k].shape for k in d),
                      f"{rid}/diag_init has diag's members and shapes")
                check(not np.array_equal(d0["value_entropy"][:], d["value_entropy"][:]),
                      f"{rid}/diag_init is not the trained model's")
        if check(("checkpoint" in g) == (rid == checkpoint_id), f"{rid}: checkpoint only where saved") and rid == checkpoint_id:
            ck = g["checkpoint"]
            check("config" in ck.attrs and ck.attrs["vocab"] > 0, f"{rid}/checkpoint attrs config, vocab")
            check(len(ck["params"]) > 0 and all(ck["params"][p].dtype == np.float32 for p in ck["params"]),
                  f"{rid}/checkpoint/params float32")
    return df


def check_report_csv(f, df, srbench, path):
    r = run([srbench, "report", path, "--format", "csv"])
    if not check(r.returncode == 0, f"report --format csv exit {r.returncode}: {r.stderr}"):
        return
    rep = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False, na_values=["nan", ""])
    check(list(rep.columns) == ["task", "entry", "model", "arch", "grid", "runs", "ok", "diverged", "failed", "fitted", "metric",
                                "n", "mean", "std", "min", "median", "max", "ci_lo", "ci_hi", "frac_target"],
          f"csv columns {list(rep.columns)}")
    keys = list(dict.fromkeys(zip(df["entry"], df["model"], df["grid"])))  # first appearance
    check(list(dict.fromkeys(zip(rep["entry"], rep["model"], rep["grid"]))) == keys, "csv groups in first-appearance order")
    compared = 0
    for key in keys:
        runs = df[(df["entry"] == key[0]) & (df["model"] == key[1]) & (df["grid"] == key[2])]
        rows = rep[(rep["entry"] == key[0]) & (rep["model"] == key[1]) & (rep["grid"] == key[2])]
        steps = runs["steps_to_target"].to_numpy()
        frac = float(np.mean(steps >= 0))
        counts = {"runs": len(runs), "ok": int((runs["status"] == "ok").sum()),
                  "diverged": int((runs["status"] == "diverged").sum()),
                  "failed": int((runs["status"] == "failed").sum())}
        for c, v in counts.items():
            check((rows[c] == v).all(), f"{key}: {c} = {v}")

        expected = {}
        for m in METRICS:
            expected[m] = stats(runs[m].to_numpy(dtype=np.float64)) + (frac,)
        expected["steps_to_target"] = stats([float(s) for s in steps if s >= 0]) + (frac,)
        cells = {}
        for rid in runs["run_id"]:
            g = f["runs"][rid]
            ev = g["eval"]
            conds = [text(c) for c in ev["conditions"][:]]
            bpb = bool(g.attrs["bits_per_byte"])
            for L, C, loss, acc in zip(ev["length"][:], ev["condition"][:], ev["loss"][:], ev["seq_acc"][:]):
                cell = cells.setdefault((conds[C], int(L)), ([], []))
                cell[0].append(float(acc))
                if bpb:
                    cell[1].append(float(loss) / math.log(2))
        any_bpb = bool(np.any([f["runs"][rid].attrs["bits_per_byte"] for rid in runs["run_id"]]))
        for (cond, L), (accs, bits) in cells.items():
            expected[f"seq_acc[length={L},condition={cond}]"] = stats(accs) + (math.nan,)
            if any_bpb:
                expected[f"bits_per_byte[length={L},condition={cond}]"] = stats(bits) + (math.nan,)

        check(sorted(rows["metric"]) == sorted(expected), f"{key}: csv metrics {sorted(rows['metric'])}")
        for _, row in rows.iterrows():
            want = expected.get(row["metric"])
            if want is None:
                continue
            got = (row["n"], row["mean"], row["std"], row["min"], row["median"], row["max"], row["frac_target"])
            for name, w, g_ in zip(("n", "mean", "std", "min", "median", "max", "frac_target"), want, got):
                compared += 1
                check(same(g_, w), f"{key} {row['metric']} {name}: report {g_} != numpy {w}")
    check(compared > 300, f"compared only {compared} numbers")
    print(f"report csv: {compared} numbers equal numpy's", file=sys.stderr)


def check_diagnostics_at_init(f, df, srbench, path):
    """report --diagnostics --at-init: per group, the mean over seeds of diag_init/, recomputed here."""
    r = run([srbench, "report", path, "--diagnostics", "--at-init", "--format", "csv"])
    if not check(r.returncode == 0, f"report --diagnostics --at-init exit {r.returncode}: {r.stderr}"):
        return
    rep = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False, na_values=["nan", ""])
    compared = 0
    for (entry, model, grid), runs in df.groupby(["entry", "model", "grid"], sort=False):
        ids = [rid for rid in runs["run_id"] if "diag_init" in f["runs"][rid]]
        if not ids:
            continue
        for l in range(f["runs"][ids[0]]["diag_init/value_entropy"].shape[0]):
            want = np.mean([f["runs"][rid]["diag_init/value_entropy"][l] for rid in ids])
            row = rep[(rep["entry"] == entry) & (rep["model"] == model) & (rep["grid"] == grid) &
                      (rep["metric"] == f"value_entropy[layer={l}]")]
            if check(len(row) == 1, f"--at-init csv row for {entry}/{model}/{grid} layer {l}"):
                check(int(row["n"].iloc[0]) == len(ids) and same(float(row["mean"].iloc[0]), want),
                      f"--at-init value_entropy[layer={l}] of {entry}/{model}/{grid}: {row['mean'].iloc[0]} vs {want}")
                compared += 1
    check(compared > 0, "--at-init: some group compared")


def check_report_table(df, srbench, path):
    r = run([srbench, "report", path])
    if not check(r.returncode == 0, f"report (table) exit {r.returncode}: {r.stderr}"):
        return
    for line in r.stdout.splitlines():
        check(len(line) <= 100, f"table line wider than 100 columns: {line!r}")
    first = df[(df["entry"] == df["entry"][0]) & (df["model"] == df["model"][0]) & (df["grid"] == df["grid"][0])]
    n, mean, std, mn, med, mx = stats(first["id_acc"].to_numpy(dtype=np.float64))
    want = f"{mean:.3f}±{std:.3f} [{mn:.3f}, {med:.3f}, {mx:.3f}]"
    check(want in r.stdout, f"table shows the first group's id_acc as {want}")
    md = run([srbench, "report", path, "--format", "markdown"])
    check(md.returncode == 0 and "| task | entry | model | arch | grid | runs |" in md.stdout, "markdown table header")


def check_tidy(f, df, srbench, path):
    """report --tidy: one row per run x evaluated (length, condition), each value the run file's own."""
    r = run([srbench, "report", path, "--tidy"])
    if not check(r.returncode == 0, f"report --tidy exit {r.returncode}: {r.stderr}"):
        return
    rep = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False, na_values=["nan", ""], dtype={"grid": str})
    check(list(rep.columns) == ["run_id", "task", "entry", "model", "arch", "grid", "seed", "status", "fitted", "length",
                                "condition", "loss", "token_acc", "seq_acc", "seen_frac", "input_space"],
          f"--tidy columns {list(rep.columns)}")
    want = []
    for rid in df["run_id"]:
        g = f["runs"][rid]
        if "eval" not in g:
            continue
        ev = g["eval"]
        conds = [text(c) for c in ev["conditions"][:]]
        for i in range(len(ev["length"])):
            want.append((rid, text(g.attrs["task"]), text(g.attrs["entry"]), text(g.attrs["model"]),
                         text(g.attrs["grid"]), int(g.attrs["seed"]), text(g.attrs["status"]), int(g.attrs["fitted"]),
                         int(ev["length"][i]), conds[ev["condition"][i]],
                         *(float(ev[k][i]) for k in ("loss", "token_acc", "seq_acc", "seen_frac", "input_space"))))
    got = [(row.run_id, row.task, row.entry, row.model, row.grid if isinstance(row.grid, str) else "", int(row.seed),
            row.status, int(row.fitted), int(row.length), row.condition, row.loss, row.token_acc, row.seq_acc,
            row.seen_frac, row.input_space) for row in rep.itertuples()]
    check(len(got) == len(want) and len(want) > 20, f"--tidy has {len(got)} rows, the file {len(want)}")
    for a, b in zip(got, want):
        check(a[:10] == b[:10] and all(same(x, y, 0) for x, y in zip(a[10:], b[10:])), f"--tidy row {a} != file {b}")


def check_compact(f, df, srbench, path):
    """report --compact: per group and evaluated length of condition id, the mean over the runs'
    metric (numpy), the report's interval of the same values, and k = runs at their target."""
    for metric in ("seq_acc", "token_acc"):
        r = run([srbench, "report", path, "--compact", "--metric", metric, "--format", "csv"])
        if not check(r.returncode == 0, f"report --compact exit {r.returncode}: {r.stderr}"):
            return
        rep = pd.read_csv(io.StringIO(r.stdout), keep_default_na=False, na_values=["nan", ""])
        compared = 0
        for (entry, model, grid), runs in df.groupby(["entry", "model", "grid"], sort=False):
            cells = {}
            for rid in runs["run_id"]:
                g = f["runs"][rid]
                if "eval" not in g:
                    continue
                target = float(yaml.safe_load(text(g.attrs["config"]))["train"]["target_accuracy"])
                ev = g["eval"]
                for L, C, v in zip(ev["length"][:], ev["condition"][:], ev[metric][:]):
                    if C == 0:
                        cells.setdefault(int(L), []).append((float(v), target))
            for L, vals in cells.items():
                row = rep[(rep["entry"] == entry) & (rep["model"] == model) & (rep["grid"].fillna("") == grid)
                          & (rep["length"] == L)]
                if not check(len(row) == 1, f"--compact {metric}: no row for {entry}/{model}/{grid} at {L}"):
                    continue
                row = row.iloc[0]
                values = [v for v, _ in vals]
                ref = _srbench.seed_stats(values)
                check(int(row["n"]) == len(values) and same(row["mean"], float(np.mean(values)))
                      and int(row["k"]) == sum(v >= t for v, t in vals) and int(row["runs"]) == len(runs)
                      and int(row["fitted"]) == int((runs["fitted"] == 1).sum())
                      and same(row["ci_lo"], ref["ci_lo"]) and same(row["ci_hi"], ref["ci_hi"]),
                      f"--compact {metric} {entry}/{model}/{grid} at {L}: {dict(row)} vs {values}")
                compared += 1
        check(compared > 10, f"--compact {metric}: compared {compared} cells")
    # the text and LaTeX forms: the same cells, "mean [lo, hi] · k/n"; LaTeX a booktabs tabular, the rest comments
    t = run([srbench, "report", path, "--compact"]).stdout
    lx = run([srbench, "report", path, "--compact", "--format", "latex"]).stdout
    n_rows = len(list(df.groupby(["entry", "model", "grid"], sort=False)))
    body = lx[lx.find("\\midrule\n") + len("\\midrule\n"):lx.find("\\bottomrule")]
    check(lx.count("\\begin{tabular}") == 1 and "\\toprule" in lx and len(body.splitlines()) == n_rows
          and all(line.endswith(" \\\\") for line in body.splitlines()), f"--compact latex:\n{lx}")
    check(all(line.startswith("% ") or not line or line.startswith("\\") or line.endswith("\\\\")
              for line in lx.splitlines()), f"--compact latex: a line that is neither table nor comment:\n{lx}")
    cells = re.findall(r"\d\.\d\d(?: \[\d\.\d\d, \d\.\d\d\])? · \d+/\d+", t)
    check(len(cells) == len(re.findall(r"\$\\cdot\$ \d+/\d+", lx)) and len(cells) >= 10,
          f"--compact text has {len(cells)} 'mean [lo, hi] · k/n' cells")


def check_usage_errors(srbench, tmp, run_file):
    mini = os.path.join(tmp, "mini.h5")
    for args in (["report", os.path.join(tmp, "absent.h5")], ["report", run_file],
                 ["report", mini, "--format", "xml"], ["merge", os.path.join(tmp, "nowhere"), "--out", "x.h5"],
                 ["report", mini, "--format", "latex"], ["report", mini, "--diagnostics", "--format", "latex"],
                 ["report", mini, "--tidy", "--format", "markdown"], ["report", mini, "--metric", "token_acc"],
                 ["report", mini, "--compact", "--metric", "loss"], ["report", mini, "--compact", "--tidy"]):
        r = run([srbench] + args)
        check(r.returncode == 2 and r.stderr.count("\n") == 1, f"{args}: exit 2 with one line, got {r.returncode} {r.stderr!r}")


COMMIT = [""]  # the commit `srbench --version` names, set in main


def check_commit(binary):
    """`srbench --version` names the commit it was built from: HEAD's (git describe --always --dirty,
    12 hex digits) when the sources are a git checkout; every results file records the same."""
    v = run([binary, "--version"]).stdout
    m = re.match(r"srbench \d+\.\d+\.\d+ \(commit (\S+)\)\n", v)
    if not check(m is not None, f"--version does not name a commit: {v!r}"):
        return
    COMMIT[0] = m.group(1)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # the version cited (CITATION.cff) and the newest release in CHANGELOG.md are the binary's
    version = re.match(r"srbench (\S+) ", v).group(1)
    with open(os.path.join(root, "CITATION.cff")) as f:
        cited = re.search(r"^version: (\S+)$", f.read(), re.M)
    check(cited is not None and cited.group(1) == version, f"CITATION.cff version {cited and cited.group(1)} != {version}")
    with open(os.path.join(root, "CHANGELOG.md")) as f:
        released = re.findall(r"^## (\d+\.\d+\.\d+) — ", f.read(), re.M)
    check(released[:1] == [version], f"CHANGELOG.md's newest release {released[:1]} != {version}")
    import shutil
    head = (subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True)
            if shutil.which("git") else None)
    if os.path.exists(os.path.join(root, ".git")) and head is not None and head.returncode == 0:
        # a commit of this repository's history: HEAD's after a fresh build, an ancestor of HEAD
        # when commits came after the build (the binary then names the sources it was built from)
        m = re.fullmatch(r"(?:v[0-9][^ ]*-g)?([0-9a-f]{12})(-dirty)?", COMMIT[0])
        ancestor = m is not None and subprocess.run(
            ["git", "-C", root, "merge-base", "--is-ancestor", m.group(1), "HEAD"], capture_output=True).returncode == 0
        check(ancestor, f"--version's commit {COMMIT[0]} is not HEAD ({head.stdout.strip()}) or one of its ancestors")
    else:  # a source archive: no commit to name
        check(COMMIT[0] == "unknown", f"--version's commit outside a checkout: {COMMIT[0]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--fixture", required=True)
    a = ap.parse_args()
    check_commit(a.srbench)
    with tempfile.TemporaryDirectory(prefix="srbench-suite-file-") as tmp:
        fx = run([a.fixture, tmp])
        if fx.returncode != 0:
            print(f"FAIL: results_fixture exit {fx.returncode}: {fx.stderr}")
            return 1
        lines = [l.split() for l in fx.stdout.splitlines()]
        all_ids = [l[2] for l in lines if l[0] == "run"]
        missing = next(l[1] for l in lines if l[0] == "missing")
        checkpoint_id = next(l[1] for l in lines if l[0] == "checkpoint")
        expected_ids = [i for i in all_ids if i != missing]

        path = os.path.join(tmp, "mini.h5")
        m = run([a.srbench, "merge", os.path.join(tmp, "mini"), "--out", path])
        check(m.returncode == 0, f"merge exit {m.returncode}: {m.stderr}")
        check(f"missing: 1 of {len(all_ids)} expected run(s)" in m.stdout and missing in m.stdout,
              f"merge reports the missing run {missing}: {m.stdout}")
        if m.returncode == 0:
            with h5py.File(path, "r") as f:
                df = check_layout(f, expected_ids, checkpoint_id)
                check_report_csv(f, df, a.srbench, path)
                check_diagnostics_at_init(f, df, a.srbench, path)
                check_tidy(f, df, a.srbench, path)
                check_compact(f, df, a.srbench, path)
            check_report_table(df, a.srbench, path)
        check_usage_errors(a.srbench, tmp, os.path.join(tmp, "mini", "runs", expected_ids[0] + ".h5"))
    return finish("suite file layout and report numbers")


if __name__ == "__main__":
    sys.exit(main())
