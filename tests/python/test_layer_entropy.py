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
import numpy as np
from checks import check, finish


def make(path):
    """Two model entries × 3 seeds on one entry, 3 layers; values known; one old run without diag_init."""
    rng = np.random.default_rng(1)
    vals = {}
    with h5py.File(path, "w") as f:
        for model in ("a", "b"):
            for seed in range(3):
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
            check(set(lines) == {"a", "b", "old"}, f"rows: {r.stdout}")
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
    return finish("layer_entropy.py")


if __name__ == "__main__":
    sys.exit(main())
