"""The reference of srbench's GLA language model (linear-rnn.md, "Forward" and "GLA"), in float64
PyTorch, written from the spec: pre-norm blocks (RMSNorm or LayerNorm, ε 1e-6), the mixer (q/k
projections of d/2, v and g of d, the low-rank gate z = W_gk1 (W_gk0 u) + b and α =
exp(logsigmoid(z)/16) under gla_decay gated, the recurrence S_t = S_{t−1} diag(α_t) + v_t k_tᵀ as
a loop over time with the full V×K state, o = S q/√K, o_norm per head times SiLU(g), o_proj),
the SwiGLU MLP, ln_f and an untied head with bias; autograd for the gradients. Nothing here
imports srbench code.

Every function takes the checkpoint's config (dict) and parameters ({name: float64 tensor}).
"""
import torch
import torch.nn.functional as F

from lm_reference import loss_functions, mixer_mlp_logits

EPS = 1e-6  # every norm of gla (F's norm_eps)


def mixer(cfg, p, m, u):
    B, T, d = u.shape
    H = cfg["heads"]
    K, V = d // (2 * H), d // H
    q = (u @ p[m + "q_proj.weight"].T).reshape(B, T, H, K)
    k = (u @ p[m + "k_proj.weight"].T).reshape(B, T, H, K)
    v = (u @ p[m + "v_proj.weight"].T).reshape(B, T, H, V)
    g = u @ p[m + "g_proj.weight"].T
    if cfg["gla_decay"] == "gated":
        z = (u @ p[m + "gk_proj.0.weight"].T) @ p[m + "gk_proj.1.weight"].T + p[m + "gk_proj.1.bias"]
        alpha = torch.exp(F.logsigmoid(z) / 16).reshape(B, T, H, K)
    else:
        alpha = torch.ones_like(q)
    S = u.new_zeros(B, H, V, K)  # rows: value channels, columns: key channels
    outs = []
    for t in range(T):
        S = S * alpha[:, t, :, None, :] + v[:, t, :, :, None] * k[:, t, :, None, :]
        outs.append((S @ q[:, t, :, :, None])[..., 0] / K ** 0.5)
    o = torch.stack(outs, dim=1)  # [B, T, H, V]
    o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + EPS) * p[m + "o_norm.weight"]
    o = o.reshape(B, T, d) * F.silu(g)
    return o @ p[m + "o_proj.weight"].T


def logits(cfg, p, tokens):
    """logits [B, T, V] of tokens [B, T]."""
    return mixer_mlp_logits(cfg, p, tokens, mixer, EPS)


make_loss, forward_backward = loss_functions(logits)
