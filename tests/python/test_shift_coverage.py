#!/usr/bin/python3
"""scripts/shift_coverage.py against a brute force over every walk: gridworld's cell (with the
clamped edges) and dyck's depth (with the forced moves) per position, the expected training
counts, and the 1..8 case the review worked by hand (c8 at position 7 in 1 of 2048 training
examples). The script's exact chains re-state the two tasks' rules, so they are also held against
the generators themselves (srbench.Task's samples, within 5 binomial standard deviations): a
change to a generator that the script does not follow fails here.

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_shift_coverage.py --script scripts/shift_coverage.py
"""
import argparse
import itertools
import subprocess
import sys

import numpy as np
import srbench
from checks import check, finish, load_script


def brute(p_right, length, cells):
    out = np.zeros((length, cells))
    for moves in itertools.product((0, 1), repeat=length):
        prob = np.prod([p_right if m else 1 - p_right for m in moves])
        c = 0
        for t, m in enumerate(moves):
            c = min(c + 1, cells - 1) if m else max(c - 1, 0)
            out[t, c] += prob
    return out


def brute_dyck(p_open, length, max_depth):
    """Every walk of free moves; a forced move (depth 0: open, max_depth: close) has probability 1."""
    out = np.zeros((length, max_depth + 1))

    def walk(t, depth, prob):
        if t == length:
            return
        if depth == 0 or depth == max_depth:
            nxt = [(1 if depth == 0 else max_depth - 1, 1.0)]
        else:
            nxt = [(depth + 1, p_open), (depth - 1, 1.0 - p_open)]
        for d, q in nxt:
            out[t, d] += prob * q
            walk(t + 1, d, prob * q)

    walk(0, 0, 1.0)
    return out


def generator_frequencies(task, label_offset, length, count, **params):
    """[t, c]: the share of `count` generated examples whose label at position t is c."""
    t = srbench.Task(task, **params)
    labels = t.sample(n=length, count=count, seed=11).targets - label_offset
    classes = len(t.vocab) - label_offset
    return np.stack([np.bincount(labels[:, i], minlength=classes) for i in range(length)]) / count


def agrees_with_generator(got, freq, count):
    """Every probability within 5 binomial standard deviations (and 1e-9) of the generator's share."""
    bound = 5 * np.sqrt(got * (1 - got) / count) + 1e-9
    return bool(np.all(np.abs(freq - got) <= bound)), float(np.abs(freq - got).max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    mod = load_script(a.script)
    for p, T, cells in ((0.5, 10, 4), (0.8, 10, 9), (0.3, 9, 3)):
        got, want = mod.cell_distribution(p, T, cells), brute(p, T, cells)
        check(np.allclose(got, want, atol=1e-12), f"cell distribution p={p} T={T} cells={cells}: max diff "
              f"{np.abs(got - want).max():.3g}")
    for p, T, m in ((0.5, 11, 3), (0.8, 10, 8), (0.2, 9, 1)):
        got, want = mod.depth_distribution(p, T, m), brute_dyck(p, T, m)
        check(np.allclose(got, want, atol=1e-12), f"dyck depth distribution p_open={p} T={T} max_depth={m}: "
              f"max diff {np.abs(got - want).max():.3g}")
    count = 40000
    for p, T, cells in ((0.5, 10, 4), (0.8, 12, 9)):  # gridworld: L R c0..c{cells-1}
        ok, worst = agrees_with_generator(mod.cell_distribution(p, T, cells),
                                          generator_frequencies("gridworld", 2, T, count, cells=cells, p_right=p), count)
        check(ok, f"cell distribution p={p} T={T} cells={cells} against gridworld's generator: worst {worst:.3g}")
    for p, T, m in ((0.5, 11, 3), (0.8, 10, 8)):  # dyck k=1, label depth: ( ) d0..d{max_depth}
        ok, worst = agrees_with_generator(mod.depth_distribution(p, T, m), generator_frequencies(
            "dyck", 2, T, count, k=1, label="depth", max_depth=m, p_open=p), count)
        check(ok, f"dyck depth distribution p_open={p} T={T} max_depth={m} against dyck's generator: worst {worst:.3g}")
    # expected counts: lengths 1..8 uniform, 25,600 examples; position t exists in (8 - t) / 8 of them
    counts = mod.expected_training_counts(1, 8, 25600, 9)
    want = brute(0.5, 8, 9) * (np.array([(8 - t) / 8 for t in range(8)])[:, None]) * 25600
    check(np.allclose(counts, want), "expected training counts, lengths 1..8")
    check(abs(counts[7, 8] - 25600 / 2048) < 1e-9, f"c8 at position 7: 1/2048 of the examples (got {counts[7, 8]})")
    check(abs(mod.cell_distribution(0.8, 8, 9)[7, 8] - 0.8 ** 8) < 1e-12, "shifted: c8 at position 7 is 0.8^8")
    low, where, share = mod.coverage(1, 8, 25600, 9, 0.8, 8)
    check(abs(low - 12.5) < 1e-9 and where[0] == 7, f"least count at 1..8: 12.5 at position 7 (got {low} at {where})")
    check(share[1] == 0.0 and 0.0 < share[100] < 1.0, f"share below 1 and below 100: {share}")
    for bad, word in ((["--p-right", "1.5"], "--p-right"), (["--train", "8", "4"], "--train"), (["--cells", "1"], "--cells"),
                      (["--steps", "0"], "--steps")):
        out = subprocess.run(["/usr/bin/python3", a.script, *bad], capture_output=True, text=True)
        check(out.returncode == 2 and word in out.stderr, f"{' '.join(bad)}: exit 2 naming {word} ({out.stderr!r})")
    sys.exit(finish("shift_coverage.py"))


if __name__ == "__main__":
    main()
