#!/usr/bin/python3
"""scripts/plot_results.py on a real (tiny) suite file and on the layouts the branch does not
write yet (splines, LIMe routers, transfer matrix), added to a copy with h5py exactly as
harness.md lays them out. Checks every expected PNG (signature, size, not blank) and that the
plotted arrays equal values read from the file independently here.

    /usr/bin/python3 tests/plots/test_plot_results.py --srbench build/harness/srbench \
        --script scripts/plot_results.py
"""
import argparse
import importlib.util
import io
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from contextlib import redirect_stdout

import h5py
import matplotlib.colors
import numpy as np
from checks import check, finish
from PIL import Image
from test_analysis import reference_interval

SUITE = """name: tiny
seeds: [0, 1]
defaults:
  model: {layers: 2, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 30, batch: 8, lr: 3e-3, warmup: 5, eval_every: 10, length: [1, 4]}
  eval: {lengths: [2, 4, 8], examples: 16, val_examples: 16}
tasks:
  - task: parity
    eval: {shifts: [{p1: 0.9}]}
models:
  - name: learned
  - name: alibi
    model: {position: alibi}
"""

def close(a, b, what, tol=1e-12):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = a.shape == b.shape and np.allclose(a, b, rtol=0, atol=tol, equal_nan=True)
    check(ok, f"{what}: {a} != {b}")


def png_info(path):
    """(width, height, RGB pixels [h, w, 3]): chunks, CRCs and IHDR checked here (8-bit RGB/RGBA,
    non-interlaced, as matplotlib's Agg writes), pixels decoded by Pillow."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG signature")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        if zlib.crc32(ctype + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"{path}: bad CRC in chunk {ctype}")
        if ctype == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace != 0:
                raise ValueError(f"{path}: unexpected PNG format depth {depth} color {color}")
        elif ctype == b"IDAT":
            idat += body
        elif ctype == b"IEND":
            break
        pos += 12 + length
    zlib.decompress(idat)  # the image data inflates
    with Image.open(path) as im:  # pixels decoded by Pillow
        px = np.asarray(im.convert("RGB"), dtype=np.int32)
    if px.shape[:2] != (h, w):
        raise ValueError(f"{path}: IHDR says {w}x{h}, Pillow decodes {px.shape[1]}x{px.shape[0]}")
    return w, h, px


def check_png(path, size):
    check(os.path.isfile(path), f"{path} exists")
    if not os.path.isfile(path):
        return
    w, h, px = png_info(path)
    check((w, h) == size, f"{os.path.basename(path)}: size {(w, h)} != expected {size}")
    rgb = px
    colours = len(np.unique(rgb.reshape(-1, 3)[::7], axis=0))
    non_white = float(np.mean(np.any(rgb < 250, axis=-1)))
    check(colours >= 8 and non_white > 0.02, f"{os.path.basename(path)}: looks blank ({colours} colours, "
                                              f"{non_white:.3f} non-white)")


def load_module(path):
    spec = importlib.util.spec_from_file_location("plot_results", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def summary_rows(f):
    t = f["summary"][:]
    dec = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
    return [{n: dec(r[n]) for n in t.dtype.names} for r in t]


def variant_label(key):
    return key[1] + (" " + key[2] if key[2] else "")


def one_legend(fig, what):
    n = sum(ax.get_legend() is not None for ax in fig.axes) + len(fig.legends)
    check(n == 1, f"{what}: {n} legends, not one for the figure")


def check_layer_figure(fig, quantity, label, mean, band):
    """The per-layer figure of `quantity`: named on the axis and in the title, the line at the mean,
    the band at the interval (lo, hi per layer), one legend."""
    if not check(fig is not None, f"{quantity}.png drawn"):
        return
    check(f"diag/{quantity} per layer" in fig._suptitle.get_text(), f"{quantity}: title {fig._suptitle.get_text()!r}")
    panel = [ax for ax in fig.axes if ax.get_title() == "parity"]
    if not check(len(panel) == 1, f"{quantity}: one panel, parity"):
        return
    ax = panel[0]
    check(ax.get_ylabel() == f"diag/{quantity}", f"{quantity}: y label {ax.get_ylabel()!r}")
    one_legend(fig, quantity)
    line = [ln for ln in ax.get_lines() if ln.get_label() == label]
    if not check(len(line) == 1, f"{quantity}: one line {label!r}"):
        return
    close(line[0].get_ydata(), mean, f"{quantity} {label}: the line at the mean")
    colour = matplotlib.colors.to_rgb(line[0].get_color())
    fills = [c for c in ax.collections if len(c.get_paths()) and np.allclose(c.get_facecolor()[0][:3], colour)]
    if not check(len(fills) == 1, f"{quantity} {label}: one band in the line's colour"):
        return
    v = fills[0].get_paths()[0].vertices
    for layer, (lo, hi) in enumerate(np.transpose(band)):
        ys = v[np.isclose(v[:, 0], layer), 1]
        check(ys.size >= 2 and abs(ys.min() - lo) < 1e-12 and abs(ys.max() - hi) < 1e-12,
              f"{quantity} {label} layer {layer}: band {ys} != [{lo}, {hi}]")


def check_position_figure(fig, label, chance):
    """position_acc: one legend for the figure, and in the variant's panel a horizontal line at the
    runs' chance attribute (parity: a uniform guess of one of 2 bits, 0.5)."""
    if not check(fig is not None, "position_acc_parity.png drawn"):
        return
    one_legend(fig, "position_acc_parity.png")
    check(abs(chance - 0.5) < 1e-12, f"parity's chance attribute {chance} != 1/2")
    panel = [ax for ax in fig.axes if ax.get_title() == label]
    if not check(len(panel) == 1, f"position_acc: a panel {label!r}"):
        return
    flat = [ln for ln in panel[0].get_lines() if len(set(ln.get_ydata())) == 1 and len(set(ln.get_xdata())) == 2]
    check(any(abs(ln.get_ydata()[0] - 0.5) < 1e-12 for ln in flat), f"position_acc {label}: no chance line at 0.5")


def check_dodged_training_edge(mod, out):
    """The flip-flop case of docs/results.md: four variants at 1.0 at every length and the training
    length at the shortest evaluated one. Every variant's markers must be visible (distinct x at
    each length, within 20% of the length; distinct line style and marker), and the training length
    strictly inside the x limits, with a margin."""
    os.makedirs(out, exist_ok=True)
    L = np.array([32, 64, 128])
    data = {}
    for i, model in enumerate(["alibi-4", "lstm", "gru", "rnn", "learned-2"]):
        v = np.ones(3) if i < 4 else np.array([0.96, 0.0, 0.0])
        data[("flipflop", model, "")] = {"lengths": L, "mean": v, "min": v, "max": v, "token": (v, v, v),
                                         "train_max": 32, "chance": 1 / 3}
    figs, save = [], mod.save
    mod.save = lambda fig, path, written: (figs.append(fig), save(fig, path, written))
    mod.plot_accuracy_vs_length(data, out, [])
    mod.save = save
    if not check(len(figs) == 1, "one accuracy-vs-length figure"):
        return
    fig = figs[0]
    one_legend(fig, "acc_vs_length")
    for ax in fig.axes[:2]:
        lo, hi = ax.get_xlim()
        lines = [ln for ln in ax.get_lines() if ln.get_label() in ("alibi-4", "lstm", "gru", "rnn", "learned-2")]
        drawn = [x for ln in lines for x in ln.get_xdata()] + [32]
        check(lo < min(drawn) * 2 ** -0.14 and hi > max(drawn) * 2 ** 0.14,
              f"x limits {lo, hi} hold every marker and the training length with a margin (more than "
              f"matplotlib's default 5% of the span)")
        marker = [ln for ln in ax.get_lines() if ln.get_label().startswith("longest training length")]
        check(len(marker) == 1 and lo < marker[0].get_xdata()[0] == 32 < hi, "the training length inside the axes")
        check(len(lines) == 5, f"5 variant lines, got {len(lines)}")
        xs = np.array([ln.get_xdata() for ln in lines], dtype=float)  # [variants, lengths]
        for j, length in enumerate(L):
            check(len(set(np.round(xs[:, j], 9))) == 5, f"length {length}: markers at distinct x {xs[:, j]}")
            check(np.all(np.abs(np.log2(xs[:, j] / length)) < np.log2(1.2)), f"length {length}: x {xs[:, j]} near it")
        looks = {(ln.get_linestyle(), ln.get_marker()) for ln in lines}
        check(len(looks) == 5, f"line style and marker distinct per variant: {looks}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    mod = load_module(a.script)
    tmp = tempfile.mkdtemp(prefix="srbench-plots-")
    try:
        suite = os.path.join(tmp, "tiny.yaml")
        open(suite, "w").write(SUITE)
        real = os.path.join(tmp, "out", "tiny.h5")
        subprocess.run([a.srbench, "sweep", suite, "--jobs", "1", "--threads", "1", "--out", real], check=True,
                       stdout=subprocess.DEVNULL)

        # 1. The real file: accuracy, curves, shortcut gap, value and attention entropy; the
        #    other kinds are skipped with a note.
        out1 = os.path.join(tmp, "fig1")
        buf = io.StringIO()
        figs, save = {}, mod.save

        def record(fig, path, written):  # the figures drawn, to read their artists after saving
            figs[os.path.basename(path)] = fig
            save(fig, path, written)

        mod.save = record
        with redirect_stdout(buf):
            written, data = mod.render_all(real, out1)
        mod.save = save
        notes = buf.getvalue()
        for kind in ("transfer matrix", "splines", "router weights"):
            check(f"skipping {kind}" in notes, f"note for skipped {kind} printed")
        names = sorted(os.path.basename(p) for p, _ in written)
        check(names == sorted(os.listdir(out1)), f"written list {names} matches the folder")
        check(names == sorted(["acc_vs_length_parity.png", "position_acc_parity.png", "curves_parity.png",
                               "shortcut_gap.png", "gen_length.png", "token_error.png", "value_entropy.png",
                               "value_entropy_lime.png", "attn_entropy.png"]),
              f"figures of the real file: {names}")
        fixed = {"acc_vs_length_parity.png": (1100, 420), "curves_parity.png": (1000, 380),
                 "value_entropy.png": (720, 390)}
        for p, size in written:
            check(fixed.get(os.path.basename(p), size) == size, f"{p}: declared size {size}")
            check_png(p, size)

        with h5py.File(real, "r") as f:
            rows = summary_rows(f)
            check(len(rows) == 4, "4 runs")
            for model in ("learned", "alibi"):
                ids = [r["run_id"] for r in rows if r["model"] == model]
                key = ("parity", model, "")
                # accuracy vs length, condition id, over the two seeds
                acc = []
                for rid in ids:
                    g = f["runs"][rid]["eval"]
                    conds = [c.decode() for c in g["conditions"][:]]
                    sel = g["condition"][:] == conds.index("id")
                    order = np.argsort(g["length"][:][sel])
                    acc.append(g["seq_acc"][:][sel][order])
                    close(g["length"][:][sel][order], [2, 4, 8], f"{model} id lengths")
                acc = np.array(acc)
                d = data["accuracy_vs_length"][key]
                close(d["lengths"], [2, 4, 8], f"{model} plotted lengths")
                close(d["mean"], acc.mean(axis=0), f"{model} plotted mean accuracy")
                close(d["min"], acc.min(axis=0), f"{model} plotted min accuracy")
                close(d["max"], acc.max(axis=0), f"{model} plotted max accuracy")
                tok = []
                for rid in ids:
                    g = f["runs"][rid]["eval"]
                    conds = [c.decode() for c in g["conditions"][:]]
                    tok.append({int(l): t for l, c, t in zip(g["length"][:], g["condition"][:], g["token_acc"][:])
                                if conds[c] == "id"})
                close(d["token"][0], [np.mean([t[l] for t in tok]) for l in (2, 4, 8)], f"{model} plotted token_acc")
                check(d["train_max"] == 4, f"{model} training-length marker at 4, not {d['train_max']}")
                # chance: parity's scored targets are the two bits, and every run says so
                close(d["chance"], 0.5, f"{model} chance line")
                close([f["runs"][rid].attrs["chance"] for rid in ids], [0.5, 0.5], f"{model} chance attributes")
                # accuracy per position at the longest training length and beyond (4 and 8; not 2):
                # the seeds' mean, scored positions only, and, for parity's final answer, consistent
                # with token_acc
                pa = data["position_accuracy"][key]
                check(list(pa["lengths"]) == [4, 8] and pa["train_max"] == 4, f"{model} position plot lengths {list(pa['lengths'])}")
                rows8 = []
                for rid in ids:
                    g = f["runs"][rid]["eval"]
                    conds = [c.decode() for c in g["conditions"][:]]
                    sel = (g["length"][:] == 8) & (g["condition"][:] == conds.index("id"))
                    rows8.append(g["position_acc"][:][sel][0])
                mean8 = np.mean(rows8, axis=0)
                pos, acc8 = pa["lengths"][8]
                close(pos, np.flatnonzero(np.isfinite(mean8)), f"{model} scored positions at length 8")
                close(acc8, mean8[np.isfinite(mean8)], f"{model} plotted position accuracy")
                scored_mean = np.mean([np.nanmean(r) for r in rows8])
                close(scored_mean, np.mean([t[8] for t in tok]), f"{model} position accuracy vs token_acc", tol=1e-9)
                # training curves: steps 10, 20, 30
                val = np.array([f["runs"][rid]["curve/val_acc"][:] for rid in ids])
                loss = np.array([f["runs"][rid]["curve/train_loss"][:] for rid in ids])
                c = data["training_curves"][key]
                close(c["step"], [10, 20, 30], f"{model} curve steps")
                close(c["val_acc"][0], val.mean(axis=0), f"{model} plotted val_acc")
                close(c["train_loss"][1], loss.min(axis=0), f"{model} plotted train_loss min")
                # shortcut gap from the summary table
                gaps = np.array([r["shortcut_gap"] for r in rows if r["model"] == model])
                close(data["shortcut_gap"][key], (gaps.mean(), gaps.min(), gaps.max()), f"{model} shortcut gap")
                # gen_length, from the id rows' seq_acc at 2, 4, 8 (acc above): the longest length up to
                # which every one reaches the default target 0.99, 0 when length 2 misses
                def longest(seed_acc):
                    out = 0
                    for length, a_ in zip((2, 4, 8), seed_acc):
                        if not a_ >= 0.99:
                            break
                        out = length
                    return out
                gens = np.array([longest(a_) for a_ in acc], dtype=float)
                close([r["gen_length"] for r in rows if r["model"] == model], gens, f"{model} gen_length column")
                close(data["gen_length"][key], (gens.mean(), gens.min(), gens.max()), f"{model} gen_length")
                # error rate at scored positions: id at 2, 4, 8, then p1=0.9 at the training lengths 2, 4
                errs = []
                for rid in ids:
                    g = f["runs"][rid]["eval"]
                    conds = [c.decode() for c in g["conditions"][:]]
                    cell = {(conds[c], l): 1 - t for l, c, t in zip(g["length"][:], g["condition"][:], g["token_acc"][:])}
                    errs.append([cell[("id", 2)], cell[("id", 4)], cell[("id", 8)], cell[("p1=0.9", 2)],
                                 cell[("p1=0.9", 4)]])
                te = data["token_error"][key]
                check(te["cells"] == ["id @ 2", "id @ 4", "id @ 8", "p1=0.9 @ 2", "p1=0.9 @ 4"], f"{model} error cells {te['cells']}")
                close(te["errors"], errs, f"{model} plotted error rates")
                for q in ("value_entropy", "value_entropy_lime"):
                    per_seed = np.array([f["runs"][rid]["diag"][q][:] for rid in ids])
                    ve = data[q][key]
                    close(ve["mean"], per_seed.mean(axis=0), f"{model} {q} mean")
                    want = np.transpose([reference_interval(sorted(per_seed[:, l])) for l in range(per_seed.shape[1])])
                    close((ve["lo"], ve["hi"]), want, f"{model} {q}: the report's bootstrap interval per layer")
                    check_layer_figure(figs.get(q + ".png"), q, variant_label(key), per_seed.mean(axis=0), want)
                check_position_figure(figs.get("position_acc_parity.png"), variant_label(key),
                                      np.mean([f["runs"][rid].attrs["chance"] for rid in ids]))
                ae = np.mean([f["runs"][rid]["diag/attn_entropy"][:] for rid in ids], axis=0)
                check(ae.shape == (2, 2), "attn_entropy [layers, heads]")
                close(data["attn_entropy"][key], ae, f"{model} attention entropy")

        check_dodged_training_edge(mod, os.path.join(tmp, "edge"))

        # 2. The layouts still to come, written here: splines per run and per search, routers,
        #    transfer matrix.
        extra = os.path.join(tmp, "extra.h5")
        shutil.copy(real, extra)
        rng = np.random.default_rng(7)
        K, R = 9, 3.0
        with h5py.File(extra, "a") as f:
            ids = [r["run_id"] for r in summary_rows(f) if r["model"] == "learned"]
            spl = {}
            for rid in ids:
                g = f["runs"][rid].create_group("splines")
                for name in ("blocks.0.mlp.act.values", "blocks.1.attn.kernel.values"):
                    v = rng.normal(size=K)
                    ds = g.create_dataset(name, data=v)
                    ds.attrs["range"] = R
                    ds.attrs["keypoints"] = np.int64(K)
                    ds.attrs["extrapolate"] = "constant"
                    spl.setdefault(name, []).append(v)
                rt = f["runs"][rid].create_group("routers")
                rt.create_dataset("layer0", data=rng.normal(size=(2, 2)))
                rt.create_dataset("layer1", data=rng.normal(size=(2, 4)))
            sg = f.create_group("splines").create_group("kernel-search")
            sg.attrs["config"] = "model:\n  attention: spline-kernel\n  layers: 1\n"
            search_v = rng.normal(size=5)
            ds = sg.create_dataset("spline.attn.values", data=search_v)
            ds.attrs["range"] = 2.0
            ds.attrs["keypoints"] = np.int64(5)
            ds.attrs["extrapolate"] = "linear"
            # as sweep writes it: the search's models beside its spline datasets
            mg = sg.create_group("models").create_group("0")
            mg.attrs["final_val_acc"] = 0.5
            mg.create_group("curve").create_dataset("step", data=np.arange(3))
            t = f.create_group("transfer")
            str_t = h5py.string_dtype()
            t.create_dataset("searched_on", data=np.array(["parity", "flipflop"], dtype=object), dtype=str_t)
            t.create_dataset("trained_on", data=np.array(["parity", "dyck", "copy"], dtype=object), dtype=str_t)
            delta = np.array([[0.1, -0.2, np.nan], [0.0, 0.3, -0.05]])
            ratio = np.array([[1.0, 0.8, 1.2], [0.9, np.nan, 1.5]])
            t.create_dataset("id_acc_delta", data=delta)
            t.create_dataset("steps_ratio", data=ratio)
            routers_written = {l: [f["runs"][rid]["routers"][f"layer{l}"][:] for rid in ids] for l in (0, 1)}

        out2 = os.path.join(tmp, "fig2")
        with redirect_stdout(io.StringIO()):
            written2, data2 = mod.render_all(extra, out2)
        names2 = sorted(os.path.basename(p) for p, _ in written2)
        expected2 = sorted(names + ["transfer.png", "splines_parity_learned.png", "splines_search_kernel-search.png",
                                    "routers_parity_learned.png"])
        check(names2 == expected2, f"figures of the extended file: {names2} != {expected2}")
        for p, size in written2:
            check_png(p, size)
        tr = data2["transfer"]
        check(tr["searched_on"] == ["parity", "flipflop"] and tr["trained_on"] == ["parity", "dyck", "copy"],
              "transfer labels")
        close(tr["id_acc_delta"], delta, "transfer id_acc_delta")
        close(tr["steps_ratio"], ratio, "transfer steps_ratio")

        x = np.array([-R + k * 2 * R / (K - 1) for k in range(K)])
        gelu = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
        sp = data2["splines"]["parity learned"]
        close(sp["blocks.0.mlp.act.values"]["x"], x, "spline keypoints x_k = -R + k 2R/(K-1)")
        close(sp["blocks.0.mlp.act.values"]["values"], spl["blocks.0.mlp.act.values"], "mlp spline values per seed")
        check(sp["blocks.0.mlp.act.values"]["reference"] == "GeLU", "mlp spline compared with GeLU")
        close(sp["blocks.0.mlp.act.values"]["ref"], gelu, "GeLU at the keypoints", tol=1e-12)
        # the run's config says attention softmax (not a spline kernel): compared with exp
        check(sp["blocks.1.attn.kernel.values"]["reference"] == "exp", "attention spline of a score run vs exp")
        close(sp["blocks.1.attn.kernel.values"]["ref"], np.exp(x), "exp at the keypoints")
        ss = data2["splines"]["search kernel-search"]["spline.attn.values"]
        xs = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
        close(ss["x"], xs, "search spline keypoints")
        close(ss["values"], [search_v], "search spline values")
        check(ss["reference"] == "elu+1", "spline-kernel search compared with elu+1")
        close(ss["ref"], [math.exp(-2) , math.exp(-1), 1.0, 2.0, 3.0], "elu+1 at the keypoints")
        rt = data2["routers"][("parity", "learned", "")]
        close(rt[0], np.mean(routers_written[0], axis=0), "router layer 0 mean over seeds")
        close(rt[1], np.mean(routers_written[1], axis=0), "router layer 1 mean over seeds")
        check(("parity", "alibi", "") not in data2["routers"], "no routers for the alibi runs")

        # 3. The command line: a missing file is a clear error (exit 2); a run prints what it wrote.
        r = subprocess.run([sys.executable, a.script, os.path.join(tmp, "none.h5"), "--out", tmp],
                           capture_output=True, text=True)
        check(r.returncode == 2 and "no such file" in r.stderr, f"missing file: exit {r.returncode} {r.stderr}")
        r = subprocess.run([sys.executable, a.script, real, "--out", os.path.join(tmp, "fig3")],
                           capture_output=True, text=True)
        check(r.returncode == 0 and "acc_vs_length_parity.png (1100x420)" in r.stdout, f"cli run: {r.stdout}{r.stderr}")

        # 4. Paper output: --dpi scales a PNG's pixels; --format pdf / svg write those formats (every
        #    figure); --models keeps those model entries' runs; bad values are refused (exit 2).
        out4 = os.path.join(tmp, "fig4")
        r = subprocess.run([sys.executable, a.script, real, "--out", out4, "--dpi", "200"], capture_output=True, text=True)
        check(r.returncode == 0 and "acc_vs_length_parity.png (2200x840)" in r.stdout, f"--dpi 200: {r.stdout}{r.stderr}")
        if r.returncode == 0:
            check_png(os.path.join(out4, "acc_vs_length_parity.png"), (2200, 840))
        for fmt, magic in (("pdf", b"%PDF-"), ("svg", b"<?xml")):
            out5 = os.path.join(tmp, f"fig-{fmt}")
            r = subprocess.run([sys.executable, a.script, real, "--out", out5, "--format", fmt, "--models", "learned"],
                               capture_output=True, text=True)
            got = sorted(os.listdir(out5)) if os.path.isdir(out5) else []
            check(r.returncode == 0 and got == sorted(n[:-3] + fmt for n in names), f"--format {fmt}: {got} {r.stderr}")
            for n in got:
                with open(os.path.join(out5, n), "rb") as fh:
                    content = fh.read()
                check(content.startswith(magic) and (fmt != "svg" or b"<svg" in content), f"{n} is not {fmt}")
        with redirect_stdout(io.StringIO()):
            _, only = mod.render_all(real, os.path.join(tmp, "fig6"), ("learned",))
        check(set(only["accuracy_vs_length"]) == {("parity", "learned", "")}
              and set(only["training_curves"]) == {("parity", "learned", "")}
              and all(k[1] == "learned" for k in only["value_entropy"]),
              f"--models learned draws {set(only['accuracy_vs_length'])}")
        close(only["accuracy_vs_length"][("parity", "learned", "")]["mean"],
              data["accuracy_vs_length"][("parity", "learned", "")]["mean"], "--models: the same values for the model kept")
        for bad, needle in ((["--format", "jpg"], "png, pdf or svg"), (["--dpi", "0"], "--dpi"), (["--dpi", "x"], "--dpi"),
                            (["--models", "learned,nope"], "nope")):
            r = subprocess.run([sys.executable, a.script, real, "--out", os.path.join(tmp, "fig7")] + bad,
                               capture_output=True, text=True)
            check(r.returncode == 2 and needle in r.stderr, f"{bad}: exit {r.returncode} {r.stderr}")
        check("its models: learned, alibi" in r.stderr, f"--models names the file's models: {r.stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish("every figure drawn from the file's values")


if __name__ == "__main__":
    sys.exit(main())
