#!/usr/bin/env python3
"""Value entropy of one layer, at initialisation and after training, per group of a suite file.

LIMe's claim is about the deep layers: with layer-integrated memory their values keep a higher
entropy (less representation collapse). From `diag/<quantity>` (after training) and
`diag_init/<quantity>` (the same model before its first step; docs/harness.md "Diagnostics"),
this prints per (task entry, model entry, grid point), at `--layer` (default -1: the last layer;
Python indexing, so -2 is the one before), the mean over seeds with its 95% percentile bootstrap
interval over seeds (the report's bootstrap, srbench.analysis.bootstrap) at init and trained, and their change.
`--quantity` is value_entropy (ours: Shannon entropy of L2-normalised vectors) or
value_entropy_lime (LIMe's reference measure: Rényi-½ of standardised vectors), or the
hidden_entropy twins. `--compare A B` prints instead the paired difference A − B over the seeds
both model entries have at the same task entry and grid point, at init and trained.
`--figure PNG` also draws `diag/<quantity>` at every layer (trained; `--at-init`: diag_init/),
the mean over seeds with the same bootstrap interval as a band, a panel per task entry, a colour
per model entry and a line style and marker per grid point (scripts/plot_results.py draws it).

  /usr/bin/python3 scripts/layer_entropy.py results/lime-depth.h5 --quantity value_entropy_lime \
      [--figure docs/figures/lime-depth/value_entropy_lime.png]
  /usr/bin/python3 scripts/layer_entropy.py results/lime-depth.h5 --compare lime baseline
"""
import argparse
import math
import sys

import numpy as np

from srbench.analysis import bootstrap, fail, open_suite

QUANTITIES = ["value_entropy", "value_entropy_lime", "hidden_entropy", "hidden_entropy_lime"]


def layer_value(g, group, quantity, layer):
    """g[group/quantity][layer] as a float, NaN when absent or when the layer does not exist."""
    if group not in g or quantity not in g[group]:
        return math.nan
    v = np.asarray(g[group][quantity][:], dtype=float)
    if not -v.size <= layer < v.size:
        return math.nan
    return float(v[layer])


def read(path, quantity, layer, tasks=(), models=()):
    """{(entry, model, grid): {seed: (init, trained)}} in suite order."""
    out = {}
    with open_suite(path) as f:
        for g, key in f.runs(tasks, models):
            seed = int(g.attrs.get("seed", -1))
            out.setdefault(key, {})[seed] = (layer_value(g, "diag_init", quantity, layer),
                                             layer_value(g, "diag", quantity, layer))
    return out


def cell(values):
    v = [x for x in values if not math.isnan(x)]
    if not v:
        return "-"
    lo, hi = bootstrap(v)
    return f"{np.mean(v):.3f}" + ("" if math.isnan(lo) else f" [{lo:.3f}, {hi:.3f}]")


def draw(path, quantity, diag, tasks, models, figure):
    """The per-layer figure of diag/<quantity> (scripts/plot_results.py's layer profile)."""
    import plot_results  # beside this script

    with open_suite(path) as f:
        data = plot_results.layer_profiles(f.runs(tasks, models), quantity, diag)
    if not data:
        fail(f"{path}: no run matching --tasks/--models has {diag}/{quantity}")
    plot_results.plot_layer_profiles(data, quantity, figure, [], diag)
    print(f"wrote {figure}", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("--quantity", default="value_entropy", choices=QUANTITIES)
    p.add_argument("--layer", type=int, default=-1, help="layer index (Python style: -1 = the last)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="paired difference A - B over seeds")
    p.add_argument("--tasks", nargs="*", default=[])
    p.add_argument("--models", nargs="*", default=[])
    p.add_argument("--figure", help="also draw diag/<quantity> at every layer here (png)")
    p.add_argument("--at-init", action="store_true", help="the figure of diag_init/, the model as initialised")
    args = p.parse_args(argv)
    data = read(args.file, args.quantity, args.layer, args.tasks,
                list(args.compare) if args.compare else args.models)
    if not data:
        fail(f"{args.file}: no run matches --tasks/--models")
    if args.figure:
        draw(args.file, args.quantity, "diag_init" if args.at_init else "diag", args.tasks,
             list(args.compare) if args.compare else args.models, args.figure)
    which = f"{args.quantity} at layer {args.layer}"
    if args.compare:
        a, b = args.compare
        for m in (a, b):
            if not any(k[1] == m for k in data):
                fail(f"--compare {m}: no run of {args.file} has that model entry")
        print(f"| entry | grid | n | {a} − {b} at init | {a} − {b} trained |  ({which}, paired by seed)")
        print("|---|---|---|---|---|")
        for (entry, model, grid), runs in data.items():
            if model != a or (entry, b, grid) not in data:
                continue
            other = data[(entry, b, grid)]
            seeds = sorted(set(runs) & set(other))
            init = [runs[s][0] - other[s][0] for s in seeds]
            trained = [runs[s][1] - other[s][1] for s in seeds]
            print(f"| {entry} | {grid} | {len(seeds)} | {cell(init)} | {cell(trained)} |")
        return 0
    print(f"| entry | model | grid | n | at init | trained | change |  ({which}; mean over seeds [95% interval])")
    print("|---|---|---|---|---|---|---|")
    for (entry, model, grid), runs in data.items():
        init = [v[0] for v in runs.values()]
        trained = [v[1] for v in runs.values()]
        change = [v[1] - v[0] for v in runs.values()]
        print(f"| {entry} | {model} | {grid} | {len(runs)} | {cell(init)} | {cell(trained)} | {cell(change)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
