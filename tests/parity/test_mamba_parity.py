#!/usr/bin/python3
"""srbench's Mamba language model (linear-rnn.md) against a float64 PyTorch implementation of the
spec (mamba_reference.py): `srbench forward`'s logits, loss and every gradient, then five AdamW
steps of parity_train against torch.optim.AdamW, for rms and layer norm, with and without ln_f,
positive and signed eigenvalues, d_conv 1 and 4, one and two layers; weights perturbed to O(1) on
padded batches. Tolerances model.md's (parity_report.py). Needs torch, h5py, numpy, yaml: it
fails, never skips.

    /usr/bin/python3 test_mamba_parity.py --srbench build/harness/srbench --parity-train build/tests/parity_train
"""
import argparse
import math
import os
import sys
import tempfile

import h5py
import numpy as np
import torch

import mamba_reference as ref
from init_check import check_fresh_inits
from reference import load_checkpoint, save_params
from parity_report import LIMITS, compare_forward, compare_training, current, failures, report, run

V, D, L, B, T = 11, 16, 2, 5, 21
CASES = [
    ("mamba", []),
    ("mamba/signed", ["eigenvalues=signed"]),
    ("mamba/layer norm", ["norm=layer"]),
    ("mamba/grazzi", ["d_conv=1", "final_norm=false", "eigenvalues=signed", "init=grazzi"]),
    ("mamba/1 layer, d_state 4, expand 3", ["layers=1", "d_state=4", "expand=3", "dt_rank=3"]),
]
COLUMNS = ["logits", "loss", "grads", "zero grads", "step losses", "params"]


def perturb(path, rng):
    """O(1) signals: matrices N(0, 1/fan_in), biases and D N(0, 0.3²), tok_emb N(0, 1), A_log
    U(−1, 1.5), dt_proj.bias U(−3, 1); norm weights 1 + N(0, 0.1²)."""
    _, _, params = load_checkpoint(path)
    new = {}
    for name, p in params.items():
        shape = tuple(p.shape)
        if name == "tok_emb":
            v = rng.standard_normal(shape)
        elif name.endswith("A_log"):
            v = rng.uniform(-1.0, 1.5, shape)
        elif name.endswith("dt_proj.bias"):
            v = rng.uniform(-3.0, 1.0, shape)
        elif any(part in ("ln1", "ln_f") for part in name.split(".")):
            v = (1.0 if name.endswith("weight") else 0.0) + 0.1 * rng.standard_normal(shape)
        elif p.dim() == 2:
            v = rng.standard_normal(shape) / math.sqrt(shape[1])
        else:
            v = 0.3 * rng.standard_normal(shape)
        new[name] = torch.tensor(v)
    save_params(path, new)


def write_batch(path, rng, V):
    lengths = np.array([T, T - 3, 6, T - 1, 9], dtype=np.int32)[:B]
    tokens = rng.integers(0, V, size=(B, T)).astype(np.int32)
    targets = rng.integers(0, V, size=(B, T)).astype(np.int32)
    for b in range(B):
        targets[b, lengths[b]:] = -1
    targets[0, 4] = -1
    with h5py.File(path, "w") as f:
        f["tokens"], f["targets"], f["lengths"] = tokens, targets, lengths
    return torch.tensor(tokens, dtype=torch.int64), torch.tensor(targets, dtype=torch.int64)


def check_forward(args, ck, batch, tokens, targets, out, reference=ref):
    """srbench forward's logits, loss and gradients against `reference`'s (a module with
    forward_backward and make_loss: mamba_reference here, deltanet_reference for DeltaNet)."""
    run([args.srbench, "forward", "--checkpoint", ck, "--batch", batch, "--out", out])
    cfg, _, params = load_checkpoint(ck)
    logits, loss, grads = reference.forward_backward(cfg, params, tokens, targets)
    compare_forward(out, logits, loss, grads, one_layer=cfg["layers"] == 1)
    return grads


def check_training(args, ck, batch, tokens, targets, ref_grads, workdir, reference=ref):
    """Five AdamW steps: weight decay on tok_emb, head.weight and every 2-D mixer weight, none on
    norms, biases, A_log, D (linear-rnn.md); every step clips."""
    cfg, _, params = load_checkpoint(ck)
    leaves, loss_fn = reference.make_loss(cfg, params, tokens, targets)
    compare_training(args, ck, batch, leaves, loss_fn, ref_grads, workdir,
                     lambda name, p: p.dim() >= 2 and not name.endswith("A_log"))


def run_cases(args, tmp, rng, cases, base, perturb, check_forward, check_training):
    """Each case (label, ["key=value", ...]): a fresh checkpoint of `base` settings with the case's
    keys (init seed = the case's index, V 11), perturbed, a padded batch, then check_forward(args,
    ck, batch, tokens, targets, out) -> reference gradients and check_training(args, ck, batch,
    tokens, targets, grads, tmp); a case that cannot run is a failure named by its label."""
    for i, (label, sets) in enumerate(cases):
        current[0] = label
        settings = dict(base)
        settings.update(s.split("=", 1) for s in sets)
        print(f"== {label}: V {V}, batch {B}×{T}, " + ", ".join(f"{k} {v}" for k, v in settings.items()))
        ck, batch, out = (os.path.join(tmp, f"{i}-{n}.h5") for n in ("ck", "batch", "out"))
        try:
            run([args.srbench, "init-checkpoint", "--vocab", str(V), "--seed", str(i), "--out", ck] +
                [a for k, v in settings.items() for a in ("--set", f"{k}={v}")])
            perturb(ck, rng)
            tokens, targets = write_batch(batch, rng, V)
            grads = check_forward(args, ck, batch, tokens, targets, out)
            check_training(args, ck, batch, tokens, targets, grads, tmp)
        except (RuntimeError, ValueError) as e:
            failures.append(label)
            print(f"    FAIL {label}: {e}")


def parity_main(doc, arch, seed, width, check_inits, cases, base, perturb, check_forward, check_training):
    """A linear-rnn.md parity test's command line (--srbench, --parity-train): float64 PyTorch on one
    thread, the init check, then run_cases over `cases` with a generator seeded `seed`; the report's
    table (case labels `width` wide) and exit code."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--parity-train", required=True)
    args = ap.parse_args()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix=f"srbench-{arch}-parity-") as tmp:
        check_inits(args, tmp)
        run_cases(args, tmp, rng, cases, base, perturb, check_forward, check_training)
    return report(COLUMNS, width, LIMITS, f"all {arch} parity checks passed")


def check_inits(args, tmp):
    """linear-rnn.md's init check on fresh checkpoints large enough for its pooled tests (d 64,
    V 64, 2 layers), every case's keys, three seeds; then the checker must catch four wrong inits
    of the same checkpoints: out_proj without (or with a double) 1/√L, tok_emb drawn uniform with
    N(0, 0.02)'s spread, the dt biases drawn uniformly in [0.001, 0.1], A_log of S4D-lin (A = −½)."""
    wrong = {
        "out_proj x 1/√2": lambda p: {n: (v / math.sqrt(2) if n.endswith("out_proj.weight") else v)
                                      for n, v in p.items()},
        "tok_emb uniform": lambda p: {n: ((torch.rand_like(v) * 2 - 1) * 0.02 * math.sqrt(3) if n == "tok_emb" else v)
                                      for n, v in p.items()},
        "dt uniform": lambda p: {n: (torch.log(torch.expm1(0.001 + 0.099 * torch.rand_like(v)))
                                     if n.endswith("dt_proj.bias") else v) for n, v in p.items()},
        "A_log S4D-lin": lambda p: {n: (torch.full_like(v, math.log(0.5)) if n.endswith("A_log") else v)
                                    for n, v in p.items()},
    }
    check_fresh_inits(args.srbench, tmp, CASES, dict(arch="mamba", layers=2, d_model=64, max_len=32),
                      ("layers", "d_model"), {k: (lambda cfg: True, lambda cfg, p, f=f: f(p)) for k, f in wrong.items()})


def main():
    return parity_main(__doc__, "mamba", 20261204, 30, check_inits, CASES,
                       dict(arch="mamba", layers=L, d_model=D, max_len=32), perturb, check_forward, check_training)


if __name__ == "__main__":
    sys.exit(main())
