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
from init_check import check_init
from reference import load_checkpoint, relative_error, save_params
from parity_report import (GRAD_TOL, LIMITS, LOGITS_TOL, LOSS_TOL, PARAM_TOL, SPEC_ZERO_FLOOR, TRAIN,
                           check, current, failures, lr_factor, report, run)

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


def check_forward(args, ck, batch, tokens, targets, out):
    run([args.srbench, "forward", "--checkpoint", ck, "--batch", batch, "--out", out])
    cfg, _, params = load_checkpoint(ck)
    logits, loss, grads = ref.forward_backward(cfg, params, tokens, targets)
    gmax = max(float(g.abs().max()) for g in grads.values())
    with h5py.File(out, "r") as f:
        ours_logits, ours_loss = f["logits"][...], float(f["loss"][()])
        ours_grads = {n: f["grads"][n][...] for n in f["grads"]}
    check("logits", relative_error(ours_logits, logits), LOGITS_TOL, column="logits")
    check("loss", abs(ours_loss - float(loss)) / abs(float(loss)), LOSS_TOL,
          f"  ours {ours_loss:.7f} ref {float(loss):.7f}", column="loss")
    if set(ours_grads) != set(grads):
        failures.append(f"{current[0]}: gradient names")
        print(f"    FAIL gradient names: ours only {sorted(set(ours_grads) - set(grads))}, "
              f"ref only {sorted(set(grads) - set(ours_grads))}")
    for name in sorted(set(grads) & set(ours_grads)):
        zero = float(grads[name].abs().max()) < 1e-12 * gmax
        check(f"grad {name}", relative_error(ours_grads[name], grads[name], SPEC_ZERO_FLOOR * gmax), GRAD_TOL,
              "  (zero in theory: floor 1e-6·G)" if zero else "", column="zero grads" if zero else "grads")
    return grads


def check_training(args, ck, batch, tokens, targets, ref_grads, workdir):
    """Five AdamW steps: weight decay on tok_emb, head.weight and every 2-D mixer weight, none on
    norms, biases, A_log, D (linear-rnn.md); every step clips."""
    norm0 = math.sqrt(sum(float((g * g).sum()) for g in ref_grads.values()))
    clip = 0.02 * norm0
    out = os.path.join(workdir, "trained.h5")
    text = run([args.parity_train, "--checkpoint", ck, "--batch", batch, "--out", out,
                "--steps-run", str(TRAIN["steps_run"]), "--steps", str(TRAIN["steps"]),
                "--warmup", str(TRAIN["warmup"]), "--schedule", "cosine", "--lr", str(TRAIN["lr"]),
                "--weight-decay", str(TRAIN["weight_decay"]), "--clip", repr(clip)])
    ours_steps = [dict(zip(line.split()[0::2], map(float, line.split()[1::2]))) for line in text.splitlines()]
    cfg, _, params = load_checkpoint(ck)
    leaves, loss_fn = ref.make_loss(cfg, params, tokens, targets)
    decay = [p for n, p in leaves.items() if p.dim() >= 2 and not n.endswith("A_log")]
    no_decay = [p for n, p in leaves.items() if p.dim() < 2 or n.endswith("A_log")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": TRAIN["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=TRAIN["lr"], betas=TRAIN["betas"], eps=TRAIN["eps"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    for s in range(TRAIN["steps_run"]):
        opt.zero_grad()
        _, loss = loss_fn()
        loss.backward()
        norm = float(torch.nn.utils.clip_grad_norm_(list(leaves.values()), clip))
        o = ours_steps[s]
        check(f"step {s} loss", abs(o["loss"] - float(loss)) / abs(float(loss)), LOSS_TOL, column="step losses")
        check(f"step {s} grad norm", abs(o["grad_norm"] - norm) / norm, GRAD_TOL)
        opt.step()
        sched.step()
    _, _, ours = load_checkpoint(out)
    for name in sorted(leaves):
        check(f"param {name}", relative_error(ours[name], leaves[name].detach()), PARAM_TOL, column="params")


def check_inits(args, tmp):
    """linear-rnn.md's init check on fresh checkpoints large enough for its pooled tests (d 64,
    V 64, 2 layers), every case's keys, three seeds; then the checker must catch four wrong inits
    of the same checkpoints: out_proj without (or with a double) 1/√L, tok_emb drawn uniform with
    N(0, 0.02)'s spread, the dt biases drawn uniformly in [0.001, 0.1], A_log of S4D-lin (A = −½)."""
    current[0] = "init"
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
    caught = {k: 0 for k in wrong}
    checked = 0
    for label, sets in CASES:
        for seed in range(3):
            settings = dict(arch="mamba", layers=2, d_model=64, max_len=32)
            settings.update(s.split("=", 1) for s in sets if not s.startswith(("layers", "d_model")))
            ck = os.path.join(tmp, "init.h5")
            run([args.srbench, "init-checkpoint", "--vocab", "64", "--seed", str(seed), "--out", ck] +
                [a for k, v in settings.items() for a in ("--set", f"{k}={v}")])
            cfg, _, params = load_checkpoint(ck)
            bad = check_init(cfg, params)
            check(f"init: {label}, seed {seed}", float(len(bad)), 0.0, ("  " + "; ".join(bad)) if bad else "")
            checked += 1
            torch.manual_seed(seed)
            for k, f in wrong.items():
                caught[k] += bool(check_init(cfg, f(params)))
    for k, n in caught.items():
        check(f"init check catches '{k}'", float(checked - n), 0.0, f"  in {n} of {checked} checkpoints")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--parity-train", required=True)
    args = ap.parse_args()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    rng = np.random.default_rng(20261204)
    with tempfile.TemporaryDirectory(prefix="srbench-mamba-parity-") as tmp:
        check_inits(args, tmp)
        for i, (label, sets) in enumerate(CASES):
            current[0] = label
            settings = dict(arch="mamba", layers=L, d_model=D, max_len=32)
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
    return report(COLUMNS, 30, LIMITS, "all mamba parity checks passed")


if __name__ == "__main__":
    sys.exit(main())
