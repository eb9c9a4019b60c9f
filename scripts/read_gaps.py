#!/usr/bin/env python3
"""Flip-flop errors by the distance from a read to the write it must recall.

A flip-flop read must return the bit of the last write; Liu et al. ("Exposing attention glitches",
2023) attribute a transformer's rare errors to reads far from that write. For each run file given
(saved with `train.save_checkpoint: true`; one run each, e.g. results/<suite>/runs/*.h5), this
script evaluates the run's model with `srbench eval --failures` on examples 0..N−1 of the `eval`
stream under the run's data_seed (the examples its own evaluation used) at `--length`, with the
run's task parameters and `--set` overrides (e.g. p_i=0.98, the sparse regime), draws the same
examples from the task's generator (srbench.Task, as `srbench sample` draws them), and counts reads and wrong reads by their gap:
- `ffl`: the number of (instruction, bit) pairs from the last `w` pair to the `r` pair (1 = the
  pair before);
- `flipflop`: the number of positions since the last write `w1`, `w2`, … (every input is scored; a
  write itself has gap 0 and is not counted, and before the first write the gap counts from the
  first input, which has gap 1).

Per (entry, model) it prints, for each gap bin [lo, hi) of `--bins` (and each band of read
positions of `--positions`, the read's pair or input counted from 1: in the sparse regime a long
gap is mostly a late read, and the bands separate the two), the reads over all runs,
the error rate (wrong / reads) as the mean over runs with its 95% percentile bootstrap interval
over runs (the report's bootstrap, srbench.analysis.bootstrap; runs without a read in the bin left out), and the runs
with a read there.

`--by-write` splits every row by what the read's write did to the state, and adds `stale`, the
wrong reads whose prediction is the state before that write (the write before it: a read that
returns an older write):
- `change`: the write set another value than the state before it (ffl: the bit of the write
  before; flipflop: the write before, or q0 when it is the first write);
- `repeat`: it wrote the value the state already had;
- `first`: ffl's first write (no state before it; stale is 0);
- `none`: a flipflop read before any write (target q0).

  /usr/bin/python3 scripts/read_gaps.py results/ffl-256/runs/*.h5 --length 128 --set p_i=0.98 \\
      --bins 1,8,16,32,48,64,96 [--positions 1,64] [--examples 45000] [--threads 2] \\
      [--by-write] [--srbench build/harness/srbench] [--format csv]
"""
import argparse
import math
import tempfile

import numpy as np
import srbench
from srbench.analysis import (add_checkpoint_options, bootstrap, checkpoint_failures, checkpoint_options,
                               checkpoint_run, checkpoint_sets, fail)

TASKS = ("ffl", "flipflop")
KINDS = ("change", "repeat", "first", "none")  # --by-write's split, in its rows' order


def eval_examples(path, task, params, data_seed, n, count):
    """Examples 0..count−1 of the `eval` stream at length n under data_seed, from the task's
    generator: [{tokens: names, targets: names or None where not scored}]."""
    try:
        t = srbench.Task(task, data_seed, **params)
        b = t.sample(n, count, seed=data_seed, stream="eval")
    except ValueError as e:
        fail(f"{path}: {e}")
    vocab = t.vocab
    return [{"tokens": [vocab[x] for x in toks[:m]], "targets": [vocab[y] if y >= 0 else None for y in tgts[:m]]}
            for toks, tgts, m in zip(b.tokens.tolist(), b.targets.tolist(), b.lengths.tolist())]


def run_predictions(path, task, overrides, exe, length, count, threads, folder):
    """The run of checkpointed run file `path` (checkpoint_run's dict; a run of another task than
    `task` fails), examples 0..count−1 of its eval stream at `length` (eval_examples') and the
    model's predictions on them where it errs (checkpoint_failures'), with `overrides` over the run's
    task parameters."""
    r = checkpoint_run(path)
    if r["task"] != task:
        fail(f"{path}: task {r['task']}; this script reads {task} runs")
    params, sets = checkpoint_sets(r, overrides)
    examples = eval_examples(path, task, params, r["data_seed"], length, count)
    return r, examples, checkpoint_failures(exe, path, r, sets, length, count, threads, folder)


def reads_of(task, tokens):
    """(token index, gap, position, kind, before) of every read of an example: gap as in the module
    text; position the read's pair (ffl) or input (flipflop) counted from 1; kind (KINDS) what its
    write did to the state, and before the target a read returning the state before that write
    would have (None for `first` and `none`)."""
    out = []
    first = 1 if tokens and tokens[0] == "<s>" else 0
    if task == "ffl":
        last, state, before = None, None, None
        for j, t in enumerate(range(first, len(tokens) - 1, 2)):
            if tokens[t] == "w":
                last, state, before = j, tokens[t + 1], state
            elif tokens[t] == "r" and last is not None:
                kind = "first" if before is None else "repeat" if before == state else "change"
                out.append((t, j - last, j + 1, kind, before))
    else:
        last, state, before = first - 1, None, None  # before the first write: counted from the start
        for t in range(first, len(tokens)):
            if tokens[t].startswith("w"):
                last, state, before = t, "q" + tokens[t][1:], state or "q0"
            else:
                kind = "none" if state is None else "repeat" if before == state else "change"
                out.append((t, t - last, t - first + 1, kind, before))
    return out


def count(task, examples, failures, edges, bands, by_write):
    """reads, wrong reads and stale wrong reads [position band, gap bin, kind]: gap bins
    [edges[i], edges[i+1]) and position bands [bands[k], bands[k+1]), each last one open; kinds
    KINDS with by_write, else one."""
    shape = (len(bands), len(edges), len(KINDS) if by_write else 1)
    reads, wrong, stale = np.zeros(shape, int), np.zeros(shape, int), np.zeros(shape, int)
    for i, e in enumerate(examples):
        pred = failures.get(i)
        for t, gap, pos, kind, before in reads_of(task, e["tokens"]):
            b = int(np.searchsorted(edges, gap, side="right")) - 1
            k = int(np.searchsorted(bands, pos, side="right")) - 1
            if b < 0 or k < 0 or e["targets"][t] is None:
                continue
            c = KINDS.index(kind) if by_write else 0
            reads[k, b, c] += 1
            if pred is not None and pred[t] != e["targets"][t]:
                wrong[k, b, c] += 1
                stale[k, b, c] += int(before is not None and pred[t] == before)
    return reads, wrong, stale


def edges_of(text_, option):
    try:
        edges = [int(x) for x in text_.split(",")]
    except ValueError:
        fail(f"{option}: '{text_}' is not a comma-separated list of integers")
    if not edges or edges[0] < 1 or any(x >= y for x, y in zip(edges, edges[1:])):
        fail(f"{option}: '{text_}' must ascend strictly from 1 or more")
    return edges


def upper(edges, b):
    """The exclusive upper edge of bin b ("" for the last, open one)."""
    return edges[b + 1] if b + 1 < len(edges) else ""


def label(edges, b):
    if b + 1 == len(edges):
        return f">= {edges[b]}"
    return f"{edges[b]}-{edges[b + 1] - 1}" if edges[b + 1] - 1 > edges[b] else f"{edges[b]}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_checkpoint_options(p, examples=4096)
    p.add_argument("--bins", default="1,2,4,8,16,32,64", help="ascending gap bin edges, the first >= 1")
    p.add_argument("--positions", default="1", help="ascending edges of bands of read positions (default: one band)")
    p.add_argument("--threads", type=int, default=1, help="srbench eval's OpenMP threads")
    p.add_argument("--by-write", action="store_true",
                   help="split each row by what the read's write did (change, repeat, first, none) and count stale errors")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    a = p.parse_args(argv)
    edges, bands = edges_of(a.bins, "--bins"), edges_of(a.positions, "--positions")
    overrides, exe = checkpoint_options(a)
    samples, groups, order = {}, {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for path in a.files:
            r = checkpoint_run(path)
            task, data_seed, entry, model = r["task"], r["data_seed"], r["entry"], r["model"]
            if task not in TASKS:
                fail(f"{path}: task {task}; this script knows {', '.join(TASKS)}")
            params, sets = checkpoint_sets(r, overrides)
            key = (task, tuple(sets), data_seed)
            if key not in samples:
                samples[key] = eval_examples(path, task, params, data_seed, a.length, a.examples)
            failures = checkpoint_failures(exe, path, r, sets, a.length, a.examples, a.threads, tmp)
            if (entry, model) not in groups:
                order.append((entry, model))
                groups[(entry, model)] = []
            groups[(entry, model)].append(count(task, samples[key], failures, edges, bands, a.by_write))
    kinds = KINDS if a.by_write else (None,)
    if a.format == "csv":
        print("entry,model,pos_lo,pos_hi,gap_lo,gap_hi," + ("write," if a.by_write else "") + "runs,reads,wrong,"
              + ("stale," if a.by_write else "") + "error_rate,ci_lo,ci_hi")
    else:
        print("| entry | model | positions | gap | " + ("write | " if a.by_write else "") + "reads | "
              + ("stale / wrong | " if a.by_write else "") + "error rate, mean over runs [95% interval] | runs |")
        print("|---|---|---|---|---|---|---|" + ("---|---|" if a.by_write else ""))
    for entry, model in order:
        runs = groups[(entry, model)]
        for k in range(len(bands)):
            for b in range(len(edges)):
                for c, kind in enumerate(kinds):
                    rates = [w[k, b, c] / r[k, b, c] for r, w, _ in runs if r[k, b, c] > 0]
                    if kind is not None and not rates:
                        continue  # a kind without reads here (e.g. ffl's `none`)
                    reads, wrong, stale = (sum(int(x[m][k, b, c]) for x in runs) for m in range(3))
                    mean = float(np.mean(rates)) if rates else math.nan
                    lo, hi = bootstrap(rates)
                    if a.format == "csv":
                        print(f"{entry},{model},{bands[k]},{upper(bands, k)},{edges[b]},{upper(edges, b)},"
                              + (f"{kind}," if kind else "") + f"{len(rates)},{reads},{wrong},"
                              + (f"{stale}," if kind else "") + f"{mean:.10g},{lo:.10g},{hi:.10g}")
                    else:
                        ci = "" if math.isnan(lo) else f" [{lo:.4f}, {hi:.4f}]"
                        print(f"| {entry} | {model} | {label(bands, k)} | {label(edges, b)} | "
                              + (f"{kind} | " if kind else "") + f"{reads} | " + (f"{stale} / {wrong} | " if kind else "")
                              + f"{mean:.4f}{ci} | {len(rates)} |")


if __name__ == "__main__":
    main()
