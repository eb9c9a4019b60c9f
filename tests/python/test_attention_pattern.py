#!/usr/bin/python3
"""scripts/attention_pattern.py against hand-made run files: the fitted filter, the per-run head
statistics (mean, max, min over heads, the sparsest head's attn_max), the mean over runs and its
bootstrap interval, recomputed here from the arrays written.

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_attention_pattern.py --script scripts/attention_pattern.py
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
from checks import check, finish, load_script, saved_figures


def write_run(f, rid, entry, model, seed, fitted, ent, amax, ent0=None, amax0=None):
    g = f.create_group(f"runs/{rid}")
    for k, v in (("entry", entry), ("task", entry), ("model", model), ("grid", "")):
        g.attrs[k] = np.bytes_(v)
    g.attrs["seed"] = np.int64(seed)
    g.attrs["fitted"] = np.int64(fitted)
    g.create_dataset("diag/attn_entropy", data=np.asarray(ent, dtype=float))
    g.create_dataset("diag/attn_max", data=np.asarray(amax, dtype=float))
    if ent0 is not None:
        g.create_dataset("diag_init/attn_entropy", data=np.asarray(ent0, dtype=float))
        g.create_dataset("diag_init/attn_max", data=np.asarray(amax0, dtype=float))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    path = os.path.join(d, "suite.h5")
    # parity: three fitted runs (2 layers x 2 heads) and one that did not fit; an lstm without heads
    ents = [np.array([[0.9, 0.2], [0.5, 1.0]]), np.array([[0.8, 0.4], [0.6, 0.7]]), np.array([[0.1, 0.3], [0.9, 0.95]])]
    amaxs = [np.array([[0.1, 0.7], [0.3, 0.05]]), np.array([[0.2, 0.5], [0.3, 0.3]]), np.array([[0.9, 0.6], [0.1, 0.1]])]
    with h5py.File(path, "w") as f:
        # the heads as initialised: near uniform; the first two fitted runs have them, the third not
        for i, (e, m) in enumerate(zip(ents, amaxs)):
            e0 = (np.array([[0.99, 0.97], [0.98, 0.96]]) - 0.01 * i) if i < 2 else None
            m0 = np.full((2, 2), 0.1 + 0.01 * i) if i < 2 else None
            write_run(f, f"p{i}", "parity", "alibi", i, 1, e, m, e0, m0)
        write_run(f, "p9", "parity", "alibi", 9, 0, np.zeros((2, 2)), np.ones((2, 2)))
        write_run(f, "l0", "parity", "lstm", 0, 1, np.zeros((1, 0)), np.zeros((1, 0)))
        write_run(f, "f0", "flipflop", "alibi", 0, 1, np.array([[0.05]]), np.array([[0.97]]))
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--format", "csv"], capture_output=True, text=True)
    check(out.returncode == 0, f"exit 0 (got {out.returncode}: {out.stderr})")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    got = {(r["entry"], r["model"], r["metric"]): r for r in rows}
    check(not any(r["model"] == "lstm" for r in rows), "a model without attention heads is left out")
    want = {
        "mean_H": [0.65, 0.625, 0.5625],
        "max_H": [1.0, 0.8, 0.95],
        "min_H": [0.2, 0.4, 0.1],
        "sparse_attn_max": [0.7, 0.5, 0.9],  # attn_max of the head with the least entropy
    }
    for k, vals in want.items():
        r = got.get(("parity", "alibi", k))
        check(r is not None, f"parity alibi {k} present")
        if r is None:
            continue
        check(r["n"] == "3" and r["fitted"] == "3" and r["runs"] == "4",
              f"{k}: 3 used, 3 fitted of 4 runs (got {r['n']}, {r['fitted']}/{r['runs']})")
        check(abs(float(r["mean"]) - np.mean(vals)) < 1e-6, f"{k}: mean {r['mean']} vs {np.mean(vals)}")
        rng = np.random.default_rng(0)
        v = np.asarray(vals)
        means = v[rng.integers(0, v.size, size=(10000, v.size))].mean(axis=1)
        lo, hi = np.quantile(means, 0.025), np.quantile(means, 0.975)
        check(abs(float(r["ci_lo"]) - lo) < 1e-6 and abs(float(r["ci_hi"]) - hi) < 1e-6,
              f"{k}: interval [{r['ci_lo']}, {r['ci_hi']}] vs [{lo}, {hi}]")
        check(float(r["ci_lo"]) <= float(r["mean"]) <= float(r["ci_hi"]), f"{k}: the mean inside its interval")
    r = got.get(("flipflop", "alibi", "min_H"))
    check(r is not None and abs(float(r["mean"]) - 0.05) < 1e-9 and r["ci_lo"] == "nan",
          "flipflop: one run, its value and no interval")
    # --all takes the unfitted parity run in: the min over heads of its zeros pulls min_H down
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--format", "csv", "--all", "--tasks", "parity"],
                         capture_output=True, text=True)
    rows = {r["metric"]: r for r in csv.DictReader(io.StringIO(out.stdout)) if r["model"] == "alibi"}
    check(rows.get("min_H", {}).get("n") == "4" and rows["min_H"]["fitted"] == "3"
          and abs(float(rows["min_H"]["mean"]) - 0.7 / 4) < 1e-6,
          "--all: 4 runs used, 3 of them fitted, min_H mean (0.2 + 0.4 + 0.1 + 0) / 4")
    check(not any(r.get("entry") == "flipflop" for r in rows.values()), "--tasks parity leaves flipflop out")
    # --at-init: the same fitted runs, their diag_init/ heads; a run without diag_init/ is left out
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--format", "csv", "--at-init", "--tasks", "parity"],
                         capture_output=True, text=True)
    check(out.returncode == 0, f"--at-init: exit 0 (got {out.returncode}: {out.stderr})")
    rows = {r["metric"]: r for r in csv.DictReader(io.StringIO(out.stdout)) if r["model"] == "alibi"}
    want0 = {"mean_H": [0.975, 0.965], "max_H": [0.99, 0.98], "min_H": [0.96, 0.95], "sparse_attn_max": [0.1, 0.11]}
    for k, vals in want0.items():
        r = rows.get(k)
        check(r is not None and r["n"] == "2" and r["fitted"] == "2" and r["runs"] == "2"
              and abs(float(r["mean"]) - np.mean(vals)) < 1e-9,
              f"--at-init {k}: the 2 fitted runs with diag_init/, mean {np.mean(vals)} (got {r})")
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--at-init", "--tasks", "flipflop"],
                         capture_output=True, text=True)
    check(out.returncode == 2 and "diag_init/" in out.stderr, f"--at-init without diag_init/: an error ({out.stderr!r})")
    # nothing matches: a clear error, non-zero
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--tasks", "nosuch"], capture_output=True, text=True)
    check(out.returncode == 2 and "no transformer run" in out.stderr, "no match: an error naming why")
    # a missing file and a file that is not a suite file: exit 2, naming the file
    missing = os.path.join(d, "nosuch.h5")
    out = subprocess.run(["/usr/bin/python3", a.script, missing], capture_output=True, text=True)
    check(out.returncode == 2 and "nosuch.h5: no such file" in out.stderr and "Traceback" not in out.stderr,
          f"a missing file: exit 2 naming it ({out.returncode}: {out.stderr!r})")
    empty = os.path.join(d, "empty.h5")
    h5py.File(empty, "w").close()
    out = subprocess.run(["/usr/bin/python3", a.script, empty], capture_output=True, text=True)
    check(out.returncode == 2 and "not an srbench suite file" in out.stderr, f"an HDF5 file without /runs: {out.stderr!r}")
    garbage = os.path.join(d, "garbage.h5")
    open(garbage, "w").write("not hdf5")
    out = subprocess.run(["/usr/bin/python3", a.script, garbage], capture_output=True, text=True)
    check(out.returncode == 2 and "not a readable HDF5 suite file" in out.stderr, f"a file that is not HDF5: {out.stderr!r}")
    # the figure is written
    fig = os.path.join(d, "ap.png")
    out = subprocess.run(["/usr/bin/python3", a.script, path, "--figure", fig], capture_output=True, text=True)
    check(out.returncode == 0 and os.path.getsize(fig) > 1000 and open(fig, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
          "the figure is a PNG")
    check_figure_titles(a.script, path, fig)
    sys.exit(finish("attention_pattern.py"))


def drawn_figures(script, argv):
    """The matplotlib figures the script saves when run (in this process) with argv."""
    mod = load_script(script)
    return saved_figures(lambda: mod.main(argv))


def check_figure_titles(script, path, png):
    """The title says which runs are drawn, from the option used, with the counts of the file
    (transformer runs with heads: parity 4, 3 of them fitted; flipflop 1, fitted); with --all the
    run that did not fit is dashed, and without it it is not drawn."""
    for argv, title, lines in (([path, "--figure", png], "of the fitted runs only (4 of 5 runs)", (3, 0)),
                               ([path, "--all", "--figure", png], "of all 5 runs (4 fitted", (3, 1))):
        figs = drawn_figures(script, argv)
        if not check(len(figs) == 1, f"{argv}: one figure saved (got {len(figs)})"):
            continue
        fig = figs[0]
        sup = fig._suptitle.get_text() if fig._suptitle else ""
        check(title in sup, f"{argv[1:]}: title {sup!r} does not say {title!r}")
        check(("fitted runs only" in sup) != ("--all" in argv), f"{argv[1:]}: title {sup!r} names the other selection")
        panels = {ax.get_title(): ax for ax in fig.axes}
        check(set(panels) == {"parity: 3 of 4 fitted", "flipflop: 1 of 1 fitted"}, f"panel titles {sorted(panels)}")
        parity = panels.get("parity: 3 of 4 fitted")
        if parity is not None:
            runs = [ln for ln in parity.get_lines() if len(ln.get_xdata()) == 4]  # a line per run, 4 heads
            solid = sum(ln.get_linestyle() == "-" for ln in runs)
            dashed = sum(ln.get_linestyle() == "--" for ln in runs)
            check((solid, dashed) == lines, f"{argv[1:]}: parity lines solid/dashed {(solid, dashed)} != {lines}")


if __name__ == "__main__":
    main()
