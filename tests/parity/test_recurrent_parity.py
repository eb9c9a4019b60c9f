#!/usr/bin/python3
"""srbench's recurrent models (recurrent.md) against PyTorch: `srbench forward`'s logits, loss and
every gradient, then five AdamW steps of parity_train against torch.optim.AdamW.

    /usr/bin/python3 test_recurrent_parity.py --srbench build/harness/srbench --parity-train build/tests/parity_train

References (recurrent_reference.py): rnn, lstm, gru the real torch.nn.RNN / LSTM / GRU loaded by the
name map; stack_rnn, tape_rnn an independent implementation of recurrent.md. Each case: weights
perturbed to O(1) so that the pre-activations are O(1) (checked: their spread is neither tiny nor
saturating), a batch with right padding (random tokens after each row's end, targets −1) and an
unscored position inside a row; stack_rnn with 2·stack_size < T; tape_rnn with per-row
input_lengths, some beyond tape_size and one a multiple of it, T > tape_size, and once without
input_lengths (L = T). One more case reads a trained lstm run's file saved with save_checkpoint
(`forward --checkpoint RUN.h5`) with the same checks, and a run file without a checkpoint must be
refused (exit 2, naming it), as must `--attention` for the lstm, which has none. Init:
recurrent.md's distributions (PyTorch's U(−1/√d, 1/√d) for rnn, lstm,
gru; Haiku's truncated normal for stack_rnn, tape_rnn; tok_emb and head N(0, 0.02)).

Measure (model.md): max|ours − ref| / max|ref| per tensor. Limits: logits 1e-4, loss 1e-5
(relative), every gradient 1e-3 (for a gradient zero in theory the denominator is 1e-6 × the
largest gradient entry of the model), parameters after the AdamW steps 1e-4.
Prints the worst difference of every tensor and a table of the worst per case; exits 1 on any
failure. Needs torch, h5py, numpy, yaml (Debian's /usr/bin/python3): it fails, never skips.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch

import recurrent_reference as ref
from reference import load_checkpoint, save_params
# the tolerances, the check table and the forward and training comparisons of the parity tests
from parity_report import (LIMITS, check, compare_forward, compare_training, current, failures, report, run,
                           sweep_run_files)

V, D, L, B, T = 11, 16, 2, 5, 13
# (label, --set settings, input_lengths or None)
CASES = [
    ("rnn/tanh", ["arch=rnn"], None),
    ("rnn/relu", ["arch=rnn", "nonlinearity=relu"], None),
    ("lstm", ["arch=lstm"], None),
    ("gru", ["arch=gru"], None),
    ("lstm/1 layer", ["arch=lstm", "layers=1", "d_model=24"], None),
    ("stack_rnn", ["arch=stack_rnn", "stack_size=4", "stack_cell_size=3"], None),  # 2·4 < T
    ("stack_rnn/1 layer", ["arch=stack_rnn", "layers=1", "stack_size=2", "stack_cell_size=5"], None),
    ("tape_rnn", ["arch=tape_rnn", "tape_size=5", "tape_cell_size=3", "tape_mlp=7"], [13, 7, 3, 10, 1]),
    ("tape_rnn/no input_lengths", ["arch=tape_rnn", "tape_size=4", "tape_cell_size=2", "tape_mlp=6"], None),
    ("tape_rnn/1 layer", ["arch=tape_rnn", "layers=1", "tape_size=6", "tape_cell_size=4", "tape_mlp=5"],
     [8, 13, 6, 2, 12]),
    # a vocabulary of at least B·T: layer 0 takes the embedding as a dense input
    ("gru/V 70", ["arch=gru", "vocab=70"], None),
    ("stack_rnn/V 70", ["arch=stack_rnn", "stack_size=3", "stack_cell_size=2", "vocab=70"], None),
]
COLUMNS = ["logits", "loss", "grads", "zero grads", "step losses", "params"]


def check_init(cfg, params):
    """recurrent.md's init: tok_emb, head.weight N(0, 0.02), head.bias 0; rnn/lstm/gru every other
    tensor U(−k, k), k = 1/√d (bounded by k, std k/√3 within 25%); stack_rnn/tape_rnn every other
    weight z/√fan_in with z ~ N(0,1) truncated to [−2, 2] (|w|·√fan_in <= 2, std 0.8796 within 25%)
    and every other bias 0."""
    ok, notes = True, []
    ends = [params["tok_emb"].flatten(), params["head.weight"].flatten()]
    std = float(torch.cat(ends).std())
    ok &= abs(std / 0.02 - 1) < 0.25 and bool((params["head.bias"] == 0).all())
    notes.append(f"tok_emb/head std {std:.4f}")
    inner = {n: p for n, p in params.items() if n.startswith("rnn.")}
    if cfg["arch"] in ref.GATED:
        k = 1 / math.sqrt(cfg["d_model"])
        pooled = torch.cat([p.flatten() for p in inner.values()])
        ok &= float(pooled.abs().max()) <= k and abs(float(pooled.std()) / (k / math.sqrt(3)) - 1) < 0.25
        notes.append(f"U(-k,k) std {float(pooled.std()):.4f} (want {k / math.sqrt(3):.4f})")
    else:
        scaled = []
        for n, p in inner.items():
            if p.dim() == 2:
                scaled.append(p.flatten() * math.sqrt(p.shape[1]))
            else:
                ok &= bool((p == 0).all())
        z = torch.cat(scaled)
        ok &= float(z.abs().max()) <= 2.0 + 1e-5 and abs(float(z.std()) / 0.8796 - 1) < 0.25
        notes.append(f"truncated z std {float(z.std()):.4f} (want 0.8796), max |z| {float(z.abs().max()):.3f}")
    check("init distributions", 0.0 if ok else 1.0, 0.0, "  " + ", ".join(notes))


def perturb(path, rng):
    """Weights O(1): each matrix N(0, 1/fan_in), biases N(0, 0.3²), tok_emb N(0, 1), so that
    the pre-activations are O(1) (checked by pre_activation_spread)."""
    cfg, _, params = load_checkpoint(path)
    new = {}
    for name, p in params.items():
        if name == "tok_emb":
            new[name] = torch.tensor(rng.standard_normal(tuple(p.shape)))
        elif p.dim() == 2:
            new[name] = torch.tensor(1.0 / math.sqrt(p.shape[1]) * rng.standard_normal(tuple(p.shape)))
        else:
            new[name] = torch.tensor(0.3 * rng.standard_normal(tuple(p.shape)))
    save_params(path, new)


def pre_activation_spread(cfg, params, tokens, input_lengths):
    """The std and the fraction beyond ±4 of layer 0's pre-activations W_ih x + b_ih + W_hh h + b_hh
    over the batch (h from the reference; stack_rnn, tape_rnn: without the read's columns): O(1)
    means gates neither linear nor saturated."""
    x, d = params["tok_emb"][tokens], cfg["d_model"]
    with torch.no_grad():
        if cfg["arch"] in ref.GATED:
            layer0 = {n: t for n, t in params.items() if not n.startswith("rnn.") or n.startswith("rnn.0.")}
            h = ref.torch_modules(dict(cfg, layers=1), layer0)[1](x)[0]
        elif cfg["arch"] == "stack_rnn":
            h = ref.stack_layer(x, params, 0, cfg["stack_size"], cfg["stack_cell_size"])
        else:
            lengths = input_lengths if input_lengths is not None else torch.full((tokens.shape[0],), tokens.shape[1])
            h = ref.tape_layer(x, params, 0, cfg["tape_size"], cfg["tape_cell_size"], lengths)
    h_prev = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)
    pre = (x @ params["rnn.0.weight_ih"][:, :d].T + params["rnn.0.bias_ih"] + h_prev @ params["rnn.0.weight_hh"].T
           + params["rnn.0.bias_hh"])
    return float(pre.std()), float((pre.abs() > 4).double().mean())


def write_batch(path, rng, input_lengths, V):
    """Right padding: row b is `lengths[b]` long, its targets −1 after that and random tokens in the
    padding; one unscored position inside row 0."""
    lengths = np.array([T, T - 3, 6, T - 1, 9], dtype=np.int32)[:B]
    tokens = rng.integers(0, V, size=(B, T)).astype(np.int32)
    targets = rng.integers(0, V, size=(B, T)).astype(np.int32)
    for b in range(B):
        targets[b, lengths[b]:] = -1
    targets[0, 4] = -1
    with h5py.File(path, "w") as f:
        f["tokens"] = tokens
        f["targets"] = targets
        f["lengths"] = lengths
        if input_lengths is not None:
            f["input_lengths"] = np.array(input_lengths, dtype=np.int32)
    il = torch.tensor(input_lengths) if input_lengths is not None else None
    return torch.tensor(tokens, dtype=torch.int64), torch.tensor(targets, dtype=torch.int64), il


def check_forward(args, ck, batch, tokens, targets, input_lengths, out):
    run([args.srbench, "forward", "--checkpoint", ck, "--batch", batch, "--out", out])
    cfg, _, params = load_checkpoint(ck)
    logits, loss, grads = ref.forward_backward(cfg, params, tokens, targets, input_lengths)
    compare_forward(out, logits, loss, grads)
    return grads


def check_training(args, ck, batch, tokens, targets, ref_grads, workdir):
    """Five AdamW steps (weight decay on every matrix and tok_emb, none on biases), every one
    clipping; parity_train's batch has no input lengths (tape_rnn: L = T for both)."""
    cfg, _, params = load_checkpoint(ck)
    leaves, loss_fn = ref.make_loss(cfg, params, tokens, targets, None)
    compare_training(args, ck, batch, leaves, loss_fn, ref_grads, workdir, lambda name, p: p.dim() >= 2)


RUN_SUITE = """name: rf
defaults:
  model: {{arch: lstm, layers: 1, d_model: {d}, max_len: 32}}
  train: {{steps: 60, batch: 8, eval_every: 30, lr: 0.003, length: [1, 8], save_checkpoint: {save}}}
  eval: {{lengths: [8], examples: 16, val_examples: 16}}
tasks:
  - task: flipflop
"""


def swept_run_file(args, folder, save):
    """The one run file of a short lstm flip-flop suite swept into `folder`."""
    (run_file,) = sweep_run_files(args.srbench, RUN_SUITE.format(d=D, save=save), folder)
    return run_file


def check_run_file(args, tmp, rng):
    """`srbench forward --checkpoint RUN.h5` on a trained run saved with save_checkpoint: the same
    checks as a checkpoint file's; a run file without a checkpoint is refused (exit 2, by name)."""
    run_file = swept_run_file(args, os.path.join(tmp, "saved"), "true")
    _, vocab, _ = load_checkpoint(run_file)
    batch, out = os.path.join(tmp, "rf-batch.h5"), os.path.join(tmp, "rf-out.h5")
    tokens, targets, _ = write_batch(batch, rng, None, vocab)
    check_forward(args, run_file, batch, tokens, targets, None, out)
    bare = swept_run_file(args, os.path.join(tmp, "bare"), "false")
    p = subprocess.run([args.srbench, "forward", "--checkpoint", bare, "--batch", batch, "--out", out + "2"],
                       capture_output=True, text=True)
    refused(p, "has no checkpoint", "a run file without a checkpoint")
    p = subprocess.run([args.srbench, "forward", "--checkpoint", run_file, "--batch", batch, "--out", out + "3",
                        "--attention"], capture_output=True, text=True)
    refused(p, "--attention", "--attention on an lstm (no attention)")


def refused(p, needle, what):
    """`what` must have exited 2 with `needle` in its message."""
    ok = p.returncode == 2 and needle in p.stderr
    print(f"    {'ok  ' if ok else 'FAIL'} {what}: exit {p.returncode}, {p.stderr.strip()}")
    if not ok:
        failures.append(f"{current[0]}: {what} is refused")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--parity-train", required=True)
    ap.add_argument("--only", help="run only the cases whose label contains this")
    args = ap.parse_args()
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(20261201)
    with tempfile.TemporaryDirectory(prefix="srbench-recurrent-parity-") as tmp:
        for i, (label, sets, input_lengths) in enumerate(CASES):
            if args.only and args.only not in label:
                continue
            current[0] = label
            settings = dict(layers=L, d_model=D, max_len=32)
            settings.update(s.split("=", 1) for s in sets)
            vocab = int(settings.pop("vocab", V))
            print(f"== {label}: V {vocab}, batch {B}×{T}, " + ", ".join(f"{k} {v}" for k, v in settings.items()) +
                  (f", input_lengths {input_lengths}" if input_lengths else ""))
            ck, batch, out = (os.path.join(tmp, f"{i}-{n}.h5") for n in ("ck", "batch", "out"))
            try:
                run([args.srbench, "init-checkpoint", "--vocab", str(vocab), "--seed", str(i), "--out", ck] +
                    [a for k, v in settings.items() for a in ("--set", f"{k}={v}")])
                cfg, _, params = load_checkpoint(ck)
                check_init(cfg, params)
                perturb(ck, rng)
                tokens, targets, il = write_batch(batch, rng, input_lengths, vocab)
                cfg, _, params = load_checkpoint(ck)
                spread, saturated = pre_activation_spread(cfg, params, tokens, il)
                check("pre-activations O(1): |std - 1.25| <= 0.75", abs(spread - 1.25), 0.75,
                      f"  std {spread:.3f}, beyond ±4: {saturated:.1%}")
                grads = check_forward(args, ck, batch, tokens, targets, il, out)
                if input_lengths is None:
                    check_training(args, ck, batch, tokens, targets, grads, tmp)
            except (RuntimeError, ValueError) as e:
                failures.append(label)
                print(f"    FAIL {label}: {e}")
        label = "lstm/run file"
        if not args.only or args.only in label:
            current[0] = label
            print(f"== {label}: a trained run saved with save_checkpoint, batch {B}×{T}")
            try:
                check_run_file(args, tmp, rng)
            except (RuntimeError, ValueError) as e:
                failures.append(label)
                print(f"    FAIL {label}: {e}")
    return report(COLUMNS, 30, LIMITS, "all recurrent parity checks passed")

if __name__ == "__main__":
    sys.exit(main())
