#!/usr/bin/env python3
"""Does a gridworld (or dyck) shift reach a state the training draws did not cover?

gridworld (tasks.md) walks `cells` cells from cell 0, R with probability p_right (clamped at the
last cell), L otherwise (clamped at 0), and labels each position with the cell reached. A shift
of p_right changes which (position, cell) pairs occur; a pair the training draws almost never
contain is a state the model has not been taught, and a drop there is not a shortcut failing.

`--task dyck` does the same for dyck's stack depth (tasks.md: at depth 0 open, at max_depth
close, else open with probability p_open; `--p-train`/`--p-right` are then p_open and
`--cells` is max_depth + 1).

For training on lengths lo..hi (drawn uniformly, as `train.length` is) with steps × batch
examples, this prints the expected number of training examples that contain each (position,
cell) pair, its minimum over the pairs the shift reaches at length `--eval-length`, and the share
of the shift's labels at pairs expected fewer than 1, 10 and 100 times.

  /usr/bin/python3 scripts/shift_coverage.py --train 1 32 --steps 1200 --batch 32 \
      --p-right 0.8 --eval-length 32
  /usr/bin/python3 scripts/shift_coverage.py --task dyck --cells 9 --p-right 0.8
"""
import argparse

import numpy as np

from srbench.analysis import fail


def cell_distribution(p_right, length, cells):
    """[t, c]: the probability that the walk is at cell c after reading input t (t = 0..length-1)."""
    d = np.zeros(cells)
    d[0] = 1.0
    out = np.zeros((length, cells))
    for t in range(length):
        n = np.zeros(cells)
        np.add.at(n, np.minimum(np.arange(cells) + 1, cells - 1), d * p_right)  # add.at: the clamped
        np.add.at(n, np.maximum(np.arange(cells) - 1, 0), d * (1.0 - p_right))  # cells receive twice
        d = n
        out[t] = d
    return out


def depth_distribution(p_open, length, max_depth):
    """[t, d]: the probability that dyck's stack depth is d after reading input t."""
    d = np.zeros(max_depth + 1)
    d[0] = 1.0
    out = np.zeros((length, max_depth + 1))
    for t in range(length):
        n = np.zeros(max_depth + 1)
        n[1] += d[0]  # depth 0: open
        n[max_depth - 1] += d[max_depth]  # max_depth: close
        inner = np.arange(1, max_depth)
        n[inner + 1] += d[inner] * p_open
        np.add.at(n, inner - 1, d[inner] * (1.0 - p_open))
        d = n
        out[t] = d
    return out


def distribution(task, p, length, cells):
    return cell_distribution(p, length, cells) if task == "gridworld" else depth_distribution(p, length, cells - 1)


def expected_training_counts(lo, hi, examples, cells, p_right=0.5, task="gridworld"):
    """[t, c]: expected number of training examples whose position t is at cell c."""
    lengths = np.arange(lo, hi + 1)
    dist = distribution(task, p_right, hi, cells)
    reach = np.array([(lengths > t).mean() for t in range(hi)])  # P(an example has position t)
    return dist * reach[:, None] * examples


def coverage(lo, hi, examples, cells, p_shift, eval_length, p_train=0.5, task="gridworld"):
    counts = expected_training_counts(lo, hi, examples, cells, p_train, task)
    shifted = distribution(task, p_shift, eval_length, cells)
    if eval_length > hi:
        counts = np.vstack([counts, np.zeros((eval_length - hi, cells))])
    counts = counts[:eval_length]
    reached = shifted > 0
    share = {thr: float((shifted * (counts < thr)).sum() / eval_length) for thr in (1, 10, 100)}
    t, c = np.unravel_index(np.argmin(np.where(reached, counts, np.inf)), counts.shape)
    return float(counts[t, c]), (int(t), int(c)), share


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", choices=["gridworld", "dyck"], default="gridworld")
    p.add_argument("--train", nargs=2, type=int, metavar=("LO", "HI"), default=[1, 32])
    p.add_argument("--steps", type=int, default=1200)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--cells", type=int, default=9)
    p.add_argument("--p-train", type=float, default=0.5, help="p_right of the training distribution")
    p.add_argument("--p-right", type=float, default=0.8, help="p_right of the shift")
    p.add_argument("--eval-length", type=int, default=32)
    a = p.parse_args(argv)
    for name, v in (("--p-train", a.p_train), ("--p-right", a.p_right)):
        if not 0.0 <= v <= 1.0:
            fail(f"{name} must be a probability in [0, 1], got {v}")
    if not 1 <= a.train[0] <= a.train[1]:
        fail(f"--train LO HI must have 1 <= LO <= HI, got {a.train[0]} {a.train[1]}")
    for name, v, least in (("--steps", a.steps, 1), ("--batch", a.batch, 1), ("--cells", a.cells, 2),
                           ("--eval-length", a.eval_length, 1)):
        if v < least:
            fail(f"{name} must be at least {least}, got {v}")
    low, where, share = coverage(a.train[0], a.train[1], a.steps * a.batch, a.cells, a.p_right, a.eval_length,
                                 a.p_train, a.task)
    what, p_name = ("cell", "p_right") if a.task == "gridworld" else ("depth", "p_open")
    print(f"{a.task}: training lengths {a.train[0]}..{a.train[1]}, {a.steps} x {a.batch} examples, {p_name} {a.p_train}; "
          f"shift {p_name} {a.p_right} at length {a.eval_length}, {a.cells} {what} values")
    print(f"least expected training count of a (position, {what}) pair the shift reaches: {low:.1f} "
          f"(position {where[0]}, {what} {where[1]})")
    for thr, v in share.items():
        print(f"share of the shift's labels at pairs expected fewer than {thr} times: {v:.4f}")


if __name__ == "__main__":
    main()
