"""An independent PyTorch implementation of srbench's model (../../shared/spec/model.md).

It reads an srbench checkpoint (HDF5: attribute /model/config holds the YAML config, datasets
/model/params/<name>) and computes logits, loss and gradients in float64, so that srbench's own
float32 results can be judged against it. Nothing here imports srbench code.

Shapes: B batch, T positions, d d_model, H heads, dh = d/H, V vocabulary.
"""
import math

import h5py
import numpy as np
import torch
import yaml


def load_checkpoint(path):
    """Returns (config dict, vocab size, {name: float64 tensor}) of a checkpoint file (/model) or,
    as srbench's load_model_file reads it, a run file saved with save_checkpoint
    (/runs/<id>/checkpoint, one run)."""
    with h5py.File(path, "r") as f:
        if "model" in f:
            g = f["model"]
        else:
            (run_id,) = list(f["runs"])
            g = f[f"runs/{run_id}/checkpoint"]
        cfg = yaml.safe_load(g.attrs["config"])
        vocab = int(g.attrs["vocab"])
        params = {name: torch.tensor(np.asarray(ds[...], dtype=np.float64)) for name, ds in g["params"].items()}
    return cfg, vocab, params


def save_params(path, params):
    """Overwrites the parameter datasets of an existing checkpoint (float32)."""
    with h5py.File(path, "r+") as f:
        for name, value in params.items():
            f["model/params"][name][...] = value.detach().numpy().astype(np.float32)


def _norm(x, p, prefix, kind):
    if kind == "layer":
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-5) * p[prefix + ".weight"] + p[prefix + ".bias"]
    if kind == "rms":
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * p[prefix + ".weight"]
    raise ValueError(f"unknown norm {kind}")


def _linear(x, p, prefix):
    return x @ p[prefix + ".weight"].T + p[prefix + ".bias"]


def _rope(x, T, dh):
    """x [B,H,T,dh]: rotate pairs (2i, 2i+1) at position t by t·θ_i, θ_i = 10000^(−2i/dh)."""
    i = torch.arange(dh // 2, dtype=torch.float64)
    theta = 10000.0 ** (-2.0 * i / dh)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :]  # [T, dh/2]
    cos, sin = torch.cos(angle), torch.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def spline(x, theta, R, K, extrapolate):
    """The learnable spline φ of model.md, elementwise on x: keypoints x_k = −R + k·h,
    h = 2R/(K−1), values theta [K]. u = (x+R)/h, clamped to [0, K−1] under `constant`;
    k = clamp(⌊u⌋, 0, K−2); φ = θ_k + (u−k)(θ_{k+1} − θ_k). Autograd gives ∂φ/∂x = (θ_{k+1}−θ_k)/h
    (0 where clamp cut u: torch.clamp passes the gradient for min ≤ u ≤ max) and ∂φ/∂θ as stated."""
    h = 2.0 * R / (K - 1)
    u = (x + R) / h
    if extrapolate == "constant":
        u = torch.clamp(u, 0.0, K - 1.0)
    elif extrapolate != "linear":
        raise ValueError(f"unknown extrapolate {extrapolate}")
    k = torch.clamp(torch.floor(u), 0.0, K - 2.0).detach()
    t = u - k
    idx = k.to(torch.int64).reshape(-1)
    lo = torch.gather(theta, 0, idx).reshape(x.shape)
    hi = torch.gather(theta, 0, idx + 1).reshape(x.shape)
    return lo + t * (hi - lo)


def spline_settings(cfg, site):
    """(R, K, extrapolate, share) of cfg's `mlp_spline` or `attn_spline` (model.md's defaults)."""
    sc = cfg.get(site, {}) or {}
    return (float(sc.get("range", 8.0)), int(sc.get("keypoints", 64)), sc.get("extrapolate", "constant"),
            sc.get("share", "layer"))


def spline_param_name(cfg, site, layer):
    """Checkpoint name of layer `layer`'s spline values (model.md, "Checkpoint")."""
    share = spline_settings(cfg, site)[3]
    if site == "mlp_spline":
        return "spline.mlp.values" if share == "model" else f"blocks.{layer}.mlp.act.values"
    return "spline.attn.values" if share == "model" else f"blocks.{layer}.attn.kernel.values"


def spline_init(name, x):
    """A spline `init` function of model.md at the points x (float64 tensor)."""
    if name == "gelu":
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if name == "relu":
        return torch.relu(x)
    if name == "identity":
        return x.clone()
    if name == "exp":
        return torch.exp(x)
    if name == "elu1":
        return torch.where(x > 0, x + 1.0, torch.exp(torch.clamp(x, max=0.0)))
    if name == "zero":
        return torch.zeros_like(x)
    raise ValueError(f"unknown spline init {name}")


def sinusoidal_table(T, d):
    """PE[t, 2i] = sin(t·ω_i), PE[t, 2i+1] = cos(t·ω_i), ω_i = 10000^(−2i/d)."""
    pe = torch.zeros(T, d, dtype=torch.float64)
    t = torch.arange(T, dtype=torch.float64)[:, None]
    i = torch.arange((d + 1) // 2, dtype=torch.float64)[None, :]
    omega = 10000.0 ** (-2.0 * i / d)
    pe[:, 0::2] = torch.sin(t * omega)[:, : pe[:, 0::2].shape[1]]
    pe[:, 1::2] = torch.cos(t * omega)[:, : pe[:, 1::2].shape[1]]
    return pe


def key_mask(cfg, B, T, lengths=None):
    """Which keys each query reads, a bool tensor broadcasting to [B,H,T,T]: under `causal`
    (model.md) keys j ≤ i; under `causal: false` (chomsky.md §7.3) every key of the query's own
    example, j < lengths[b] (lengths int64 [B], or None: every example is T long)."""
    if cfg.get("causal", True):
        return torch.tril(torch.ones(T, T, dtype=torch.bool))
    if lengths is None:
        lengths = torch.full((B,), T, dtype=torch.int64)
    return (torch.arange(T)[None, :] < lengths[:, None])[:, None, None, :]


def alibi_bias(cfg, H, T):
    """ALiBi's term of the scores [H,T,T], slope m_h = 2^(−8(h+1)/H): causal −m_h·(i−j) (model.md);
    under `causal: false` symmetric, m_h·(−|i−j| + ½·[j < i]) (chomsky.md §7.3)."""
    slopes = torch.tensor([2.0 ** (-8.0 * (hh + 1) / H) for hh in range(H)], dtype=torch.float64)
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    if cfg.get("causal", True):
        term = -(i - j).to(torch.float64)
    else:
        term = -(i - j).abs().to(torch.float64) + 0.5 * (j < i).to(torch.float64)
    return slopes[:, None, None] * term[None]


def relative_scores(q, k, params, pre, d, H):
    """Transformer-XL's scores (chomsky.md §7.3, `relative`), before the 1/√dh scaling, [B,H,T,T]:
    (q_i + u_h)·k_j + (q_i + v_h)·(W_R R_{i−j})_h with r = i − j under both `causal` settings,
    R_r = [sin(r ω_0) … sin(r ω_{d/2−1}), cos(r ω_0) … cos(r ω_{d/2−1})], ω_k = 10000^(−2k/d);
    u, v [H,dh], W_R [d,d] (nn.Linear, no bias). q, k: [B,H,T,dh] (after LIMe mixing)."""
    T, dh = q.shape[2], d // H
    u = params[pre + ".attn.rel.u"][None, :, None, :]
    v = params[pre + ".attn.rel.v"][None, :, None, :]
    r = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).to(torch.float64)  # [T,T]: i − j
    omega = 10000.0 ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    R = torch.cat([torch.sin(r[..., None] * omega), torch.cos(r[..., None] * omega)], dim=-1)  # [T,T,d]
    pos = (R @ params[pre + ".attn.rel.proj.weight"].T).view(T, T, H, dh)  # p_{i−j}, head slices
    return (q + u) @ k.transpose(-1, -2) + torch.einsum("bhid,ijhd->bhij", q + v, pos)


def forward(cfg, params, tokens, targets, lengths=None, alphas=None):
    """tokens, targets: int64 [B,T] (target −1 = not scored); lengths: int64 [B], each example's
    length (used under `causal: false`; None: T). Returns (logits [B,T,V], loss). A list given as
    `alphas` receives each layer's attention weights α [B,H,T,T]."""
    B, T = tokens.shape
    d, H, L = cfg["d_model"], cfg["heads"], cfg["layers"]
    dh = d // H
    position = cfg.get("position", "learned")
    norm = cfg.get("norm", "layer")
    act = cfg.get("activation", "gelu")
    attention = cfg.get("attention", "softmax")
    h = params["tok_emb"][tokens]
    if position == "learned":
        h = h + params["pos_emb"][:T]
    elif position == "sinusoidal":
        h = h + sinusoidal_table(T, d)
    mask = key_mask(cfg, B, T, lengths)
    lime = cfg.get("lime", "none")
    if lime not in ("none", "static"):
        raise ValueError(f"lime {lime} is not in this reference")
    raw_k, raw_v = [], []  # LIMe: every layer's raw keys and values [B,H,T,dh], before RoPE
    for l in range(L):
        pre = f"blocks.{l}"
        a = _norm(h, params, pre + ".ln1", norm)
        q, k, v = (_linear(a, params, f"{pre}.attn.{n}").view(B, T, H, dh).transpose(1, 2) for n in "qkv")
        if lime == "static":
            # k_{l,i} = Σ_{m≤l} Σ_j W_l[i, m·H + j] k̂_{m,j}, the same W_l for the values; layer 0 as is
            raw_k.append(k)
            raw_v.append(v)
            if l >= 1:
                W = params[pre + ".attn.router"]  # [H, (l+1)·H]
                k = torch.einsum("ic,bctd->bitd", W, torch.cat(raw_k, dim=1))
                v = torch.einsum("ic,bctd->bitd", W, torch.cat(raw_v, dim=1))
        if position == "rope":
            q, k = _rope(q, T, dh), _rope(k, T, dh)
        if attention == "spline-kernel":
            if position in ("alibi", "relative"):
                raise ValueError(f"position {position} is not defined for spline-kernel attention")
            # K_ij = φ(q_i)·φ(k_j) per head (after RoPE, no 1/√dh); α = K / (Σ_{j'≤i}|K_ij'| + 1e-6)
            R, K, ex, _ = spline_settings(cfg, "attn_spline")
            theta = params[spline_param_name(cfg, "attn_spline", l)]
            kern = spline(q, theta, R, K, ex) @ spline(k, theta, R, K, ex).transpose(-1, -2)
            kern = torch.where(mask, kern, torch.zeros_like(kern))
            alpha = kern / (kern.abs().sum(-1, keepdim=True) + 1e-6)
        else:
            if position == "relative":
                s = relative_scores(q, k, params, pre, d, H) / math.sqrt(dh)
            else:
                s = q @ k.transpose(-1, -2) / math.sqrt(dh)  # [B,H,T,T]
            if position == "alibi":
                s = s + alibi_bias(cfg, H, T)
            if attention == "softmax":
                s = s.masked_fill(~mask, float("-inf"))
                alpha = torch.softmax(s, dim=-1)
            elif attention == "spline-score":
                # α_ij = φ(s_ij) / (Σ_{j'≤i}|φ(s_ij')| + 1e-6)
                R, K, ex, _ = spline_settings(cfg, "attn_spline")
                phi = spline(s, params[spline_param_name(cfg, "attn_spline", l)], R, K, ex)
                phi = torch.where(mask, phi, torch.zeros_like(phi))
                alpha = phi / (phi.abs().sum(-1, keepdim=True) + 1e-6)
            else:
                raise ValueError(f"attention {attention} is not in this reference")
        if alphas is not None:
            alphas.append(alpha.detach())
        y = (alpha @ v).transpose(1, 2).reshape(B, T, d)
        h = h + _linear(y, params, pre + ".attn.o")
        u = _norm(h, params, pre + ".ln2", norm)
        z = _linear(u, params, pre + ".mlp.fc")
        if act == "gelu":
            z = 0.5 * z * (1.0 + torch.erf(z / math.sqrt(2.0)))
        elif act == "relu":
            z = torch.relu(z)
        elif act == "spline":
            R, K, ex, _ = spline_settings(cfg, "mlp_spline")
            z = spline(z, params[spline_param_name(cfg, "mlp_spline", l)], R, K, ex)
        else:
            raise ValueError(f"activation {act} is not in this reference")
        h = h + _linear(z, params, pre + ".mlp.proj")
    logits = _linear(_norm(h, params, "ln_f", norm), params, "head")
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(B * T, -1), targets.reshape(B * T), ignore_index=-1, reduction="mean")
    return logits, loss


def forward_backward(cfg, params, tokens, targets, lengths=None):
    """Returns (logits, loss, {name: gradient}) in float64."""
    leaves = {n: p.clone().requires_grad_(True) for n, p in params.items()}
    logits, loss = forward(cfg, leaves, tokens, targets, lengths)
    loss.backward()
    return logits.detach(), loss.detach(), {n: p.grad.detach() for n, p in leaves.items()}


def relative_error(ours, ref, floor=0.0):
    """max|ours − ref| / max(max|ref|, floor): model.md's measure of agreement."""
    ours = torch.as_tensor(np.asarray(ours, dtype=np.float64))
    denom = max(float(ref.abs().max()), floor)
    if denom == 0.0:
        return float((ours - ref).abs().max())
    return float((ours - ref).abs().max()) / denom
