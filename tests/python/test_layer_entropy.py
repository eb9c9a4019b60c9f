#!/usr/bin/python3
"""scripts/layer_entropy.py on a suite file made here with h5py: the means at init and trained,
their change and the paired differences recomputed by hand, the layer chosen Python-style, runs
without diag_init shown as "-", and bad input exiting 2.

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_layer_entropy.py --script scripts/layer_entropy.py
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import h5py
import matplotlib.colors
import numpy as np
from checks import check, finish, load_script, saved_figures
from test_analysis import reference_interval


def make(path):
    """Two model entries × 3 seeds on one entry and a third × 5 seeds (with 3 or fewer the report's
    interval is the range of the values; with 5 it is narrower), 3 layers; values known; one old
    run without diag_init."""
    rng = np.random.default_rng(1)
    vals = {}
    with h5py.File(path, "w") as f:
        for model, seeds in (("a", 3), ("b", 3), ("c", 5)):
            for seed in range(seeds):
                g = f.create_group(f"runs/{model}{seed}")
                for k, v in {"entry": "t", "task": "t", "model": model, "grid": "model.layers=3"}.items():
                    g.attrs[k] = v
                g.attrs["seed"] = seed
                trained, init = rng.uniform(0, 3, 3), rng.uniform(0, 3, 3)
                g.create_dataset("diag/value_entropy_lime", data=trained)
                g.create_dataset("diag_init/value_entropy_lime", data=init)
                vals[(model, seed)] = (init, trained)
        g = f.create_group("runs/old")
        for k, v in {"entry": "t", "task": "t", "model": "old", "grid": "model.layers=3"}.items():
            g.attrs[k] = v
        g.attrs["seed"] = 0
        g.create_dataset("diag/value_entropy_lime", data=np.ones(3))
    return vals


def numbers(line):
    return [float(x) for x in re.findall(r"-?\d+\.\d+", line)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="srbench-le-") as tmp:
        path = os.path.join(tmp, "s.h5")
        vals = make(path)
        run = lambda *args: subprocess.run([sys.executable, a.script, path] + list(args), capture_output=True, text=True)
        for layer in (-1, 0):
            r = run("--quantity", "value_entropy_lime", "--layer", str(layer))
            check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
            lines = {l.split("|")[2].strip(): l for l in r.stdout.splitlines()[2:]}
            check(set(lines) == {"a", "b", "c", "old"}, f"rows: {r.stdout}")
            for model in ("a", "b"):
                init = [vals[(model, s)][0][layer] for s in range(3)]
                trained = [vals[(model, s)][1][layer] for s in range(3)]
                got = numbers(lines[model])
                # init mean [lo, hi], trained mean [lo, hi], change mean [lo, hi]
                check(len(got) == 9, f"{model}: {lines[model]}")
                if len(got) == 9:
                    check(abs(got[0] - np.mean(init)) < 6e-4, f"{model} init mean at layer {layer}")
                    check(abs(got[3] - np.mean(trained)) < 6e-4, f"{model} trained mean at layer {layer}")
                    check(abs(got[6] - np.mean(np.subtract(trained, init))) < 6e-4, f"{model} change at layer {layer}")
                    check(min(init) - 6e-4 <= got[1] <= got[0] <= got[2] <= max(init) + 6e-4, f"{model} interval in range")
            check("| - |" in lines["old"], f"old run without diag_init: {lines['old']}")
        r = run("--quantity", "value_entropy_lime", "--compare", "a", "b")
        check(r.returncode == 0, f"compare exit {r.returncode}: {r.stderr}")
        row = [l for l in r.stdout.splitlines() if l.startswith("| t |")]
        check(len(row) == 1, f"one compare row: {r.stdout}")
        if row:
            got = numbers(row[0])
            d_init = [vals[("a", s)][0][-1] - vals[("b", s)][0][-1] for s in range(3)]
            d_tr = [vals[("a", s)][1][-1] - vals[("b", s)][1][-1] for s in range(3)]
            check(abs(got[0] - np.mean(d_init)) < 6e-4 and abs(got[3] - np.mean(d_tr)) < 6e-4, f"paired: {row[0]}")
        r = run("--layer", "7", "--quantity", "value_entropy_lime")
        check(r.returncode == 0 and r.stdout.count("| - |") >= 6, f"a layer that does not exist: {r.stdout}")
        for args, what in [(["--compare", "a", "zz"], "--compare zz"), (["--models", "zz"], "no run matches")]:
            r = run(*args)
            check(r.returncode == 2 and what in r.stderr, f"{args}: exit {r.returncode} {r.stderr!r}")
        r = subprocess.run([sys.executable, a.script, os.path.join(tmp, "none.h5")], capture_output=True, text=True)
        check(r.returncode == 2 and "no such file" in r.stderr, f"missing file: {r.stderr!r}")
        check_figure(a.script, path, vals, os.path.join(tmp, "vel.png"))
    return finish("layer_entropy.py")


def drawn_figures(script, argv):
    """The matplotlib figures layer_entropy.py saves when run (in this process) with argv."""
    mod = load_script(script)  # its folder on sys.path: its plot_results.py, as when run
    return saved_figures(lambda: mod.main(argv))


def check_figure(script, path, vals, png):
    """--figure draws the asked quantity at every layer: a line per model entry at the mean over its
    seeds, a band at the report's bootstrap interval over them (recomputed by test_analysis's
    independent re-implementation), each named by the quantity; distinct looks; one legend."""
    r = subprocess.run([sys.executable, script, path, "--quantity", "value_entropy_lime", "--figure", png],
                       capture_output=True, text=True)
    check(r.returncode == 0 and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", f"--figure: a PNG ({r.stderr!r})")
    for diag, which in (("diag", 1), ("diag_init", 0)):
        argv = [path, "--quantity", "value_entropy_lime", "--figure", png] + (["--at-init"] if diag == "diag_init" else [])
        figs = drawn_figures(script, argv)
        if not check(len(figs) == 1, f"{diag}: one figure (got {len(figs)})"):
            continue
        fig = figs[0]
        sup = fig._suptitle.get_text()
        seeds = "mean over 1-5 seeds" if diag == "diag" else "mean over 3-5 seeds"  # old: 1 seed, no diag_init
        check(f"{diag}/value_entropy_lime" in sup and "95% bootstrap interval" in sup and seeds in sup,
              f"{diag}: title {sup!r} names the quantity, the interval and the seeds ({seeds!r})")
        panels = [ax for ax in fig.axes if ax.get_title() == "t"]
        if not check(len(panels) == 1, f"{diag}: one panel, entry t"):
            continue
        ax = panels[0]
        check(ax.get_ylabel() == f"{diag}/value_entropy_lime", f"{diag}: y label {ax.get_ylabel()!r}")
        check(sum(a.get_legend() is not None for a in fig.axes) + len(fig.legends) == 1, f"{diag}: one legend")
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        want = {"a layers=3", "b layers=3", "c layers=3"} | ({"old layers=3"} if diag == "diag" else set())
        check(set(lines) == want, f"{diag}: lines {sorted(lines)} != {sorted(want)} (old has no diag_init)")
        looks = [(ln.get_color(), ln.get_linestyle(), ln.get_marker()) for ln in lines.values()]
        check(len({lk[0] for lk in looks}) == len(looks) and len({lk[1:] for lk in looks}) == len(looks),
              f"{diag}: colours and line style + marker differ between variants: {looks}")
        bands = [c for c in ax.collections if len(c.get_paths())]
        for model, seeds in (("a", 3), ("b", 3), ("c", 5)):
            ln = lines.get(f"{model} layers=3")
            if ln is None:
                continue
            per_seed = np.array([vals[(model, s)][which] for s in range(seeds)])  # [seeds, layers]
            close = np.allclose(ln.get_ydata(), per_seed.mean(axis=0), atol=1e-12)
            check(close and list(ln.get_xdata()) == [0, 1, 2], f"{diag} {model}: line {ln.get_ydata()} != mean")
            band = [c for c in bands if np.allclose(c.get_facecolor()[0][:3], matplotlib.colors.to_rgb(ln.get_color()))]
            if not check(len(band) == 1, f"{diag} {model}: one band in the line's colour"):
                continue
            v = band[0].get_paths()[0].vertices
            for layer in range(3):
                lo, hi = reference_interval(sorted(per_seed[:, layer]))
                ys = v[np.isclose(v[:, 0], layer), 1]
                check(ys.size >= 2 and abs(ys.min() - lo) < 1e-12 and abs(ys.max() - hi) < 1e-12,
                      f"{diag} {model} layer {layer}: band {ys} != bootstrap [{lo}, {hi}]")


if __name__ == "__main__":
    sys.exit(main())
