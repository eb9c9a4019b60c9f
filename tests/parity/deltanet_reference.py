"""The reference of srbench's DeltaNet language model (linear-rnn.md, "Forward" and "DeltaNet"), in
float64 PyTorch, written from the spec: pre-norm blocks (RMSNorm or LayerNorm, ε 1e-6), the mixer
(q/k/v projections, causal depthwise convs by PyTorch's conv1d, SiLU, l2 with ε 1e-6 inside the
root, β = beta_scale·σ(b_proj u), the gate α = exp(−exp(A_log)·softplus(a_proj u + dt_bias)), the
delta rule as a loop over time with the full K×K state, o_norm, the output gate, o_proj), the
SwiGLU MLP, ln_f and an untied head with bias; autograd for the gradients. Nothing here imports
srbench code.

Every function takes the checkpoint's config (dict) and parameters ({name: float64 tensor}).
"""
import torch
import torch.nn.functional as F

from lm_reference import loss_functions, mixer_mlp_logits

EPS = 1e-6  # every norm of deltanet (F's norm_eps), l2's too


def short_conv(x, w):
    """x [B, T, d], w [d, κ]: PyTorch's Conv1d(d, d, κ, groups=d, padding=κ−1), its first T outputs."""
    T = x.shape[1]
    return F.conv1d(x.transpose(1, 2), w.unsqueeze(1), padding=w.shape[1] - 1, groups=w.shape[0])[..., :T].transpose(1, 2)


def mixer(cfg, p, m, u):
    B, T, d = u.shape
    H = cfg["heads"]
    K = d // H
    qkv = []
    for x in ("q", "k", "v"):
        y = u @ p[m + f"{x}_proj.weight"].T
        if cfg["d_conv"] > 0:
            y = short_conv(y, p[m + f"{x}_conv1d.weight"])
        qkv.append(F.silu(y).reshape(B, T, H, K))
    q, k, v = qkv
    q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + EPS)
    k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + EPS)
    beta = cfg["beta_scale"] * torch.sigmoid(u @ p[m + "b_proj.weight"].T)  # [B, T, H]
    if cfg["gated"]:
        z = u @ p[m + "a_proj.weight"].T + p[m + "dt_bias"]
        alpha = torch.exp(-torch.exp(p[m + "A_log"]) * F.softplus(z))
    else:
        alpha = torch.ones_like(beta)
    S = u.new_zeros(B, H, K, K)  # rows: value channels, columns: key channels
    eye = torch.eye(K, dtype=u.dtype)
    outs = []
    for t in range(T):
        kt, vt, qt = k[:, t], v[:, t], q[:, t]
        bt, at = beta[:, t, :, None, None], alpha[:, t, :, None, None]
        S = at * S @ (eye - bt * kt[..., :, None] * kt[..., None, :]) + bt * vt[..., :, None] * kt[..., None, :]
        outs.append((S @ qt[..., :, None])[..., 0] / K ** 0.5)
    o = torch.stack(outs, dim=1)  # [B, T, H, K]
    o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + EPS) * p[m + "o_norm.weight"]
    o = o.reshape(B, T, d)
    if cfg["output_gate"]:
        o = o * F.silu(u @ p[m + "g_proj.weight"].T)
    return o @ p[m + "o_proj.weight"].T


def logits(cfg, p, tokens):
    """logits [B, T, V] of tokens [B, T]."""
    return mixer_mlp_logits(cfg, p, tokens, mixer, EPS)


make_loss, forward_backward = loss_functions(logits)
