#!/usr/bin/env python3
"""The attention-pattern table and figure: how uniform each head's attention is, over fitted runs.

Liu et al. (ICLR 2023) find two kinds of heads in shortcut solutions: counter heads that spread
their attention evenly over the prefix (a modular counter sums it) and memory heads that attend
to one position (a flip-flop reads the last write). srbench measures every run's heads on a fixed
in-distribution batch (`diag/attn_entropy[layer, head]`, docs/harness.md "Diagnostics"): the
normalised entropy of each query row's attention, 1 for a uniform head, near 0 for a head that
reads one key.

For every (task entry, model entry, grid point) with transformer runs this prints, over the runs
that fitted (`fitted` = 1; id_acc reached train.target_accuracy) — and, with --all, over every run
that has diagnostics:
  n         the runs used, and how many of all the group's runs fitted
  mean H    the mean over heads of attn_entropy, then the mean over runs, with a 95% percentile
            bootstrap interval over runs (the report's: srbench.analysis.bootstrap)
  max H     the most uniform head of each run (max over layers and heads), mean over runs [interval]
  min H     the sparsest head of each run (min over layers and heads), mean over runs [interval]
  max attn  the sparsest head's attn_max (mean largest attention weight), mean over runs
With --at-init the same statistics of the same runs' heads as initialised (`diag_init/`, measured
before the first step on the same batch): at initialisation a head's attention is close to uniform
(small q.k), so a uniform head after training is a finding only beside this baseline.
The figure's title says which runs it draws and how many of them fitted, from the option used
(fitted only, or --all, where the runs that did not fit are dashed); each panel its own counts.

  /usr/bin/python3 scripts/attention_pattern.py results/shortcuts-32.h5 --tasks parity modcount flipflop \
      [--models alibi-2 alibi-4] [--at-init] [--format markdown|csv] [--figure docs/figures/shortcuts-32/attention_pattern.png]
"""
import argparse
import math
import sys

import numpy as np

from srbench.analysis import bootstrap, fail, open_suite


def read_groups(path, tasks, models, use_all, diag="diag"):
    """{(entry, model, grid): [per-run dict]} for transformer runs with diagnostics, in file order.

    diag: "diag" (the trained model) or "diag_init" (the same model as initialised, before its first
    step); the runs used are chosen by the trained run's `fitted` either way."""
    groups = {}
    order = []
    with open_suite(path) as f:
        for g, key in f.runs(tasks, models):
            a = g.attrs
            if diag not in g or "attn_entropy" not in g[diag]:
                continue
            ent = np.asarray(g[diag + "/attn_entropy"], dtype=float)
            if ent.size == 0:  # a recurrent model: no attention
                continue
            fitted = int(a.get("fitted", -1))
            if key not in groups:
                groups[key] = {"all": 0, "fitted": 0, "runs": []}
                order.append(key)
            groups[key]["all"] += 1
            groups[key]["fitted"] += fitted == 1
            if use_all or fitted == 1:
                groups[key]["runs"].append({
                    "seed": int(a["seed"]),
                    "fitted": fitted == 1,
                    "entropy": ent,
                    "attn_max": np.asarray(g[diag + "/attn_max"], dtype=float),
                })
    return [(k, groups[k]) for k in order]


SUMMARY = ("mean_H", "max_H", "min_H", "sparse_attn_max")


def run_summary(entropy, attn_max):
    """One run's heads: mean_H (mean attn_entropy over layers and heads), max_H (the most uniform
    head), min_H (the sparsest) and sparse_attn_max (the sparsest head's attn_max)."""
    i = np.unravel_index(np.nanargmin(entropy), entropy.shape)
    return {"mean_H": float(np.nanmean(entropy)), "max_H": float(np.nanmax(entropy)),
            "min_H": float(np.nanmin(entropy)), "sparse_attn_max": float(attn_max[i])}


def summarise(runs):
    per_run = [run_summary(r["entropy"], r["attn_max"]) for r in runs]
    out = {}
    for name in SUMMARY:
        vals = [s[name] for s in per_run]
        lo, hi = bootstrap(vals)
        out[name] = (float(np.mean(vals)) if vals else math.nan, lo, hi)
    return out


def cell(v, with_ci=True):
    m, lo, hi = v
    if math.isnan(m):
        return "-"
    if not with_ci or math.isnan(lo):
        return f"{m:.2f}"
    return f"{m:.2f} [{lo:.2f}, {hi:.2f}]"


def print_table(rows, fmt, out=sys.stdout):
    head = ["entry", "model", "grid", "runs used (fitted/all)", "mean H", "max H (most uniform head)",
            "min H (sparsest head)", "sparsest head's attn_max"]
    if fmt == "csv":
        out.write("entry,model,grid,n,fitted,runs,metric,mean,ci_lo,ci_hi\n")
        for (entry, model, grid), g, s in rows:
            for k, v in s.items():
                out.write(f"{entry},{model},{grid},{len(g['runs'])},{g['fitted']},{g['all']},{k},{v[0]:.6g},{v[1]:.6g},"
                          f"{v[2]:.6g}\n")
        return
    out.write("| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n")
    for (entry, model, grid), g, s in rows:
        out.write(f"| {entry} | {model} | {grid or '-'} | {len(g['runs'])} ({g['fitted']}/{g['all']}) | {cell(s['mean_H'])} | "
                  f"{cell(s['max_H'])} | {cell(s['min_H'])} | {cell(s['sparse_attn_max'])} |\n")


def selection(rows, use_all, at_init, entry=None):
    """Which runs a figure (or one panel, of `entry`) draws, with their counts: "fitted runs only
    (k of n runs)" or "all n runs (k fitted)"."""
    groups = [g for (e, _, _), g, _ in rows if entry is None or e == entry]
    n, k = sum(g["all"] for g in groups), sum(g["fitted"] for g in groups)
    if entry is not None:
        return f"{entry}: {k} of {n} fitted"
    which = f"all {n} runs ({k} fitted; dashed: did not fit)" if use_all else f"the fitted runs only ({k} of {n} runs)"
    when = ", as initialised (before the first step)" if at_init else ""
    return f"per-head attention entropy of {which}{when}; one line per run"


def plot(rows, path, use_all, at_init):
    """The figure: a panel per task entry, a line per run (heads sorted by entropy), a colour and
    marker per model; the title says which runs are drawn, and how many (selection)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    entries = []
    for (entry, _, _), _, _ in rows:
        if entry not in entries:
            entries.append(entry)
    fig, axes = plt.subplots(1, len(entries), figsize=(3.2 * len(entries) + 1.6, 3.0), sharey=True, squeeze=False)
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    models = []
    for (_, model, grid), _, _ in rows:
        if (model, grid) not in models:
            models.append((model, grid))
    for ax, entry in zip(axes[0], entries):
        for (e, model, grid), g, _ in rows:
            if e != entry or not g["runs"]:
                continue
            mi = models.index((model, grid))
            for r in g["runs"]:
                h = np.sort(r["entropy"].ravel())
                x = np.linspace(0, 1, h.size) if h.size > 1 else np.array([0.5])
                ax.plot(x, h, marker=markers[mi % len(markers)], ms=3, lw=0.7, color=f"C{mi}",
                        ls="-" if r["fitted"] else "--")
        ax.set_title(selection(rows, use_all, at_init, entry), fontsize=9)
        ax.set_xlabel("heads, sorted by entropy (rank / count)", fontsize=7)
        ax.set_ylim(-0.02, 1.02)
        ax.axhline(1.0, color="0.5", ls=":", lw=0.8)
        ax.tick_params(labelsize=7)
    axes[0][0].set_ylabel("attn_entropy (1 = uniform, 0 = one key)", fontsize=7)
    drawn = [(model, grid) for (model, grid) in models
             if any(g["runs"] for (_, m, gr), g, _ in rows if (m, gr) == (model, grid))]
    handles = [Line2D([], [], marker=markers[models.index(k) % len(markers)], ms=3, lw=0.7,
                      color=f"C{models.index(k)}") for k in drawn]
    labels = [model + (f" {grid}" if grid else "") for model, grid in drawn]
    if handles:
        axes[0][-1].legend(handles, labels, fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.suptitle(selection(rows, use_all, at_init), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file")
    p.add_argument("--tasks", nargs="*", default=[], help="task entries (or task names) to include; default all")
    p.add_argument("--models", nargs="*", default=[], help="model entries to include; default all")
    p.add_argument("--all", action="store_true", help="every run with diagnostics, not only the fitted ones")
    p.add_argument("--at-init", action="store_true",
                   help="the heads as initialised, before the first step (diag_init/), of the same runs: "
                        "the baseline the trained heads are read against")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    p.add_argument("--figure", help="write the figure here (png)")
    args = p.parse_args(argv)
    diag = "diag_init" if args.at_init else "diag"
    groups = read_groups(args.file, set(args.tasks), set(args.models), args.all, diag)
    if not groups:
        fail(f"{args.file}: no transformer run with {diag}/ diagnostics matches --tasks/--models")
    rows = [(k, g, summarise(g["runs"])) for k, g in groups]
    print_table(rows, args.format)
    if args.figure:
        plot(rows, args.figure, args.all, args.at_init)
        print(f"wrote {args.figure}", file=sys.stderr)


if __name__ == "__main__":
    main()
