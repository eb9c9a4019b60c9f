#!/usr/bin/python3
"""The Mamba-1 mixer (model/mamba_mixer.hpp, through tests/parity/mamba_mixer_probe) against
PyTorch: state-spaces/mamba's `mamba_simple.py` slow path and `selective_scan_ref`
(linear-rnn.md, "Mamba") written with PyTorch's own conv1d (nn.Conv1d's), F.softplus, F.silu and autograd,
in float64: outputs and every gradient (the ten weights and the input), with positive and signed
eigenvalues, several scan chunks, and d_conv 1 (Grazzi et al.'s Mamba) as well as 4.

    /usr/bin/python3 tests/parity/test_mamba_mixer_torch.py --probe build/tests/mamba_mixer_probe
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

NAMES = ["in_proj", "conv_w", "conv_b", "x_proj", "dt_w", "dt_b", "A_log", "D", "out_proj"]


def torch_mixer(u, p, B, T, E, N, R, K, signed):
    """mamba_simple.Mamba.forward's slow path with selective_scan_ref, u (B, T, d)."""
    xz = (u.reshape(B * T, -1) @ p["in_proj"].t()).reshape(B, T, 2 * E).transpose(1, 2)  # b (2E) l
    x, z = xz.chunk(2, dim=1)
    # nn.Conv1d(E, E, K, groups=E, padding=K - 1)'s forward, on p's tensors so that their gradients are p's
    x = F.silu(F.conv1d(x, p["conv_w"].reshape(E, 1, K), p["conv_b"], padding=K - 1, groups=E)[..., :T])
    x_dbl = x.transpose(1, 2).reshape(B * T, E) @ p["x_proj"].t()
    dt, Bm, Cm = torch.split(x_dbl, [R, N, N], dim=-1)
    dt = (p["dt_w"] @ dt.t()).reshape(E, B, T).permute(1, 0, 2)  # b d l
    Bm = Bm.reshape(B, T, N).transpose(1, 2)
    Cm = Cm.reshape(B, T, N).transpose(1, 2)
    A = -torch.exp(p["A_log"])
    delta = F.softplus(dt + p["dt_b"][..., None])
    deltaA = torch.exp(torch.einsum("bdl,dn->bdln", delta, A))
    if signed:
        deltaA = 2 * deltaA - 1
    deltaB_u = torch.einsum("bdl,bnl,bdl->bdln", delta, Bm, x)
    s = torch.zeros(B, E, N, dtype=torch.float64)
    ys = []
    for i in range(T):
        s = deltaA[:, :, i] * s + deltaB_u[:, :, i]
        ys.append(torch.einsum("bdn,bn->bd", s, Cm[:, :, i]))
    y = torch.stack(ys, dim=2)
    out = (y + x * p["D"][:, None]) * F.silu(z)
    return out.transpose(1, 2).reshape(B * T, E) @ p["out_proj"].t()


def case(probe, B, T, d, E, N, R, K, signed, seed):
    rng = np.random.default_rng(seed)
    shapes = {"in_proj": (2 * E, d), "conv_w": (E, K), "conv_b": (E,), "x_proj": (R + 2 * N, E), "dt_w": (E, R),
              "dt_b": (E,), "A_log": (E, N), "D": (E,), "out_proj": (d, E)}
    arrays = {k: rng.uniform(-0.6, 0.6, s) for k, s in shapes.items()}
    arrays["dt_b"] = rng.uniform(-3.0, 1.0, E)
    arrays["A_log"] = rng.uniform(-1.0, 1.5, (E, N))
    u = rng.standard_normal((B * T, d))
    dout = rng.standard_normal((B * T, d))
    with tempfile.TemporaryDirectory() as tmp:
        fin, fout = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        with open(fin, "wb") as f:
            f.write(np.array([B, T, d, E, N, R, K, int(signed)], dtype=np.int32).tobytes())
            for a in [u] + [arrays[k] for k in NAMES] + [dout]:
                f.write(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        subprocess.run([probe, fin, fout], check=True)
        got = np.fromfile(fout, dtype=np.float64)
    p = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
    ut = torch.tensor(u, requires_grad=True)
    out = torch_mixer(ut.reshape(B, T, d), p, B, T, E, N, R, K, signed)
    out.backward(torch.tensor(dout))
    want = [out.detach().numpy()] + [p[k].grad.numpy() for k in NAMES] + [ut.grad.numpy()]
    names = ["out"] + ["d" + k for k in NAMES] + ["du"]
    ok, at = True, 0
    for name, w in zip(names, want):
        g = got[at:at + w.size].reshape(w.shape)
        at += w.size
        scale = max(np.abs(w).max(), 1e-3)
        err = np.abs(g - w).max() / scale
        good = err <= 1e-10 and np.abs(w).max() > 1e-6
        ok &= good
        print(f"  {name:<10} max |srbench - torch| / max |torch| = {err:.2e}  {'ok' if good else 'FAIL'}")
    if at != got.size:
        print(f"  the probe wrote {got.size} values, expected {at}: FAIL")
        ok = False
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--probe", required=True)
    a = ap.parse_args()
    torch.set_num_threads(1)
    ok = True
    for B, T, d, E, N, R, K, signed, seed in [(2, 37, 5, 6, 3, 2, 4, False, 1), (2, 37, 5, 6, 3, 2, 4, True, 2),
                                              (3, 20, 4, 8, 4, 1, 1, True, 3), (1, 70, 6, 12, 16, 1, 4, False, 4)]:
        print(f"B {B}, T {T}, d {d}, E {E}, N {N}, R {R}, d_conv {K}, {'signed' if signed else 'positive'}:")
        ok &= case(a.probe, B, T, d, E, N, R, K, signed, seed)
    print("mamba mixer = PyTorch:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
