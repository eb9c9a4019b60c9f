#!/usr/bin/python3
"""srbench's model against reference.py, the independent float64 PyTorch implementation of
model.md: logits, loss and every gradient of `srbench forward`, then five AdamW steps of
parity_train against torch.optim.AdamW, for every position scheme × norm (and relu once).

    /usr/bin/python3 test_parity.py --srbench build/harness/srbench --parity-train build/tests/parity_train

Measure (model.md): max|ours − ref| / max|ref| per tensor. Limits: logits 1e-4, loss 1e-5, every
gradient 1e-3 (for a gradient zero in theory — attn.k.bias under softmax without rope, a key bias
shifts every score of a row equally — the denominator is 1e-6 × the largest gradient entry G of
the model: srbench keeps that gradient exactly 0), parameters after the AdamW steps 1e-4.
Prints the worst difference of every tensor; exits 1 on any failure.
Needs torch, h5py, numpy, yaml (Debian's /usr/bin/python3): it fails, never skips, without them.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

LOGITS_TOL, LOSS_TOL, GRAD_TOL, PARAM_TOL = 1e-4, 1e-5, 1e-3, 1e-4
SPEC_ZERO_FLOOR = 1e-6  # model.md: denominator floor, × the largest gradient entry of the model

V, D, L, MAX_LEN = 11, 16, 2, 16
CASES = [  # (position, norm, activation, heads)
    ("learned", "layer", "gelu", 2), ("learned", "rms", "gelu", 4),
    ("sinusoidal", "layer", "gelu", 4), ("sinusoidal", "rms", "relu", 2),
    ("rope", "layer", "gelu", 2), ("rope", "rms", "gelu", 4),
    ("alibi", "layer", "relu", 4), ("alibi", "rms", "gelu", 2),
    ("none", "layer", "gelu", 4), ("none", "rms", "gelu", 2),
]
TRAIN = dict(steps_run=5, warmup=2, steps=10, lr=1e-2, weight_decay=0.01, betas=(0.9, 0.98), eps=1e-9)

failures = []
summary = {}  # case label -> {column: worst measure}
current = [""]  # label of the case being checked
COLUMNS = ["logits", "loss", "grads", "zero grads", "step losses", "params", "zero params"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout


def check(label, err, tol, note="", column=None):
    if column:
        row = summary.setdefault(current[0], {})
        row[column] = max(row.get(column, 0.0), err)
    ok = err <= tol
    print(f"    {'ok  ' if ok else 'FAIL'} {label:<34} {err:10.3e}  (limit {tol:.0e}){note}")
    if not ok:
        failures.append(f"{current[0]}: {label}")
    return ok


def check_init(path):
    """init-checkpoint wrote model.md's init: biases 0, norm weights 1, matrices and embeddings
    N(0, 0.02), attn.o and mlp.proj weights N(0, 0.02/√(2·layers)) (std within 25%)."""
    cfg, vocab, params = reference.load_checkpoint(path)
    ok = vocab == V and cfg["vocab"] == V
    pools = {0.02: [], 0.02 / math.sqrt(2 * cfg["layers"]): []}
    for name, p in params.items():
        is_norm = name.startswith("ln_f.") or ".ln1." in name or ".ln2." in name
        if name.endswith(".bias"):
            ok &= bool((p == 0).all())
        elif is_norm:
            ok &= bool((p == 1).all())
        else:
            residual = name.endswith("attn.o.weight") or name.endswith("mlp.proj.weight")
            pools[0.02 / math.sqrt(2 * cfg["layers"]) if residual else 0.02].append(p.flatten())
    stds = {want: float(torch.cat(v).std()) for want, v in pools.items()}
    ok &= all(abs(got / want - 1) < 0.25 for want, got in stds.items())
    check("init (vocab, zeros, ones, stds)", 0.0 if ok else 1.0, 0.0,
          "  stds " + ", ".join(f"{got:.4f} (want {want:.4f})" for want, got in stds.items()))


def randomise(path, rng):
    """Every parameter random, so that biases and norm weights are really tested: matrices and
    biases N(0, 0.3), norm weights 1 + N(0, 0.1), embeddings N(0, 0.05) — small, so that the first
    norm's input has a variance (~3e-3) at which its eps 1e-5 visibly matters."""
    cfg, vocab, params = reference.load_checkpoint(path)
    new = {}
    for name, p in params.items():
        is_norm = name.startswith("ln_f.") or ".ln1." in name or ".ln2." in name
        if is_norm and name.endswith(".weight"):
            new[name] = torch.tensor(1.0 + 0.1 * rng.standard_normal(tuple(p.shape)))
        elif name in ("tok_emb", "pos_emb"):
            new[name] = torch.tensor(0.05 * rng.standard_normal(tuple(p.shape)))
        else:
            new[name] = torch.tensor(0.3 * rng.standard_normal(tuple(p.shape)))
    reference.save_params(path, new)


def write_batch(path, rng, B, T):
    tokens = rng.integers(0, V, size=(B, T)).astype(np.int32)
    targets = rng.integers(0, V, size=(B, T)).astype(np.int32)
    targets[rng.random((B, T)) < 0.25] = -1  # padding scattered …
    targets[0, :3] = -1                       # … and a padded prefix
    targets[-1, -2:] = -1                     # … and a padded tail
    with h5py.File(path, "w") as f:
        f["tokens"] = tokens
        f["targets"] = targets
    return torch.tensor(tokens, dtype=torch.int64), torch.tensor(targets, dtype=torch.int64)


def rel(ours, ref, floor=0.0):
    return reference.relative_error(ours, ref, floor)


def check_forward(args, ck, batch, tokens, targets, out):
    run([args.srbench, "forward", "--checkpoint", ck, "--batch", batch, "--out", out])
    cfg, _, params = reference.load_checkpoint(ck)
    logits, loss, grads = reference.forward_backward(cfg, params, tokens, targets)
    gmax = max(float(g.abs().max()) for g in grads.values())
    with h5py.File(out, "r") as f:
        ours_logits = f["logits"][...]
        ours_loss = float(f["loss"][()])
        ours_grads = {n: f["grads"][n][...] for n in f["grads"]}
        assert f["logits"].dtype == np.float32 and f["loss"].shape == ()
    check("logits", rel(ours_logits, logits), LOGITS_TOL, column="logits")
    check("loss", abs(ours_loss - float(loss)) / abs(float(loss)), LOSS_TOL,
          f"  ours {ours_loss:.7f} ref {float(loss):.7f}", column="loss")
    if set(ours_grads) != set(grads):
        failures.append(f"{current[0]}: gradient names")
        print(f"    FAIL gradient names: ours only {sorted(set(ours_grads) - set(grads))}, "
              f"ref only {sorted(set(grads) - set(ours_grads))}")
    for name in sorted(grads):
        if name not in ours_grads:
            continue
        if tuple(ours_grads[name].shape) != tuple(grads[name].shape):
            failures.append(f"{current[0]}: grad {name} shape")
            print(f"    FAIL grad {name}: shape {ours_grads[name].shape} vs {tuple(grads[name].shape)}")
            continue
        zero = float(grads[name].abs().max()) < 1e-12 * gmax  # zero in theory
        check(f"grad {name}", rel(ours_grads[name], grads[name], SPEC_ZERO_FLOOR * gmax), GRAD_TOL,
              "  (zero in theory: floor 1e-6·G)" if zero else "", column="zero grads" if zero else "grads")
    return gmax, grads


def lr_factor(s):
    """model.md's schedule as a LambdaLR factor: (s+1)/W during warm-up, then cosine to 0.1."""
    W, S = TRAIN["warmup"], TRAIN["steps"]
    if s < W:
        return (s + 1) / W
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * (s - W) / (S - W)))


def check_training(args, ck, batch, tokens, targets, ref_grads, gmax, workdir):
    # A clip well below the gradient norm, so that every step clips.
    norm0 = math.sqrt(sum(float((g * g).sum()) for g in ref_grads.values()))
    clip = 0.1 * norm0
    out = os.path.join(workdir, "trained.h5")
    text = run([args.parity_train, "--checkpoint", ck, "--batch", batch, "--out", out,
                "--steps-run", str(TRAIN["steps_run"]), "--steps", str(TRAIN["steps"]),
                "--warmup", str(TRAIN["warmup"]), "--schedule", "cosine", "--lr", str(TRAIN["lr"]),
                "--weight-decay", str(TRAIN["weight_decay"]), "--clip", repr(clip)])
    ours_steps = [dict(zip(line.split()[0::2], map(float, line.split()[1::2]))) for line in text.splitlines()]

    cfg, _, params = reference.load_checkpoint(ck)
    leaves = {n: p.clone().requires_grad_(True) for n, p in params.items()}
    decay = [p for p in leaves.values() if p.dim() >= 2]  # matrices and embeddings
    no_decay = [p for p in leaves.values() if p.dim() < 2]  # biases, norm weights
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": TRAIN["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=TRAIN["lr"], betas=TRAIN["betas"], eps=TRAIN["eps"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    for s in range(TRAIN["steps_run"]):
        opt.zero_grad()
        _, loss = reference.forward(cfg, leaves, tokens, targets)
        loss.backward()
        norm = float(torch.nn.utils.clip_grad_norm_(list(leaves.values()), clip))
        lr = opt.param_groups[0]["lr"]
        o = ours_steps[s]
        print(f"    step {s}: loss ours {o['loss']:.7f} ref {float(loss):.7f}; grad norm ours "
              f"{o['grad_norm']:.5f} ref {norm:.5f} (clip {clip:.5f}); lr ours {o['lr']:.6g} ref {lr:.6g}")
        check(f"step {s} loss", abs(o["loss"] - float(loss)) / abs(float(loss)), LOSS_TOL, column="step losses")
        check(f"step {s} grad norm", abs(o["grad_norm"] - norm) / norm, GRAD_TOL)
        check(f"step {s} lr", abs(o["lr"] - lr) / lr, 1e-12)
        if not norm > clip:
            failures.append(f"{current[0]}: step {s} did not clip")
            print(f"    FAIL step {s}: gradient norm {norm} is not above the clip {clip}")
        opt.step()
        sched.step()

    _, _, ours = reference.load_checkpoint(out)
    for name in sorted(leaves):
        ref = leaves[name].detach()
        zero = float(ref_grads[name].abs().max()) < 1e-12 * gmax  # zero in theory: must not move
        check(f"param {name}", rel(ours[name], ref), PARAM_TOL, column="zero params" if zero else "params")

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--parity-train", required=True)
    ap.add_argument("--only", help="run only the cases whose 'position/norm/activation' contains this")
    args = ap.parse_args()
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(20261130)
    with tempfile.TemporaryDirectory(prefix="srbench-parity-") as tmp:
        for i, (position, norm, act, heads) in enumerate(CASES):
            label = f"{position}/{norm}/{act}"
            if args.only and args.only not in label:
                continue
            current[0] = label
            B, T = (3, 12) if i % 2 == 0 else (2, MAX_LEN)  # T = max_len in half of the cases
            print(f"== {label}: V {V}, d {D}, heads {heads}, layers {L}, max_len {MAX_LEN}, batch {B}×{T}")
            ck, batch, out = (os.path.join(tmp, f"{i}-{n}.h5") for n in ("ck", "batch", "out"))
            run([args.srbench, "init-checkpoint", "--vocab", str(V), "--seed", str(i), "--out", ck,
                 "--set", f"d_model={D}", "--set", f"heads={heads}", "--set", f"layers={L}",
                 "--set", f"max_len={MAX_LEN}", "--set", f"position={position}", "--set", f"norm={norm}",
                 "--set", f"activation={act}"])
            check_init(ck)
            randomise(ck, rng)
            tokens, targets = write_batch(batch, rng, B, T)
            try:
                gmax, ref_grads = check_forward(args, ck, batch, tokens, targets, out)
                check_training(args, ck, batch, tokens, targets, ref_grads, gmax, tmp)
            except RuntimeError as e:
                failures.append(label)
                print(f"    FAIL {label}: {e}")
    print("\nworst measure per case (limits: logits 1e-4, loss 1e-5, grads 1e-3, zero grads 1e-3 with floor"
          " 1e-6·G, step losses 1e-5, params 1e-4, zero params 1e-4)")
    print(f"{'case':<22}" + "".join(f"{c:>12}" for c in COLUMNS))
    for label, row in summary.items():
        print(f"{label:<22}" + "".join(f"{row[c]:>12.2e}" if c in row else f"{'-':>12}" for c in COLUMNS))
    if failures:
        print(f"\nFAILED {len(failures)} check(s): {', '.join(failures[:20])}")
        return 1
    print("\nall parity checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
