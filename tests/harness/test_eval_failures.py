#!/usr/bin/python3
"""`srbench eval --failures FILE` against an independent computation of which examples a model gets
wrong.

    /usr/bin/python3 test_eval_failures.py --srbench build/harness/srbench

A transformer checkpoint (init-checkpoint, every weight then randomised as the parity test does, so
that its predictions vary from example to example and the two best logits are far apart, and
the head's bias raised on the two state tokens, so that it predicts states and gets some right) is
evaluated on parity at two short lengths, in distribution and under a shift, with a data seed other
than 0. The same examples are drawn with `srbench sample --stream eval --seed <data seed>` and run
through the float64 PyTorch reference of model.md (tests/parity/reference.py). The file must hold
exactly the examples with a scored position whose reference argmax is not the target — with
`sample`'s fields, their condition and index, and the reference's argmax at every scored position
(null elsewhere) — and each printed seq_acc must be 1 − (its failures) / examples. Every row must
have examples right and wrong, so that a file of all or none would fail. An unwritable --failures
path is refused with exit 2, naming the option. Needs torch, h5py, numpy, yaml; fails, never skips.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

import reference
from checks import check, finish
from parity_report import run
from test_parity import randomise

DATA_SEED, EXAMPLES, LENGTHS, SHIFT = 3, 300, [1, 3], "p1=0.9"
MIN_MARGIN = 1e-4  # the reference's best logit above the second at every scored position


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ck = os.path.join(tmp, "ck.h5")
        run([a.srbench, "init-checkpoint", "--vocab", "4", "--seed", "5", "--out", ck, "--set", "d_model=16",
             "--set", "heads=2", "--set", "layers=2", "--set", "max_len=16"])
        randomise(ck, np.random.default_rng(11))
        cfg, _, params = reference.load_checkpoint(ck)
        params["head.bias"][2:] += 3.0  # q0, q1
        reference.save_params(ck, {"head.bias": params["head.bias"]})
        cfg, _, params = reference.load_checkpoint(ck)  # as stored (float32)
        failures = os.path.join(tmp, "failures.jsonl")
        out = run([a.srbench, "eval", "--checkpoint", ck, "--task", "parity", "--lengths", ",".join(map(str, LENGTHS)),
                   "--shift", SHIFT, "--examples", str(EXAMPLES), "--data-seed", str(DATA_SEED),
                   "--failures", failures])
        printed = {(r[1], int(r[0])): float(r[4]) for r in (line.split() for line in out.splitlines()[1:])}
        got = {}
        for line in open(failures):
            e = json.loads(line)
            got[(e["condition"], e["n"], e["index"])] = e
        want = {}
        for condition, sets in (("id", []), (SHIFT, ["--set", SHIFT])):
            for n in LENGTHS:
                lines = run([a.srbench, "sample", "parity", "-n", str(n), "--count", str(EXAMPLES), "--stream", "eval",
                             "--seed", str(DATA_SEED), "--format", "jsonl"] + sets).splitlines()
                examples = [json.loads(s) for s in lines]
                names = ["0", "1", "q0", "q1"]  # parity's vocabulary: inputs, then states
                ids = {s: i for i, s in enumerate(names)}
                tokens = torch.tensor([[ids[t] for t in e["tokens"]] for e in examples])
                targets = torch.tensor([[ids[t] if t else -1 for t in e["targets"]] for e in examples])
                with torch.no_grad():
                    logits, _ = reference.forward(cfg, params, tokens, targets)
                top2 = logits.topk(2, dim=-1).values
                margin = (top2[..., 0] - top2[..., 1])[targets >= 0].min().item()
                check(margin >= MIN_MARGIN, f"{condition} n={n}: reference margin {margin:.2e} < {MIN_MARGIN}: ill-posed check")
                pred = logits.argmax(-1)
                wrong = ((pred != targets) & (targets >= 0)).any(1)
                for i in np.flatnonzero(wrong.numpy()):
                    e = dict(examples[i])
                    e.update(condition=condition, index=int(i),
                             predictions=[names[p] if t >= 0 else None for p, t in zip(pred[i].tolist(), targets[i].tolist())])
                    want[(condition, n, int(i))] = e
                k = int(wrong.sum())
                print(f"{condition:8s} n={n}: {k} of {EXAMPLES} wrong by the reference; "
                      f"printed seq_acc {printed[(condition, n)]:.4f}")
                check(0 < k < EXAMPLES, f"{condition} n={n}: {k} of {EXAMPLES} wrong; the check needs both kinds")
                check(abs(printed[(condition, n)] - (1 - k / EXAMPLES)) <= 1e-4, f"{condition} n={n}: printed seq_acc {printed[(condition, n)]} != 1 - {k}/{EXAMPLES}")
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        check(not missing and not extra, f"failing examples: {len(missing)} missing from the file (e.g. {missing[:3]}), "
              f"{len(extra)} in it that the reference gets right (e.g. {extra[:3]})")
        differing = sorted(k for k in set(want) & set(got) if want[k] != got[k])
        for k in differing[:1]:
            check(False, f"{len(differing)} lines differ from sample + reference, e.g. {k}:\n  file {got[k]}\n"
                  f"  want {want[k]}")
        print(f"file: {len(got)} lines, reference: {len(want)} failing examples")

        p = subprocess.run([a.srbench, "eval", "--checkpoint", ck, "--task", "parity", "--lengths", "3",
                            "--failures", tmp], capture_output=True, text=True)
        print(f"--failures to a folder: exit {p.returncode}, {p.stderr.strip()}")
        check(p.returncode == 2 and "--failures" in p.stderr, f"--failures to a folder: exit {p.returncode} (want 2 naming --failures): {p.stderr}")
    return finish("the failing examples are those of the reference")


if __name__ == "__main__":
    sys.exit(main())
