#!/usr/bin/python3
"""srbench's DeltaNet language model (linear-rnn.md) against a float64 PyTorch implementation of
the spec (deltanet_reference.py): `srbench forward`'s logits, loss and every gradient, then five
AdamW steps of parity_train against torch.optim.AdamW, for the keys of the table (beta_scale 1 and
2, gated, output_gate, d_conv 0 and 4, mlp_hidden 0, rms and layer norm, with and without ln_f,
init grazzi), one and two layers; weights perturbed to O(1) as the spec's "Agreement" says, on
padded batches. Tolerances model.md's (parity_report.py). Needs torch, h5py, numpy, yaml: it
fails, never skips.

    /usr/bin/python3 test_deltanet_parity.py --srbench build/harness/srbench --parity-train build/tests/parity_train
"""
import math
import os
import shutil
import sys

import numpy as np
import torch

import deltanet_reference
from parity_report import compare_training
from init_check import check_fresh_inits
from reference import load_checkpoint, save_params
from test_mamba_parity import check_forward, parity_main

V, D = 11, 16
CASES = [
    ("deltanet", ["layers=2"]),
    ("deltanet/1 layer, beta_scale 2", ["layers=1", "beta_scale=2", "mlp_hidden=24"]),
    ("deltanet/gated, output gate, layer norm", ["layers=2", "gated=true", "output_gate=true", "norm=layer"]),
    ("deltanet/no conv, no MLP, no ln_f, grazzi", ["layers=2", "d_conv=0", "mlp_hidden=0", "final_norm=false",
                                                   "init=grazzi", "beta_scale=2"]),
    ("deltanet/4 heads, d_conv 2", ["layers=1", "heads=4", "d_conv=2", "gated=true"]),
    ("deltanet/3 layers, d 32, grazzi, gated", ["layers=3", "d_model=32", "init=grazzi", "gated=true",
                                                "output_gate=true", "mlp_hidden=48"]),
]


def perturb(path, rng):
    """linear-rnn.md's perturbation: matrices N(0, 1)·gain/√fan_in (conv 0.8, b_proj 1.5, v_proj 2.5,
    head 1.5, else 1), tok_emb N(0, 1), norm weights 1 + 0.3·N(0, 1), biases 0.3·N(0, 1), A_log
    ln U(0.3, 1.5), dt_bias U(−1.5, 0.5)."""
    _, _, params = load_checkpoint(path)
    new = {}
    for name, p in params.items():
        shape = tuple(p.shape)
        if name == "tok_emb":
            v = rng.standard_normal(shape)
        elif name.endswith("A_log"):
            v = np.log(rng.uniform(0.3, 1.5, shape))
        elif name.endswith("dt_bias"):
            v = rng.uniform(-1.5, 0.5, shape)
        elif any(part in ("ln1", "ln2", "ln_f", "o_norm") for part in name.split(".")) and name.endswith("weight"):
            v = 1.0 + 0.3 * rng.standard_normal(shape)
        elif p.dim() == 2:
            gain = 0.8 if "conv1d" in name else 1.5 if ("b_proj" in name or name == "head.weight") else \
                2.5 if "v_proj" in name else 1.0
            v = gain * rng.standard_normal(shape) / math.sqrt(shape[1])
        else:
            v = 0.3 * rng.standard_normal(shape)
        new[name] = torch.tensor(v)
    save_params(path, new)


def check_training(args, ck, batch, tokens, targets, ref_grads, workdir, reference=deltanet_reference):
    """Five AdamW steps (weight decay on every matrix but A_log). DeltaNet's trajectories can be
    sensitive at float32's rounding level (a SwiGLU MLP of 256 hidden units at d 16 has gradient
    elements near 0, whose first AdamW update takes its sign from rounding; heads near o_norm's
    ε): the reference's own sensitivity to 1e-7·G gradient noise is measured and, where it exceeds
    model.md's limit, ours is held to it (parity_report.compare_training). Then `srbench forward`
    at the reference's trained parameters, held to model.md's limits: the model where training has
    moved it, whatever the trajectory's conditioning."""
    cfg, _, params = load_checkpoint(ck)
    leaves, loss_fn = reference.make_loss(cfg, params, tokens, targets)
    compare_training(args, ck, batch, leaves, loss_fn, ref_grads, workdir,
                     lambda name, p: p.dim() >= 2 and not name.endswith("A_log"),
                     lambda: reference.make_loss(cfg, params, tokens, targets))
    trained = os.path.join(workdir, "trained-ref.h5")
    shutil.copyfile(ck, trained)
    save_params(trained, {n: p.detach().clone() for n, p in leaves.items()})
    print("    at the reference's parameters after the steps:")
    check_forward(args, trained, batch, tokens, targets, os.path.join(workdir, "trained-out.h5"), reference)


def check_inits(args, tmp):
    """linear-rnn.md's init check on fresh checkpoints large enough for its pooled tests (d 64,
    V 64), every case's keys, three seeds; then the checker must catch the wrong inits of the same
    checkpoints, each where it differs from the right one: o_proj rescaled by 1/√(2L), q_proj with
    nn.Linear's default U(±1/√d) under init: default, and under init: grazzi the mixer's xavier with gain 1, the
    convs N(0, 0.02), down_proj without its 1/√(2L)."""
    def scaled(suffix, f):
        return lambda cfg, p: {n: (f(cfg, v) if n.endswith(suffix) else v) for n, v in p.items()}
    every = lambda cfg: True
    grazzi = lambda cfg: cfg["init"] == "grazzi"
    wrong = {
        "o_proj x 1/sqrt(2L)": (every, scaled("o_proj.weight", lambda c, v: v / math.sqrt(2 * c["layers"]))),
        "nn.Linear default on q_proj": (lambda c: not grazzi(c),
                                        scaled("q_proj.weight", lambda c, v: (torch.rand_like(v) * 2 - 1) /
                                               math.sqrt(c["d_model"]))),
        "xavier gain 1": (grazzi, lambda c, p: {n: (v * 2 ** 2.5 if ".mixer." in n and n.endswith("_proj.weight") else v)
                                                for n, v in p.items()}),
        "convs N(0, 0.02)": (lambda c: grazzi(c) and c["d_conv"] > 0,
                             scaled("conv1d.weight", lambda c, v: 0.02 * torch.randn_like(v))),
        "down_proj unscaled": (lambda c: grazzi(c) and c["mlp_hidden"] > 0,
                               scaled("down_proj.weight", lambda c, v: v * math.sqrt(2 * c["layers"]))),
    }
    check_fresh_inits(args.srbench, tmp, CASES, dict(arch="deltanet", layers=2, d_model=64, heads=2, max_len=32),
                      ("d_model", "mlp_hidden"), wrong)


def main():
    return parity_main(__doc__, "deltanet", 20261205, 42, check_inits, CASES, dict(arch="deltanet", d_model=D, heads=2, max_len=32), perturb,
                       lambda *a: check_forward(*a, deltanet_reference), lambda *a: check_training(*a, deltanet_reference))


if __name__ == "__main__":
    sys.exit(main())
