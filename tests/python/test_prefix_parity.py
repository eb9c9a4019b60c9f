#!/usr/bin/python3
"""scripts/prefix_parity.py (which part of the input a parity run's predictions are the parity of)
against independent computations.

    /usr/bin/python3 test_prefix_parity.py --srbench build/harness/srbench --script scripts/prefix_parity.py

1. Hand-made predictions through the script's own position_rows: the parity of bits 1..3 at every
   position (prefix_k 3, agreement 1 from position 3 on), the parity of the last two bits (window_j
   t − 1, agreement 1), the target itself (acc 1, prefix_k t, window_j 1), a constant (majority 1),
   and ties (the largest k, the smallest j).
2. A short suite (parity with a start token, a 1-layer transformer trained 60 steps at length 12 so
   that it errs, 2 seeds, save_checkpoint) swept and the script run on its run files in csv: every
   row's acc equals the run file's eval/position_acc at that position (the harness's own count), and
   every row's best prefix and window and their agreements equal a count made here by loops over
   `srbench sample --format jsonl` examples and this test's own `srbench eval --failures`
   predictions. Some position must be wrong somewhere, so that a script counting every prediction
   right fails. A run of another task is refused with exit 2. Needs numpy, h5py; fails, never skips.
"""
import argparse
import io
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import pandas as pd

from checks import check, finish, load_script
from parity_report import eval_examples, eval_failures, run, sweep_run_files

SUITE = """name: prefixpar
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 40, position: learned}
  train: {steps: 60, batch: 16, lr: 3e-3, warmup: 5, eval_every: 30, save_checkpoint: true, length: 12, data_seed: 3}
  eval: {lengths: [12], examples: 64, val_examples: 16}
tasks:
  - task: parity
    name: C2
    params: {start_token: true}
models:
  - name: m
"""
OTHER = SUITE.replace("name: prefixpar", "name: prefixother").replace("task: parity", "task: flipflop").replace(
    "name: C2", "name: ff")
LENGTH, EXAMPLES = 12, 64


def hand_made(mod):
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, size=(400, 10))
    running = np.array([[sum(b[:t + 1]) % 2 for t in range(10)] for b in bits])
    first3 = np.array([[sum(b[:min(t + 1, 3)]) % 2 for t in range(10)] for b in bits])
    last2 = np.array([[sum(b[max(0, t - 1):t + 1]) % 2 for t in range(10)] for b in bits])
    rows = mod.position_rows(bits, running, first3, 1)
    check(all(r[2] == 3 and r[3] == 1.0 for r in rows if r[0] >= 3),
          f"predictions = parity of bits 1..3: prefix_k 3, agreement 1 from position 3: {rows[2:5]}")
    check(all(0.4 < r[1] < 0.6 for r in rows if r[0] >= 5), "those predictions are right half the time beyond 4")
    rows = mod.position_rows(bits, running, last2, 1)
    check(all(r[4] == r[0] - 1 and r[5] == 1.0 for r in rows if r[0] >= 2),
          f"predictions = parity of the last two bits: window_j t-1, agreement 1: {rows[1:4]}")
    rows = mod.position_rows(bits, running, running, 1)
    check(all(r[1] == 1.0 and r[2] == r[0] and r[4] == 1 for r in rows),
          f"predictions = the target: acc 1, prefix_k t, window_j 1: {rows[:3]}")
    rows = mod.position_rows(bits, running, np.ones_like(running), 1)
    check(all(r[6] == 1.0 and r[1] == float(np.mean(running[:, r[0] - 1] == 1)) for r in rows),
          f"a constant prediction: majority 1, right as often as the parity is 1: {rows[:3]}")
    check(all(r[6] < 0.6 for r in mod.position_rows(bits, running, running, 5)),
          "the running parity predicted: majority about one half")
    # ties: with bit 2 always 0, bits 1..1 and 1..2 have one parity (the largest k is named); with
    # bit 1 always 0, windows 1..t and 2..t have one parity (the smallest j is named)
    tied = bits.copy()
    tied[:, 1] = 0
    first1 = np.repeat(tied[:, :1], 10, axis=1)
    rows = mod.position_rows(tied, running, first1, 2)
    check(all(r[2] == 2 and r[3] == 1.0 for r in rows if r[0] == 2),
          f"bits 1..1 and 1..2 tied at agreement 1: prefix_k 2 (the largest): {rows[:1]}")
    tied = bits.copy()
    tied[:, 0] = 0
    own = np.cumsum(tied, axis=1) % 2
    rows = mod.position_rows(tied, own, own, 2)
    check(all(r[4] == 1 and r[5] == 1.0 for r in rows),
          f"windows 1..t and 2..t tied at agreement 1: window_j 1 (the smallest): {rows[:2]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    hand_made(load_script(a.script))
    with tempfile.TemporaryDirectory() as tmp:
        files = sweep_run_files(a.srbench, SUITE, os.path.join(tmp, "par"))
        check(len(files) == 2, f"{len(files)} run files, expected 2")
        out = run([sys.executable, a.script] + files + ["--length", str(LENGTH), "--examples", str(EXAMPLES),
                                                        "--format", "csv", "--srbench", a.srbench])
        table = pd.read_csv(io.StringIO(out))
        check(len(table) == 2 * LENGTH, f"{len(table)} csv rows, expected {2 * LENGTH} (a row per position and run)")
        examples = eval_examples(a.srbench, "parity", LENGTH, EXAMPLES, 3, ["--set", "start_token=true"])
        wrong = 0
        for path in files:
            with h5py.File(path, "r") as f:
                g = f["runs"][list(f["runs"])[0]]
                seed = int(g.attrs["seed"])
                e = g["eval"]
                row = [r for r in range(len(e["length"])) if int(e["length"][r]) == LENGTH][0]
                position_acc = e["position_acc"][row]
            preds = eval_failures(a.srbench, path, "parity", LENGTH, EXAMPLES, 3, ["--set", "start_token=true"], tmp)
            ours = table[table["seed"] == seed].set_index("position")
            for t in range(1, LENGTH + 1):
                # position t is token t (token 0 the start token); loops over the examples
                right = 0
                said = {}
                agree_k = [0] * (t + 1)
                agree_j = [0] * (t + 1)
                for i, ex in enumerate(examples):
                    target = ex["targets"][t]
                    got = preds[i][t] if i in preds else target
                    right += got == target
                    said[got] = said.get(got, 0) + 1
                    bits = [int(ex["tokens"][s]) for s in range(1, t + 1)]
                    for k in range(1, t + 1):
                        agree_k[k] += got == f"q{sum(bits[:k]) % 2}"
                    for j in range(1, t + 1):
                        agree_j[j] += got == f"q{sum(bits[j - 1:]) % 2}"
                wrong += EXAMPLES - right
                best_k = max(range(1, t + 1), key=lambda k: (agree_k[k], k))
                best_j = min(range(1, t + 1), key=lambda j: (-agree_j[j], j))
                r = ours.loc[t]
                check(abs(r["acc"] - position_acc[t]) <= 5e-5,
                      f"seed {seed} position {t}: acc {r['acc']} against the run file's position_acc {position_acc[t]:.4f}")
                check(abs(r["acc"] - right / EXAMPLES) <= 5e-5, f"seed {seed} position {t}: acc {r['acc']}, counted "
                                                                f"{right / EXAMPLES:.4f}")
                check(int(r["prefix_k"]) == best_k and abs(r["prefix_agree"] - agree_k[best_k] / EXAMPLES) <= 5e-5,
                      f"seed {seed} position {t}: prefix {r['prefix_k']} at {r['prefix_agree']}, counted {best_k} at "
                      f"{agree_k[best_k] / EXAMPLES:.4f}")
                check(abs(r["majority"] - max(said.values()) / EXAMPLES) <= 5e-5,
                      f"seed {seed} position {t}: majority {r['majority']}, counted {max(said.values()) / EXAMPLES:.4f}")
                check(int(r["window_j"]) == best_j and abs(r["window_agree"] - agree_j[best_j] / EXAMPLES) <= 5e-5,
                      f"seed {seed} position {t}: window {r['window_j']} at {r['window_agree']}, counted {best_j} at "
                      f"{agree_j[best_j] / EXAMPLES:.4f}")
        check(wrong > 0, "the runs should be wrong somewhere (60 steps), so that acc is tested below 1")
        others = sweep_run_files(a.srbench, OTHER, os.path.join(tmp, "other"))
        p = subprocess.run([sys.executable, a.script, others[0], "--length", str(LENGTH), "--srbench", a.srbench],
                           capture_output=True, text=True)
        check(p.returncode == 2 and "flipflop" in p.stderr, f"a flipflop run: exit {p.returncode}, '{p.stderr.strip()}'")
    return finish("prefix_parity.py's accuracies equal the run files' and its best prefixes and windows a count by loops")


if __name__ == "__main__":
    sys.exit(main())
