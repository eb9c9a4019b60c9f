#!/usr/bin/env python3
"""What a parity run predicts where it errs: the parity of which part of the input.

A transformer that has not fitted parity at length T is often exact over the first positions and
at chance beyond them (docs/results.md, "Shortcuts to automata at T = 32"). At chance can mean
two things: predictions unrelated to the input, or the parity of a part of it — of a prefix
(bits 1..k, the count stopped at k) or of a window (bits j..t, the count over the latest inputs).
This script tells them apart: for each run file given (saved with `train.save_checkpoint: true`;
task parity) it evaluates the run's model with `srbench eval --failures` on examples 0..N−1 of the
`eval` stream under the run's data seed at `--length`, and for each scored position t (counted
from 1 over the scored inputs) prints

  acc          the share of predictions equal to the target (the parity of bits 1..t);
  prefix_k     the k ≤ t whose prefix parity (bits 1..k) the predictions agree with most, and
  prefix_agree that share (ties: the largest k);
  window_j     the j ≤ t whose window parity (bits j..t) they agree with most, and window_agree
               (ties: the smallest j; j = 1 is the target itself);
  majority     the share of the most frequent prediction there (1: the same state predicted for
               every input, a constant).

A prediction that is the parity of bits 1..k agrees with it always and with any other prefix or
window half the time (on random bits), so an agreement near 1 names the part of the input the
model counts, and near 0.5 for every k and j says it counts none of them — a constant, say
(majority 1), which is right as often as the inputs' parity there is that state.

  /usr/bin/python3 scripts/prefix_parity.py results/shortcuts-T32-parity/runs/*.h5 --length 32 \\
      [--examples 512] [--from 20] [--format markdown|csv]
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_gaps import run_predictions  # noqa: E402  (the same examples and predictions)
from srbench.analysis import add_checkpoint_options, checkpoint_options, fail  # noqa: E402

STATES = {"q0": 0, "q1": 1}


def arrays(examples, predictions):
    """(bits [N, T], targets [N, T], predicted [N, T]) over the scored positions, as 0/1."""
    bits, targets, predicted = [], [], []
    for i, e in enumerate(examples):
        scored = [t for t, y in enumerate(e["targets"]) if y is not None]
        pred = predictions.get(i)
        bits.append([int(e["tokens"][t]) for t in scored])
        targets.append([STATES[e["targets"][t]] for t in scored])
        predicted.append([STATES.get(pred[t], -1) if pred is not None else STATES[e["targets"][t]] for t in scored])
    if len({len(b) for b in bits}) != 1:
        fail("the examples score different numbers of positions; give one --length")
    return np.array(bits), np.array(targets), np.array(predicted)


def position_rows(bits, targets, predicted, first):
    """One row per scored position t >= first: (t, acc, prefix_k, prefix_agree, window_j, window_agree,
    majority)."""
    prefix = np.cumsum(bits, axis=1) % 2  # prefix[:, k-1]: parity of bits 1..k
    rows = []
    for t in range(max(first, 1), bits.shape[1] + 1):
        p = predicted[:, t - 1]
        acc = float(np.mean(p == targets[:, t - 1]))
        agree_k = [float(np.mean(p == prefix[:, k - 1])) for k in range(1, t + 1)]
        best_k = max(range(1, t + 1), key=lambda k: (agree_k[k - 1], k))
        # window j..t: the parity of bits 1..t minus that of 1..j-1
        agree_j = [float(np.mean(p == (prefix[:, t - 1] - (prefix[:, j - 2] if j > 1 else 0)) % 2))
                   for j in range(1, t + 1)]
        best_j = min(range(1, t + 1), key=lambda j: (-agree_j[j - 1], j))
        majority = max(float(np.mean(p == v)) for v in np.unique(p))
        rows.append((t, acc, best_k, agree_k[best_k - 1], best_j, agree_j[best_j - 1], majority))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_checkpoint_options(p, examples=512)
    p.add_argument("--from", dest="first", type=int, default=1, help="the first position printed (counted from 1)")
    p.add_argument("--threads", type=int, default=1, help="srbench eval's OpenMP threads")
    p.add_argument("--format", choices=["markdown", "csv"], default="markdown")
    a = p.parse_args(argv)
    overrides, exe = checkpoint_options(a)
    columns = ["entry", "model", "seed", "position", "acc", "prefix_k", "prefix_agree", "window_j", "window_agree",
               "majority"]
    if a.format == "csv":
        print(",".join(columns))
    else:
        print("| " + " | ".join(columns) + " |")
        print("|---" * len(columns) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in a.files:
            r, examples, predictions = run_predictions(path, "parity", overrides, exe, a.length, a.examples, a.threads,
                                                       tmp)
            for t, acc, k, ak, j, aj, mj in position_rows(*arrays(examples, predictions), a.first):
                cells = [r["entry"], r["model"], str(r["seed"]), str(t), f"{acc:.4f}", str(k), f"{ak:.4f}", str(j),
                         f"{aj:.4f}", f"{mj:.4f}"]
                print(",".join(cells) if a.format == "csv" else "| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
