#!/usr/bin/env python3
"""What each attention head of a trained model reads: its weight on the first token, on the query
itself, on the token before, on each input symbol, and on the latest key of a given set of symbols.

`attn_entropy` (docs/harness.md) says how spread a head is, not where it looks. For each run file
given (saved with `train.save_checkpoint: true`, one run each, e.g.
results/<suite>/runs/*.h5), this script draws examples 0..N−1 of the `eval` stream under the
run's data_seed at `--length` with the run's task parameters (and `--set` overrides), through
srbench's Python module, takes every layer's attention weights α from `srbench forward
--attention`, and prints per (run, layer, head), as means over the examples' queries i ≥ 1 (the
first token's own row is left out; every key j ≤ i of a causal model):
- `entropy`: H(α_i) / log(i + 1), 1 = uniform over the i + 1 keys, 0 = one key;
- `max`: the largest weight of the row;
- `first`: α on key 0 (the start token `<s>` when the task has one);
- `self`, `prev`: α on key i and on key i − 1;
- `on:<symbol>` for each input symbol: α on the keys holding it, beside `share:<symbol>`, the
  fraction of the keys 0..i holding it (what a uniform head would put there);
- with `--latest w1,w2`: α on the latest key j ≤ i holding one of those symbols (queries with
  none such left out), e.g. the last write of flip-flop.
Runs are listed in the order given (with `--fitted`, those that fitted only); heads are not
comparable across runs (their order is arbitrary). `--sparsest` prints instead, per (entry,
model, layer), the mean over runs of each run's sparsest head in that layer (least entropy) with
its 95% percentile bootstrap interval over runs (the report's bootstrap, srbench.analysis.bootstrap).

  PYTHONPATH=build/python /usr/bin/python3 scripts/attention_reads.py results/counters-32/runs/*.h5 \\
      --length 32 [--examples 256] [--latest w1,w2] [--fitted] [--sparsest] \\
      [--srbench build/harness/srbench] [--format csv]
"""
import argparse
import math
import os
import subprocess
import tempfile

import numpy as np

import srbench
from srbench.analysis import add_checkpoint_options, bootstrap, checkpoint_options, checkpoint_run, fail


def head_reads(alpha, tokens, lengths, symbols, latest):
    """alpha [B,H,T,T], tokens [B,T] ids, lengths [B]; symbols {name: id} of the input symbols;
    latest: a set of ids or empty. Returns [H] dicts of the means described in the module text."""
    B, H, T, _ = alpha.shape
    sums, counts = [dict() for _ in range(H)], [dict() for _ in range(H)]

    def add(h, key, value, n=1):
        sums[h][key] = sums[h].get(key, 0.0) + value
        counts[h][key] = counts[h].get(key, 0) + n

    for b in range(B):
        L = int(lengths[b])
        last = -1
        if latest and int(tokens[b, 0]) in latest:
            last = 0
        for i in range(1, L):
            if latest and int(tokens[b, i]) in latest:
                last = i
            keys = tokens[b, : i + 1]
            for h in range(H):
                row = alpha[b, h, i, : i + 1].astype(np.float64)
                p = row[row > 0]
                add(h, "entropy", float(-(p * np.log(p)).sum() / math.log(i + 1)))
                add(h, "max", float(row.max()))
                add(h, "first", float(row[0]))
                add(h, "self", float(row[i]))
                add(h, "prev", float(row[i - 1]))
                for name, sid in symbols.items():
                    on = keys == sid
                    add(h, f"on:{name}", float(row[on].sum()))
                    add(h, f"share:{name}", float(on.mean()))
                if latest and last >= 0:
                    add(h, "latest", float(row[last]))
    return [{k: sums[h][k] / counts[h][k] for k in sums[h]} for h in range(H)]


def print_sparsest(rows, columns, fmt):
    """Per (entry, model, layer): each run's head of least entropy in that layer (the first of
    equals), then the mean of every column over those heads with its bootstrap interval."""
    best, order = {}, []
    for (entry, model, seed, layer, head), reads in rows:
        key = (entry, model, layer, seed)
        if key not in best:
            order.append(key)
        if key not in best or reads["entropy"] < best[key]["entropy"]:
            best[key] = reads
    groups = {}
    for key in order:
        groups.setdefault(key[:3], []).append(best[key])
    if fmt == "csv":
        print("entry,model,layer,runs," + ",".join(f"{c},{c}_lo,{c}_hi" for c in columns))
    else:
        print("| entry | model | layer | runs | " + " | ".join(columns) + " |")
        print("|---|---|---|---|" + "---|" * len(columns))
    for (entry, model, layer), heads in groups.items():
        cells = []
        for c in columns:
            v = [r[c] for r in heads if c in r]
            lo, hi = bootstrap(v)
            cells.append((float(np.mean(v)) if v else math.nan, lo, hi))
        if fmt == "csv":
            print(f"{entry},{model},{layer},{len(heads)}," + ",".join(f"{m:.6g},{lo:.6g},{hi:.6g}" for m, lo, hi in cells))
        else:
            print(f"| {entry} | {model} | {layer} | {len(heads)} | " + " | ".join(
                f"{m:.2f}" + ("" if math.isnan(lo) else f" [{lo:.2f}, {hi:.2f}]") for m, lo, hi in cells) + " |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_checkpoint_options(p, examples=256)
    p.add_argument("--latest", default="", help="comma-separated symbols: weight on the latest key holding one")
    p.add_argument("--fitted", action="store_true", help="only the runs that fitted (id_acc reached the target)")
    p.add_argument("--sparsest", action="store_true",
                   help="per (entry, model, layer): means over runs of each run's sparsest head there, with intervals")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    a = p.parse_args(argv)
    overrides, exe = checkpoint_options(a)
    import h5py

    rows, columns = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for path in a.files:
            r = checkpoint_run(path)
            if a.fitted and not r["fitted"]:
                continue
            task_name, params, data_seed = r["task"], {**r["params"], **overrides}, r["data_seed"]
            try:
                task = srbench.Task(task_name, data_seed, **params)
            except ValueError as e:
                fail(f"{path}: {e}")
            vocab = list(task.vocab)
            latest = set()
            for name in filter(None, a.latest.split(",")):
                if name not in vocab:
                    fail(f"--latest: '{name}' is not a token of {task_name} ({', '.join(vocab)})")
                latest.add(vocab.index(name))
            batch = task.sample(a.length, a.examples, seed=data_seed, stream="eval")
            tokens, targets = np.asarray(batch.tokens), np.asarray(batch.targets)
            lengths = np.asarray(batch.lengths)
            inputs = {vocab[t] for t in np.unique(tokens[tokens >= 0]) if vocab[t] != "<s>"}
            symbols = {name: vocab.index(name) for name in vocab if name in inputs}
            bfile, ofile = os.path.join(tmp, "batch.h5"), os.path.join(tmp, "out.h5")
            with h5py.File(bfile, "w") as f:
                f["tokens"], f["targets"], f["lengths"] = tokens.astype(np.int32), targets.astype(np.int32), lengths
            proc = subprocess.run([exe, "forward", "--checkpoint", path, "--batch", bfile, "--out", ofile,
                                   "--attention"], capture_output=True, text=True)
            if proc.returncode != 0:
                fail(f"srbench forward on {path} exited {proc.returncode}: {proc.stderr.strip()}")
            with h5py.File(ofile, "r") as f:
                alphas = [f["attention"][str(l)][...] for l in range(len(f["attention"]))]
            for l, alpha in enumerate(alphas):
                for h, reads in enumerate(head_reads(alpha, tokens, lengths, symbols, latest)):
                    columns += [c for c in reads if c not in columns]
                    rows.append(((r["entry"], r["model"], r["seed"], l, h), reads))
    if not rows:
        fail("no run among the files fitted (--fitted)")
    if a.sparsest:
        print_sparsest(rows, columns, a.format)
    elif a.format == "csv":
        print("entry,model,seed,layer,head," + ",".join(columns))
        for key, reads in rows:
            print(",".join(map(str, key)) + "," + ",".join(f"{reads.get(c, math.nan):.6g}" for c in columns))
    else:
        print("| entry | model | seed | layer | head | " + " | ".join(columns) + " |")
        print("|---|---|---|---|---|" + "---|" * len(columns))
        for key, reads in rows:
            print("| " + " | ".join(map(str, key)) + " | " + " | ".join(f"{reads.get(c, math.nan):.3f}" for c in columns)
                  + " |")


if __name__ == "__main__":
    main()
