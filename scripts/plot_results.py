#!/usr/bin/python3
"""Figures from an srbench suite file (HDF5), reading nothing but the file.

    /usr/bin/python3 scripts/plot_results.py results/shortcuts.h5 --out docs/figures/shortcuts
    ... --format pdf --dpi 300 --models lstm,transformer      # vector figures of two model entries

Writes PNGs (or PDF or SVG, `--format`; each kind skipped, with a printed note, when the file has
nothing for it; `--models` keeps those model entries' runs, the transfer matrix and search
splines whole):
  acc_vs_length_<entry>.png   seq_acc and token_acc of condition id vs evaluation length, one line
                              per (model, grid) variant: mean over seeds, band min..max over seeds;
                              the variants' markers side by side at each length (equal values stay
                              visible); a dashed line at the longest training length, inside the
                              axes; a dotted chance line (a uniform guess's token accuracy) on the
                              token_acc panel
  position_acc_<entry>.png    accuracy at each position (eval/position_acc) of the id rows at the
                              longest training length and beyond, one panel per variant, one line
                              per length (a colour each, the same in every panel), the training
                              length and a chance line in every panel, one legend for the figure
  curves_<entry>.png          val_acc and train_loss vs step (mean over seeds, band min..max)
  token_error.png             1 - token_acc (ffl: error rate at the reads) per condition and length,
                              one dot per seed, per group
  shortcut_gap.png            shortcut_gap per (entry, variant): mean over seeds, bars min..max
  gen_length.png              gen_length per (entry, variant): mean over seeds, bars min..max
  transfer.png                /transfer: id_acc_delta and steps_ratio heatmaps
  splines_<source>.png        learned splines (/runs/<id>/splines, /splines/<search>) against
                              their reference: GeLU (mlp), exp (spline-score) or elu+1 (spline-kernel)
  routers_<group>.png         LIMe router weights per layer (/runs/<id>/routers/layer<l>), mean over seeds
  value_entropy.png           diag/value_entropy per layer (ours: Shannon, L2-normalised), and
  value_entropy_lime.png      diag/value_entropy_lime (LIMe's measure): mean over seeds with the
                              report's 95% bootstrap interval as a band; one panel per entry, one
                              line per variant (a colour per model entry, a line style and marker
                              per grid point)
  attn_entropy.png            diag/attn_entropy [layers, heads] per group, mean over seeds

Every legend sits outside the data, and each variant of a figure has its own colour, line style
and marker.
Each kind is a data function (accuracy_by_length, position_accuracy, training_curves, shortcut_gaps, gen_lengths,
transfer_matrix, splines, routers, layer_profiles, diag_means, token_errors) and a plot_* function that draws exactly that data; render_all
returns the data by kind, so a test can compare what is drawn with the file.
Needs h5py, numpy, matplotlib and yaml (Debian's /usr/bin/python3) and `import srbench`
(scripts/install-python.sh, or PYTHONPATH=build/python): the file is read by srbench.analysis.
"""
import argparse
import math
import os
import re
import sys

import h5py
import matplotlib
from srbench.analysis import bootstrap, open_suite, run_config, text

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

DPI = 100  # --dpi
FORMAT = "png"  # --format: png | pdf | svg
# 20 distinct colours (the default cycle repeats after 10, and a figure may hold 12-18 variants)
plt.rcParams["axes.prop_cycle"] = cycler(color=plt.get_cmap("tab20").colors)


def style(i):
    """The i-th variant's look: colour, line style and marker all change from one variant to the
    next (10 colours, 4 line styles, 6 markers), so no two of the first 60 variants look alike and
    two neighbours differ in all three."""
    colours = plt.get_cmap("tab10").colors
    return {"color": colours[i % 10], "linestyle": LINESTYLES[i % 4], "marker": MARKERS[i % 6]}


LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")


def variant_styles(keys):
    """{(entry, model, grid): look} for the variants drawn in one axes. A model entry crossed with
    grid points (lime at layers 4, 8, 16) reads as such: a colour per model entry, a line style
    and marker per grid point; otherwise (one grid point, or too many for that) style(i) in order."""
    models = list(dict.fromkeys(k[1] for k in keys))
    grids = list(dict.fromkeys(k[2] for k in keys))
    if len(grids) < 2 or len(models) > 10 or len(grids) > 4:
        return {k: style(i) for i, k in enumerate(keys)}
    colours = plt.get_cmap("tab10").colors
    return {k: {"color": colours[models.index(k[1])], "linestyle": LINESTYLES[grids.index(k[2])],
                "marker": MARKERS[grids.index(k[2])]} for k in keys}


def legend_outside(ax, **kw):
    """The legend to the right of the axes, never over the data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=kw.pop("fontsize", 6), loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, **kw)


def train_max_length(config):
    """The longest training length of a resolved config (train.length: [lo, hi]), else None."""
    length = (config.get("train") or {}).get("length")
    if isinstance(length, list) and length and all(isinstance(v, int) for v in length):
        return max(length)
    return length if isinstance(length, int) else None


def safe_name(s):
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", s).strip("_") or "x"


def variant_label(model, grid):
    """"learned layers=2 output=states" for model learned, grid "model.layers=2 params.output=states"."""
    short = re.sub(r"\b(model|params|train|eval)\.", "", grid or "")
    return model + (" " + short if short else "")


def groups_of(runs):
    """{(entry, model, grid): [run rows]} in order of first appearance."""
    out = {}
    for r in runs:
        out.setdefault((r["entry"], r["model"], r["grid"]), []).append(r)
    return out


def save(fig, path, written):
    """Saves in FORMAT (the name's extension replaced) at DPI; records (path, (w, h)), the pixels
    Agg writes for a PNG (for PDF and SVG, the figure's size at DPI)."""
    path = os.path.splitext(path)[0] + "." + FORMAT
    fig.set_dpi(DPI)
    fig.savefig(path, dpi=DPI, format=FORMAT)
    written.append((path, tuple(fig.canvas.get_width_height())))
    plt.close(fig)


def seed_band(values):
    """mean, min, max over axis 0 ignoring NaN (all-NaN columns stay NaN)."""
    a = np.asarray(values, dtype=float)
    with np.errstate(all="ignore"):
        ok = ~np.all(np.isnan(a), axis=0)
        mean = np.full(a.shape[1], np.nan)
        lo = np.full(a.shape[1], np.nan)
        hi = np.full(a.shape[1], np.nan)
        mean[ok] = np.nanmean(a[:, ok], axis=0)
        lo[ok] = np.nanmin(a[:, ok], axis=0)
        hi[ok] = np.nanmax(a[:, ok], axis=0)
    return mean, lo, hi


def grid_shape(n, cols_max=4):
    cols = min(n, cols_max)
    return int(math.ceil(n / cols)), cols


# ---- accuracy vs length -------------------------------------------------------------------------

def eval_table(g, column):
    """A run group's evaluation rows: (condition names, length, condition index, `column`), each
    aligned by row; None when the run has none."""
    if "eval" not in g or g["eval/length"].shape[0] == 0:
        return None
    conds = [text(c) for c in g["eval/conditions"][:]]
    return conds, g["eval/length"][:], g["eval/condition"][:], g["eval/" + column][:]


def id_rows(g, column):
    """{length: value} of a run's condition-id evaluation rows, or None."""
    table = eval_table(g, column)
    if table is None or "id" not in table[0]:
        return None
    conds, L, C, A = table
    cid = conds.index("id")
    return {int(l): float(a) for l, c, a in zip(L, C, A) if c == cid}


def accuracy_by_length(f, runs):
    """{(entry, model, grid): {lengths, mean, min, max (seq_acc), token: (mean, min, max),
    train_max, chance}} over the seeds, condition id. train_max: the longest training length of the
    group's runs; chance: the mean of their `chance` attributes (NaN when absent)."""
    out = {}
    for key, rs in groups_of(runs).items():
        per_seed, per_seed_token, train_max, chance = [], [], [], []
        for r in rs:
            g = f["runs"][r["run_id"]]
            seq, tok = id_rows(g, "seq_acc"), id_rows(g, "token_acc")
            if seq is None:
                continue
            per_seed.append(seq)
            per_seed_token.append(tok)
            t = train_max_length(run_config(g))
            if t is not None:
                train_max.append(t)
            chance.append(float(g.attrs.get("chance", np.nan)))
        if not per_seed:
            continue
        lengths = sorted(set().union(*per_seed))
        mean, lo, hi = seed_band([[s.get(l, np.nan) for l in lengths] for s in per_seed])
        token = seed_band([[s.get(l, np.nan) for l in lengths] for s in per_seed_token])
        out[key] = {"lengths": np.array(lengths), "mean": mean, "min": lo, "max": hi, "token": token,
                    "train_max": max(train_max) if train_max else None, "chance": mean_chance(chance)}
    return out


def mean_chance(values):
    """The mean of the runs' `chance` attributes (a uniform guess's token accuracy), NaN when no run
    has one."""
    v = np.asarray(values, dtype=float)
    return float(np.mean(v[np.isfinite(v)])) if np.isfinite(v).any() else float("nan")


def mark_training_length(ax, train_max):
    if train_max is not None:
        ax.axvline(train_max, color="0.3", ls="--", lw=1, label=f"longest training length ({train_max})")


def dodge_factors(lengths, count):
    """Multipliers of x, one a variant, that set `count` variants' markers side by side on a log
    axis (centred on the true length, spread over 0.35 of the narrowest gap between two lengths, in
    log2), so that variants at equal values stay visible."""
    logs = np.log2(np.asarray(sorted(set(lengths)), dtype=float))
    gap = float(np.min(np.diff(logs))) if logs.size > 1 else 1.0
    step = 0.35 * gap / max(count - 1, 1)
    return [2.0 ** (step * (i - (count - 1) / 2)) for i in range(count)]


def log_limits(xs, pad=0.12):
    """x limits of a log2 axis holding every x with a margin of `pad` of the span (at least 0.15 in
    log2) on either side, so a marker at the first or last length is inside the axes."""
    logs = np.log2(np.asarray(xs, dtype=float))
    margin = max(pad * float(logs.max() - logs.min()), 0.15)
    return 2.0 ** (logs.min() - margin), 2.0 ** (logs.max() + margin)


def plot_accuracy_vs_length(data, out_dir, written):
    entries = list(dict.fromkeys(k[0] for k in data))
    for entry in entries:
        keys = [k for k in data if k[0] == entry]
        looks = variant_styles(keys)
        dodge = dodge_factors(np.concatenate([data[k]["lengths"] for k in keys]), len(keys))
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
        xs = []
        for i, key in enumerate(keys):
            d = data[key]
            x = d["lengths"] * dodge[i]
            xs.extend(x)
            for ax, (mean, lo, hi) in zip(axes, ((d["mean"], d["min"], d["max"]), d["token"])):
                st = looks[key]
                ax.plot(x, mean, ms=5, mfc="none", label=variant_label(key[1], key[2]), **st)
                ax.fill_between(x, lo, hi, color=st["color"], alpha=0.15)
        train_max = max((data[k]["train_max"] for k in keys if data[k]["train_max"] is not None), default=None)
        chances = [data[k]["chance"] for k in keys if np.isfinite(data[k]["chance"])]
        for ax, what in zip(axes, ("seq_acc", "token_acc")):
            mark_training_length(ax, train_max)
            ax.set_xscale("log", base=2)
            ax.set_xlim(*log_limits(xs + ([train_max] if train_max is not None else [])))
            lengths = sorted(set().union(*[data[k]["lengths"].tolist() for k in keys]))
            ax.set_xticks(lengths)
            ax.set_xticklabels([str(int(l)) for l in lengths])
            ax.minorticks_off()
            ax.set_xlabel("evaluation length n")
            ax.set_ylabel(f"{what} (condition id)")
            ax.set_ylim(-0.03, 1.03)
            ax.grid(alpha=0.3)
        if chances:
            axes[1].axhline(float(np.mean(chances)), color="0.3", ls=":", lw=1.2,
                            label=f"chance (uniform guess, {np.mean(chances):.3g})")
        axes[0].set_title("sequence accuracy", fontsize=9)
        axes[1].set_title("token accuracy at scored positions", fontsize=9)
        legend_outside(axes[1])
        fig.suptitle(f"{entry}: accuracy vs length (mean, band min..max over seeds; markers set side by side "
                     "at each length, so that equal values stay visible)", fontsize=9)
        save(fig, os.path.join(out_dir, f"acc_vs_length_{safe_name(entry)}.png"), written)


# ---- accuracy per position ------------------------------------------------------------------------

def position_accuracy(f, runs):
    """{(entry, model, grid): {"train_max", "chance", "lengths": {length: (positions, mean over
    seeds)}}}: eval/position_acc of the condition-id rows at the longest training length and beyond
    (where an in-distribution fit stops, and where length generalisation breaks); chance: the mean
    of the runs' `chance` attributes, a uniform guess's token accuracy (NaN when absent). Groups
    without such rows or without eval/position_acc are left out."""
    out = {}
    for key, rs in groups_of(runs).items():
        per_length, train_max, chance = {}, None, []
        for r in rs:
            g = f["runs"][r["run_id"]]
            if "eval" not in g or "position_acc" not in g["eval"]:
                continue
            t = train_max_length(run_config(g))
            if t is None:
                continue
            train_max = t if train_max is None else max(train_max, t)
            chance.append(float(g.attrs.get("chance", np.nan)))
            conds = [text(c) for c in g["eval/conditions"][:]]
            if "id" not in conds:
                continue
            P = np.asarray(g["eval/position_acc"][:], dtype=float)
            for row, (l, c) in enumerate(zip(g["eval/length"][:], g["eval/condition"][:])):
                if c == conds.index("id") and l >= t and P.ndim == 2 and P.shape[1] > 0:
                    per_length.setdefault(int(l), []).append(P[row])
        if not per_length:
            continue
        lengths = {}
        for l, rows in sorted(per_length.items()):
            width = max(r.size for r in rows)
            padded = [np.pad(r, (0, width - r.size), constant_values=np.nan) for r in rows]
            mean = seed_band(padded)[0]
            scored = np.flatnonzero(np.isfinite(mean))
            lengths[l] = (scored, mean[scored])
        out[key] = {"train_max": train_max, "lengths": lengths, "chance": mean_chance(chance)}
    return out


def plot_position_accuracy(data, out_dir, written):
    for entry in dict.fromkeys(k[0] for k in data):
        keys = [k for k in data if k[0] == entry]
        # one colour a length across the panels, so that one legend serves the figure; the legend
        # has a column of its own, right of the panels
        all_lengths = sorted(set().union(*[data[k]["lengths"] for k in keys]))
        rows, cols = grid_shape(len(keys), 3)
        fig, axes = plt.subplots(rows, cols + 1, figsize=(4.6 * cols + 1.6, 3.2 * rows), squeeze=False,
                                 gridspec_kw={"width_ratios": [1] * cols + [0.35]}, constrained_layout=True)
        panels = axes[:, :cols].flat
        chances = set()
        for ax, key in zip(panels, keys):
            d = data[key]
            for l, (pos, acc) in d["lengths"].items():
                colour = style(all_lengths.index(l))["color"]
                ax.plot(pos, acc, lw=1, color=colour, label=f"length {l}")
            mark_training_length(ax, d["train_max"])
            if np.isfinite(d["chance"]):
                ax.axhline(d["chance"], color="0.3", ls=":", lw=1.2, label="chance (uniform guess)")
                chances.add(f"{d['chance']:.3g}")
            ax.set_ylim(-0.03, 1.03)
            ax.set_xlabel("position in the sequence", fontsize=7)
            ax.set_ylabel("accuracy (mean over seeds)", fontsize=7)
            ax.set_title(variant_label(key[1], key[2]), fontsize=7)
            ax.tick_params(labelsize=6)
            ax.grid(alpha=0.3)
        for ax in list(axes[:, :cols].flat)[len(keys):] + list(axes[:, cols]):
            ax.axis("off")
        handles = {}
        for ax in axes[:, :cols].flat:
            for h, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, h)
        order = [f"length {l}" for l in all_lengths] + [k for k in handles if not k.startswith("length ")]
        chance_label = (f"chance (uniform guess, {next(iter(chances))})" if len(chances) == 1
                        else "chance (uniform guess; each panel's own)")
        shown = [chance_label if label == "chance (uniform guess)" else label for label in order]
        axes[0, cols].legend([handles[k] for k in order], shown, fontsize=7, loc="upper left", borderaxespad=0)
        fig.suptitle(f"{entry}: accuracy at each scored position, the longest training length and beyond (condition id)",
                     fontsize=9)
        save(fig, os.path.join(out_dir, f"position_acc_{safe_name(entry)}.png"), written)


# ---- training curves ----------------------------------------------------------------------------

def training_curves(f, runs):
    """{(entry, model, grid): {step, val_acc: (mean, min, max), train_loss: (mean, min, max)}}."""
    out = {}
    for key, rs in groups_of(runs).items():
        curves = []
        for r in rs:
            g = f["runs"][r["run_id"]]
            if "curve" in g and g["curve/step"].shape[0] > 0:
                curves.append({q: g["curve/" + q][:] for q in ("step", "val_acc", "train_loss")})
        if not curves:
            continue
        steps = sorted(set().union(*[set(c["step"].tolist()) for c in curves]))
        d = {"step": np.array(steps)}
        for q in ("val_acc", "train_loss"):
            values = [[dict(zip(c["step"].tolist(), c[q].tolist())).get(s, np.nan) for s in steps] for c in curves]
            d[q] = seed_band(values)
        out[key] = d
    return out


def plot_training_curves(data, out_dir, written):
    for entry in dict.fromkeys(k[0] for k in data):
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
        for i, key in enumerate(k for k in data if k[0] == entry):
            d = data[key]
            for ax, q in zip(axes, ("val_acc", "train_loss")):
                mean, lo, hi = d[q]
                st = {**style(i), "marker": None}
                ax.plot(d["step"], mean, label=variant_label(key[1], key[2]), **st)
                ax.fill_between(d["step"], lo, hi, color=st["color"], alpha=0.15)
        axes[0].set_ylabel("val_acc (ID validation set)")
        axes[0].set_ylim(-0.03, 1.03)
        axes[1].set_ylabel("train loss")
        axes[1].set_yscale("log")
        for ax in axes:
            ax.set_xlabel("step")
            ax.grid(alpha=0.3)
        legend_outside(axes[1])
        fig.suptitle(f"{entry}: training curves (mean, band min..max over seeds)", fontsize=9)
        save(fig, os.path.join(out_dir, f"curves_{safe_name(entry)}.png"), written)


# ---- shortcut gap -------------------------------------------------------------------------------

def metric_over_seeds(runs, metric):
    """{(entry, model, grid): (mean, min, max)} of a /summary metric over the seeds where defined."""
    out = {}
    for key, rs in groups_of(runs).items():
        v = np.array([r.get(metric, math.nan) for r in rs], dtype=float)
        v = v[~np.isnan(v)]
        if v.size:
            out[key] = (float(v.mean()), float(v.min()), float(v.max()))
    return out


def shortcut_gaps(runs):
    """{(entry, model, grid): (mean, min, max)} of shortcut_gap over the seeds where defined."""
    return metric_over_seeds(runs, "shortcut_gap")


def gen_lengths(runs):
    """{(entry, model, grid): (mean, min, max)} of gen_length over the seeds where defined."""
    return metric_over_seeds(runs, "gen_length")


def learned_position_groups(f, runs):
    """The groups whose model uses learned absolute positions: at lengths beyond training they read
    position rows that training never updated, so their gap measures those rows, not a shortcut."""
    out = set()
    for key, rs in groups_of(runs).items():
        if any((run_config(f["runs"][r["run_id"]]).get("model") or {}).get("position") == "learned" for r in rs):
            out.add(key)
    return out


def metric_bars(data, hatched=frozenset()):
    """A figure of one bar per (entry, variant): mean over seeds, error bars min..max; the groups in
    `hatched` hatched. Returns (fig, ax)."""
    entries = list(dict.fromkeys(k[0] for k in data))
    variants = list(dict.fromkeys((k[1], k[2]) for k in data))
    width = 0.8 / len(variants)
    fig, ax = plt.subplots(figsize=(max(6.4, 0.5 * len(entries) * max(1, len(variants) / 3) + 2.5), 4.4),
                           constrained_layout=True)
    for j, (model, grid) in enumerate(variants):
        xs, ms, err_lo, err_hi = [], [], [], []
        for i, e in enumerate(entries):
            if (e, model, grid) in data:
                m, lo, hi = data[(e, model, grid)]
                xs.append(i + (j - (len(variants) - 1) / 2) * width)
                ms.append(m)
                err_lo.append(m - lo)
                err_hi.append(hi - m)
        marked = [(e, model, grid) in hatched for e in entries if (e, model, grid) in data]
        bars = ax.bar(xs, ms, width, yerr=[err_lo, err_hi], capsize=1.5, label=variant_label(model, grid),
                      color=style(j)["color"])
        for bar, h in zip(bars, marked):
            if h:
                bar.set_hatch("///")
                bar.set_alpha(0.55)
    ax.set_xticks(range(len(entries)))
    ax.set_xticklabels(entries, rotation=20, fontsize=8)
    return fig, ax


def plot_shortcut_gap(data, out_dir, written, learned=frozenset()):
    fig, ax = metric_bars(data, learned)
    ax.set_ylabel("shortcut_gap = id_acc - min(ood, shift)")
    ax.set_ylim(-1.03, 1.03)
    ax.axhline(0, color="k", lw=0.5)
    title = "shortcut gap per variant (mean over seeds, bars min..max)"
    if learned:
        title += ("\nhatched: learned absolute positions; their rows beyond the training length\n"
                  "were never trained, so the gap there is not a test of a shortcut")
    ax.set_title(title, fontsize=8)
    legend_outside(ax)
    save(fig, os.path.join(out_dir, "shortcut_gap.png"), written)


def plot_gen_length(data, out_dir, written):
    fig, ax = metric_bars(data)
    ax.set_ylabel("gen_length (evaluated length)")
    ax.set_ylim(bottom=0)
    ax.set_title("gen_length per variant: the longest evaluated length up to which every id length\n"
                 "reaches train.target_accuracy (by train.fit_metric); mean over seeds, bars min..max", fontsize=8)
    legend_outside(ax)
    save(fig, os.path.join(out_dir, "gen_length.png"), written)


# ---- transfer matrix ----------------------------------------------------------------------------

def transfer_matrix(f):
    if "transfer" not in f:
        return None
    t = f["transfer"]
    return {"searched_on": [text(s) for s in t["searched_on"][:]],
            "trained_on": [text(s) for s in t["trained_on"][:]],
            "id_acc_delta": np.asarray(t["id_acc_delta"][:], dtype=float),
            "steps_ratio": np.asarray(t["steps_ratio"][:], dtype=float)}


def plot_transfer(data, out_dir, written):
    R, C = len(data["searched_on"]), len(data["trained_on"])
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 1.6 * C + 4), max(3.5, 0.6 * R + 2)), constrained_layout=True)
    for ax, q in zip(axes, ("id_acc_delta", "steps_ratio")):
        m = data[q]
        if q == "id_acc_delta":  # centred on 0: red worse, blue better than GeLU
            lim = np.nanmax(np.abs(m)) if np.isfinite(m).any() else 1.0
            im = ax.imshow(m, cmap="RdBu", vmin=-lim or -1.0, vmax=lim or 1.0)
        else:  # a ratio, centred on 1 on a log scale: blue fewer steps than GeLU, red more
            pos = m[np.isfinite(m) & (m > 0)]
            lim = float(np.max(np.abs(np.log(pos)))) if pos.size else 0.0
            lim = math.exp(max(lim, math.log(1.05)))
            im = ax.imshow(np.where(m > 0, m, np.nan), cmap="RdBu_r", norm=LogNorm(vmin=1 / lim, vmax=lim))
        for i in range(R):
            for j in range(C):
                ax.text(j, i, "-" if np.isnan(m[i, j]) else f"{m[i, j]:.2f}", ha="center", va="center", fontsize=7)
        ax.set_xticks(range(C))
        ax.set_xticklabels(data["trained_on"], rotation=30, fontsize=7)
        ax.set_yticks(range(R))
        ax.set_yticklabels(data["searched_on"], fontsize=7)
        ax.set_xlabel("trained on")
        ax.set_ylabel("spline searched on")
        ax.set_title(q, fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8)
    save(fig, os.path.join(out_dir, "transfer.png"), written)


# ---- splines --------------------------------------------------------------------------------------

def gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def attention_of(config_yaml):
    """model.attention of a resolved config (YAML text), without a YAML parser: the `attention:` key."""
    m = re.search(r"^\s*attention:\s*([A-Za-z0-9_-]+)", config_yaml or "", re.M)
    return m.group(1) if m else None


def spline_reference(param, attention):
    """(name, function) the spline is compared with: GeLU for MLP splines, exp for spline-score,
    elu+1 for spline-kernel attention."""
    if "mlp" in param:
        return "GeLU", gelu
    if attention == "spline-kernel":
        return "elu+1", elu1
    return "exp", np.exp


def spline_points(ds):
    R = float(np.asarray(ds.attrs["range"]).reshape(-1)[0])
    K = int(np.asarray(ds.attrs["keypoints"]).reshape(-1)[0])
    values = np.asarray(ds[:], dtype=float).reshape(-1)
    if values.size != K:
        raise ValueError(f"{ds.name}: {values.size} values but attribute keypoints = {K}")
    x = -R + np.arange(K) * (2.0 * R / (K - 1))
    return x, values


def splines(f, runs):
    """{source: {param: {"x", "values": [per seed], "reference", "ref"}}}; source is a group label
    (entry · variant, seeds overlaid) or "search <name>"."""
    out = {}
    for key, rs in groups_of(runs).items():
        for r in rs:
            g = f["runs"][r["run_id"]]
            if "splines" not in g:
                continue
            attention = attention_of(text(g.attrs.get("config", "")))
            src = out.setdefault(key[0] + " " + variant_label(key[1], key[2]), {})
            for param in g["splines"]:
                x, v = spline_points(g["splines"][param])
                name, fn = spline_reference(param, attention)
                d = src.setdefault(param, {"x": x, "values": [], "reference": name, "ref": fn(x)})
                d["values"].append(v)
    if "splines" in f:
        for search in f["splines"]:
            sg = f["splines"][search]
            attention = attention_of(text(sg.attrs.get("config", "")))
            src = out.setdefault("search " + search, {})
            for param in sg:
                if not isinstance(sg[param], h5py.Dataset):  # e.g. the search's models/ group
                    continue
                x, v = spline_points(sg[param])
                name, fn = spline_reference(param, attention)
                src[param] = {"x": x, "values": [v], "reference": name, "ref": fn(x)}
    return out


def plot_splines(data, out_dir, written):
    for source, params in data.items():
        names = list(params)
        rows, cols = grid_shape(len(names), 3)
        fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), squeeze=False, constrained_layout=True)
        for ax, param in zip(axes.flat, names):
            d = params[param]
            ax.plot(d["x"], d["ref"], "k--", lw=1, label=d["reference"])
            for i, v in enumerate(d["values"]):
                ax.plot(d["x"], v, lw=1.2, label="learned" if i == 0 else None)
            lo, hi = np.min([np.min(v) for v in d["values"]]), np.max([np.max(v) for v in d["values"]])
            pad = 0.1 * (hi - lo + 1e-9)
            ax.set_ylim(min(lo, np.min(d["ref"][d["ref"] < 1e6])) - pad, hi + pad if d["reference"] != "exp"
                        else max(hi, 3.0) + pad)
            ax.set_title(param, fontsize=7)
            ax.set_xlabel("input x", fontsize=7)
            ax.set_ylabel("spline value f(x)", fontsize=7)
            ax.grid(alpha=0.3)
            legend_outside(ax)
        for ax in list(axes.flat)[len(names):]:
            ax.axis("off")
        fig.suptitle(f"splines: {source} (seeds overlaid)", fontsize=9)
        save(fig, os.path.join(out_dir, f"splines_{safe_name(source)}.png"), written)


# ---- LIMe routers, value and attention entropy ---------------------------------------------------

def routers(f, runs):
    """{(entry, model, grid): {layer: mean [H, (l+1)H] over seeds}}."""
    out = {}
    for key, rs in groups_of(runs).items():
        per_layer = {}
        for r in rs:
            g = f["runs"][r["run_id"]]
            if "routers" not in g:
                continue
            for name in g["routers"]:
                m = re.fullmatch(r"layer(\d+)", name)
                if m:
                    per_layer.setdefault(int(m.group(1)), []).append(np.asarray(g["routers"][name][:], dtype=float))
        if per_layer:
            out[key] = {l: np.mean(v, axis=0) for l, v in sorted(per_layer.items())}
    return out


def plot_routers(data, out_dir, written):
    for key, layers in data.items():
        n = len(layers)
        fig, axes = plt.subplots(1, n, figsize=(max(4.0, 2.6 * n + 1.5), 3.2), squeeze=False, constrained_layout=True)
        for ax, (l, w) in zip(axes.flat, layers.items()):
            lim = np.max(np.abs(w)) or 1.0
            im = ax.imshow(w, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
            ax.set_title(f"layer {l}: [{w.shape[0]}, {w.shape[1]}]", fontsize=8)
            ax.set_xlabel("source (layer, head)", fontsize=7)
            ax.set_ylabel("head", fontsize=7)
            fig.colorbar(im, ax=ax, shrink=0.8)
        fig.suptitle(f"LIMe router weights: {key[0]} {variant_label(key[1], key[2])} (mean over seeds)", fontsize=9)
        save(fig, os.path.join(out_dir, f"routers_{safe_name('_'.join(k for k in key if k))}.png"), written)


def diag_means(f, runs, quantity):
    """{(entry, model, grid): mean over the seeds with diagnostics of diag/<quantity>}."""
    out = {}
    for key, rs in groups_of(runs).items():
        vals = []
        for r in rs:
            g = f["runs"][r["run_id"]]
            if "diag" in g and quantity in g["diag"] and g["diag"][quantity].size > 0:
                vals.append(np.asarray(g["diag"][quantity][:], dtype=float))
        if vals and all(v.shape == vals[0].shape for v in vals):
            out[key] = np.mean(vals, axis=0)
    return out


ENTROPY_MEANING = {  # what each per-layer entropy of diag/ is (docs/harness.md "Diagnostics")
    "value_entropy": "Shannon entropy of the L2-normalised values (nats)",
    "value_entropy_lime": "LIMe's measure: Renyi-1/2 entropy of the standardised values (nats)",
    "hidden_entropy": "Shannon entropy of the L2-normalised block outputs (nats)",
    "hidden_entropy_lime": "LIMe's measure: Renyi-1/2 entropy of the standardised block outputs (nats)",
}


def layer_profiles(groups, quantity, diag="diag"):
    """{(entry, model, grid): {"mean", "lo", "hi": [layers], "n": seeds}} of (run group, key) pairs
    (SuiteFile.runs()): <diag>/<quantity> per layer, the mean over the seeds that have it and the
    report's 95% bootstrap interval over them (srbench.analysis.bootstrap; NaN for fewer than 2
    seeds). Groups whose runs disagree on the number of layers are left out."""
    per_key = {}
    for g, key in groups:
        if diag in g and quantity in g[diag] and g[diag][quantity].size > 0:
            per_key.setdefault(key, []).append(np.asarray(g[diag][quantity][:], dtype=float).reshape(-1))
    out = {}
    for key, vals in per_key.items():
        if any(v.shape != vals[0].shape for v in vals):
            continue
        v = np.array(vals)
        lo, hi = np.transpose([bootstrap(v[:, layer]) for layer in range(v.shape[1])])
        out[key] = {"mean": v.mean(axis=0), "lo": lo, "hi": hi, "n": len(vals)}
    return out


def plot_layer_profiles(data, quantity, path, written, diag="diag"):
    """One panel per entry, a line per variant (colour per model entry, line style and marker per
    grid point), the mean over seeds with the 95% bootstrap interval as a band; one legend."""
    entries = list(dict.fromkeys(k[0] for k in data))
    rows, cols = grid_shape(len(entries), 3)
    fig, axes = plt.subplots(rows, cols + 1, figsize=(5.2 * cols + 2.0, 3.4 * rows + 0.5), squeeze=False,
                             gridspec_kw={"width_ratios": [1] * cols + [0.42]}, constrained_layout=True)
    looks = variant_styles(list(data))
    handles = {}
    for ax, entry in zip(axes[:, :cols].flat, entries):
        for key in (k for k in data if k[0] == entry):
            d, st = data[key], looks[key]
            x = np.arange(d["mean"].size)
            line, = ax.plot(x, d["mean"], ms=4, label=variant_label(key[1], key[2]), **st)
            ax.fill_between(x, d["lo"], d["hi"], color=st["color"], alpha=0.12, lw=0)
            handles.setdefault(line.get_label(), line)
        ax.set_xlabel("layer", fontsize=7)
        ax.set_ylabel(f"{diag}/{quantity}", fontsize=7)
        ax.set_title(entry, fontsize=8)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=6)
        ax.grid(alpha=0.3)
    for ax in list(axes[:, :cols].flat)[len(entries):] + list(axes[:, cols]):
        ax.axis("off")
    axes[0, cols].legend(list(handles.values()), list(handles), fontsize=6, loc="upper left", borderaxespad=0)
    seeds = sorted({d["n"] for d in data.values()})
    n = str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    when = "trained" if diag == "diag" else "as initialised"
    fig.suptitle(f"{diag}/{quantity} per layer, {when}\n{ENTROPY_MEANING.get(quantity, quantity)}\n"
                 f"mean over {n} seeds, band: 95% bootstrap interval over seeds", fontsize=9)
    save(fig, path, written)


def plot_attn_entropy(data, out_dir, written):
    keys = list(data)
    rows, cols = grid_shape(len(keys), 6)
    fig, axes = plt.subplots(rows, cols, figsize=(max(5.0, 2.4 * cols), 1.9 * rows + 1.2), squeeze=False, constrained_layout=True)
    im = None
    for ax, key in zip(axes.flat, keys):
        m = np.atleast_2d(data[key])
        im = ax.imshow(m, cmap="magma", vmin=0, vmax=1, aspect="auto")
        ax.set_title(f"{key[0]} {variant_label(key[1], key[2])}", fontsize=5)
        ax.set_xlabel("head", fontsize=6)
        ax.set_ylabel("layer", fontsize=6)
        ax.set_xticks(range(m.shape[1]))
        ax.set_yticks(range(m.shape[0]))
        ax.tick_params(labelsize=5)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    fig.colorbar(im, ax=axes, shrink=0.6, label="attention entropy")
    fig.suptitle("attention entropy per head, mean over seeds (1 = uniform, 0 = one key)", fontsize=9)
    save(fig, os.path.join(out_dir, "attn_entropy.png"), written)


# ---- error rate at scored positions ---------------------------------------------------------------

def token_errors(f, runs):
    """{(entry, model, grid): {"cells": ["cond @ length", ...], "errors": [seeds, cells]}}: 1 - token_acc
    (ffl: the error rate at the reads) per seed, cells ordered by condition index then length."""
    out = {}
    for key, rs in groups_of(runs).items():
        per_seed = []
        for r in rs:
            table = eval_table(f["runs"][r["run_id"]], "token_acc")
            if table is None:
                continue
            conds, L, C, T = table
            per_seed.append({(int(c), int(l)): (conds[int(c)], 1.0 - float(t)) for l, c, t in zip(L, C, T)})
        if not per_seed:
            continue
        cells = sorted(set().union(*per_seed))
        labels = {}
        for s in per_seed:
            for k, (name, _) in s.items():
                labels[k] = f"{name} @ {k[1]}"
        errors = np.array([[s[k][1] if k in s else np.nan for k in cells] for s in per_seed])
        out[key] = {"cells": [labels[k] for k in cells], "errors": errors}
    return out


def plot_token_errors(data, out_dir, written):
    keys = list(data)
    rows, cols = grid_shape(len(keys), 4)
    fig, axes = plt.subplots(rows, cols, figsize=(max(6.4, 4.2 * cols), 3.4 * rows + 0.4), squeeze=False, constrained_layout=True)
    for ax, key in zip(axes.flat, keys):
        d = data[key]
        e = d["errors"]
        x = np.arange(len(d["cells"]))
        positive = e[np.isfinite(e) & (e > 0)]
        floor = 10.0 ** math.floor(math.log10(positive.min())) / 10 if positive.size else 1e-4
        for i in range(e.shape[0]):
            xi = x + (i - (e.shape[0] - 1) / 2) * 0.06
            nz = e[i] > 0
            ax.scatter(xi[nz], e[i][nz], s=10, alpha=0.8, color=style(i)["color"], label="seeds (a colour each)" if i == 0 else None)
            ax.scatter(xi[e[i] == 0], np.full(int(np.sum(e[i] == 0)), floor), s=18, marker="v", facecolors="none",
                       edgecolors=style(i)["color"], label="no error (drawn below the axis break)" if i == 0 else None)
        with np.errstate(all="ignore"):
            mean = np.nanmean(e, axis=0)
        ax.scatter(x[mean > 0], mean[mean > 0], marker="_", s=300, color="k", label="mean over seeds")
        ax.axhline(floor * 2, color="0.5", lw=0.6, ls=(0, (4, 2)))
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, 1.5)
        ax.set_xticks(x)
        ax.set_xticklabels(d["cells"], rotation=30, fontsize=6, ha="right")
        ax.set_title(f"{key[0]} {variant_label(key[1], key[2])}", fontsize=7)
        ax.set_ylabel("error rate at scored positions", fontsize=7)
        ax.grid(alpha=0.3, which="both")
        legend_outside(ax, fontsize=5)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    fig.suptitle("error rate 1 - token_acc per condition and length\n(dots: seeds; bar: mean; hollow triangles "
                 "below the dashed break: no error at all)", fontsize=9)
    save(fig, os.path.join(out_dir, "token_error.png"), written)


# ---- main -----------------------------------------------------------------------------------------

def render_all(path, out_dir, models=()):
    """Renders every figure kind the file has data for, for the runs of `models` (every model entry
    when empty); returns ([(figure path, (w, h))], data by kind)."""
    os.makedirs(out_dir, exist_ok=True)
    written, data = [], {}
    with open_suite(path) as suite:
        f, runs = suite.h5, suite.summary_rows()
        if models:
            known = list(dict.fromkeys(r["model"] for r in runs))
            unknown = [m for m in models if m not in known]
            if unknown:
                raise ValueError(f"--models {','.join(unknown)}: no run of this file has that model entry "
                                 f"(its models: {', '.join(known)})")
            runs = [r for r in runs if r["model"] in models]
        if not runs:
            print("note: the file has no runs (empty /summary)")
        kinds = [  # (name, data, draw, note when there is nothing to draw)
            ("accuracy_vs_length", accuracy_by_length(f, runs), plot_accuracy_vs_length,
             "no evaluation rows; skipping accuracy vs length"),
            ("position_accuracy", position_accuracy(f, runs), plot_position_accuracy,
             "no per-position accuracy beyond the training length; skipping accuracy per position"),
            ("training_curves", training_curves(f, runs), plot_training_curves,
             "no training curves; skipping training curves"),
            ("token_error", token_errors(f, runs), plot_token_errors, "no evaluation rows; skipping error rates"),
            ("shortcut_gap", shortcut_gaps(runs),
             lambda d, o, w: plot_shortcut_gap(d, o, w, learned_position_groups(f, runs)),
             "no shortcut_gap defined; skipping shortcut gap"),
            ("gen_length", gen_lengths(runs), plot_gen_length, "no gen_length defined; skipping gen_length"),
            ("transfer", transfer_matrix(f), plot_transfer, "no /transfer group; skipping transfer matrix"),
            ("splines", splines(f, runs), plot_splines, "no splines in the file; skipping splines"),
            ("routers", routers(f, runs), plot_routers, "no LIMe routers; skipping router weights"),
            ("value_entropy", layer_profiles(suite.runs(models=models), "value_entropy"),
             lambda d, o, w: plot_layer_profiles(d, "value_entropy", os.path.join(o, "value_entropy.png"), w),
             "no diag/value_entropy; skipping value entropy"),
            ("value_entropy_lime", layer_profiles(suite.runs(models=models), "value_entropy_lime"),
             lambda d, o, w: plot_layer_profiles(d, "value_entropy_lime", os.path.join(o, "value_entropy_lime.png"), w),
             "no diag/value_entropy_lime; skipping LIMe's value entropy"),
            ("attn_entropy", diag_means(f, runs, "attn_entropy"), plot_attn_entropy,
             "no diag/attn_entropy; skipping attention entropy"),
        ]
        for name, d, draw, note in kinds:
            data[name] = d
            if d:
                draw(d, out_dir, written)
            else:
                print("note: " + note)
    return written, data


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", help="suite file (results/<suite>.h5)")
    p.add_argument("--out", required=True, help="folder for the figures (created)")
    p.add_argument("--format", default="png", help="png (default) | pdf | svg")
    p.add_argument("--dpi", default="100", help="dots per inch (default 100; a PNG's pixels scale with it)")
    p.add_argument("--models", default="", help="MODEL[,MODEL]: only these model entries' runs (default: all)")
    a = p.parse_args(argv)
    global FORMAT, DPI
    if a.format not in ("png", "pdf", "svg"):
        print(f"plot_results.py: --format must be png, pdf or svg, got '{a.format}'", file=sys.stderr)
        return 2
    try:
        dpi = int(a.dpi)
    except ValueError:
        dpi = 0
    if not 10 <= dpi <= 1200:
        print(f"plot_results.py: --dpi must be an integer in 10..1200, got '{a.dpi}'", file=sys.stderr)
        return 2
    FORMAT, DPI = a.format, dpi
    models = tuple(m for m in a.models.split(",") if m)
    if not os.path.isfile(a.results):
        print(f"plot_results.py: {a.results}: no such file", file=sys.stderr)
        return 2
    try:
        written, _ = render_all(a.results, a.out, models)
    except OSError as e:
        print(f"plot_results.py: {a.results}: not a readable HDF5 suite file ({e})", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"plot_results.py: {a.results}: {e}", file=sys.stderr)
        return 2
    for path, (w, h) in written:
        print(f"wrote {path} ({w}x{h})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
