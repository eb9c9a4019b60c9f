#!/usr/bin/env python3
"""What a quaternion (Q8) run knows where it errs: the error element of each prediction.

A model that tracks the running product of Q8 only up to a subgroup H predicts an element of the
right coset of H: the error element e = target⁻¹ · prediction lies in H. Right half the time at a
position means e ∈ {+1, −1} at every prediction there (H the centre, the only subgroup of order 2:
the state known modulo its sign), or right at random half the time otherwise; right a quarter of
the time, e ∈ ⟨i⟩, ⟨j⟩ or ⟨k⟩ (order 4), or chance. The distribution of e tells them apart.

For each run file given (saved with `train.save_checkpoint: true`; one run each, e.g.
results/<suite>/runs/*.h5; task quaternion) this script evaluates the run's model with `srbench
eval --failures` on examples 0..N−1 of the `eval` stream under the run's data_seed at `--length`
(with the run's task parameters and `--set` overrides), and, per (entry, model) and band of
positions (`--positions`: ascending edges, positions counted from 1 over the scored inputs), prints
the share of predictions whose error element is each of the eight elements, and the shares right
modulo the centre (e ∈ {±1}) and modulo ⟨i⟩, ⟨j⟩, ⟨k⟩ (e ∈ {±1, ±i}, …): each the mean over runs
with its 95% percentile bootstrap interval over runs (the report's, srbench.analysis.bootstrap),
the predictions counted and the runs.

  /usr/bin/python3 scripts/quaternion_errors.py results/shortcuts-T32-probe2/runs/*.h5 --length 32 \\
      --positions 1,14,21,27 [--examples 512] [--threads 2] [--format csv]
"""
import argparse
import math
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_gaps import edges_of, label, run_predictions  # noqa: E402  (the same examples and helpers)
from srbench.analysis import add_checkpoint_options, bootstrap, checkpoint_options, fail  # noqa: E402

ELEMENTS = ["+1", "-1", "+i", "-i", "+j", "-j", "+k", "-k"]
# unit products: (sign, unit) of a·b for units a, b of 1, i, j, k
_UNIT = {("1", u): (1, u) for u in "1ijk"} | {(u, "1"): (1, u) for u in "1ijk"} | {
    ("i", "i"): (-1, "1"), ("j", "j"): (-1, "1"), ("k", "k"): (-1, "1"),
    ("i", "j"): (1, "k"), ("j", "k"): (1, "i"), ("k", "i"): (1, "j"),
    ("j", "i"): (-1, "k"), ("k", "j"): (-1, "i"), ("i", "k"): (-1, "j")}
# shares reported beside the eight: right modulo a subgroup (the elements it holds)
MODULO = {"centre": ("+1", "-1"), "<i>": ("+1", "-1", "+i", "-i"), "<j>": ("+1", "-1", "+j", "-j"),
          "<k>": ("+1", "-1", "+k", "-k")}


def element(name):
    """(sign, unit) of a state's name (+1, -1, +i, …)."""
    if name not in ELEMENTS:
        fail(f"'{name}' is not an element of Q8 ({' '.join(ELEMENTS)})")
    return (1 if name[0] == "+" else -1), name[1]


def name_of(sign, unit):
    return ("+" if sign > 0 else "-") + unit


def error_element(target, prediction):
    """target⁻¹ · prediction, by name."""
    (st, ut), (sp, up) = element(target), element(prediction)
    inv = (st if ut == "1" else -st, ut)  # the inverse of ±u is ±u for u = 1, ∓u otherwise
    s, u = _UNIT[(inv[1], up)]
    return name_of(inv[0] * sp * s, u)


def band_of(bands, pos):
    return int(np.searchsorted(bands, pos, side="right")) - 1


def count(examples, predictions, bands):
    """counts[band, element] of the error elements of every scored position (positions counted from
    1 over the scored ones); predictions[i] the argmax per token (None where not scored) of example
    i, or None when every position of it was right."""
    counts = np.zeros((len(bands), len(ELEMENTS)), int)
    for i, e in enumerate(examples):
        pred = predictions.get(i)
        pos = 0
        for t, target in enumerate(e["targets"]):
            if target is None:
                continue
            pos += 1
            b = band_of(bands, pos)
            if b < 0:
                continue
            got = target if pred is None else pred[t]
            counts[b, ELEMENTS.index(error_element(target, got))] += 1
    return counts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_checkpoint_options(p, examples=512)
    p.add_argument("--positions", default="1", help="ascending edges of bands of positions (default: one band)")
    p.add_argument("--threads", type=int, default=1, help="srbench eval's OpenMP threads")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    a = p.parse_args(argv)
    bands = edges_of(a.positions, "--positions")
    overrides, exe = checkpoint_options(a)
    groups, order = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for path in a.files:
            r, examples, predictions = run_predictions(path, "quaternion", overrides, exe, a.length, a.examples,
                                                       a.threads, tmp)
            key = (r["entry"], r["model"])
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(count(examples, predictions, bands))
    columns = ELEMENTS + [f"mod {m}" for m in MODULO]
    if a.format == "csv":
        print("entry,model,positions,predictions,runs," + ",".join(
            f"{c},{c} lo,{c} hi" for c in columns))
    else:
        print("| entry | model | positions | predictions | runs | " + " | ".join(columns) + " |")
        print("|---" * (5 + len(columns)) + "|")
    for key in order:
        runs = groups[key]
        for b in range(len(bands)):
            totals = [c[b].sum() for c in runs]
            if sum(totals) == 0:
                continue
            shares = {}
            for j, name in enumerate(ELEMENTS):
                shares[name] = [c[b, j] / t for c, t in zip(runs, totals) if t > 0]
            for m, members in MODULO.items():
                idx = [ELEMENTS.index(x) for x in members]
                shares[f"mod {m}"] = [c[b, idx].sum() / t for c, t in zip(runs, totals) if t > 0]
            cells = []
            for c in columns:
                v = shares[c]
                mean = float(np.mean(v))
                lo, hi = bootstrap(v)
                cells.append((mean, lo, hi))
            n_runs = sum(t > 0 for t in totals)
            if a.format == "csv":
                print(f"{key[0]},{key[1]},{label(bands, b)},{sum(totals)},{n_runs}," + ",".join(
                    f"{m:.4f},{'' if math.isnan(lo) else f'{lo:.4f}'},{'' if math.isnan(hi) else f'{hi:.4f}'}"
                    for m, lo, hi in cells))
            else:
                print(f"| {key[0]} | {key[1]} | {label(bands, b)} | {sum(totals)} | {n_runs} | " + " | ".join(
                    f"{m:.3f}" + ("" if math.isnan(lo) else f" [{lo:.3f}, {hi:.3f}]") for m, lo, hi in cells) + " |")


if __name__ == "__main__":
    main()
