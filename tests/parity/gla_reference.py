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

EPS = 1e-6  # every norm of gla (F's norm_eps)


def norm(x, p, prefix, kind):
    if kind == "layer":
        return F.layer_norm(x, (x.shape[-1],), p[prefix + ".weight"], p[prefix + ".bias"], EPS)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * p[prefix + ".weight"]


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
    h = p["tok_emb"][tokens]
    for l in range(cfg["layers"]):
        b = f"blocks.{l}."
        h = h + mixer(cfg, p, b + "mixer.", norm(h, p, b + "ln1", cfg["norm"]))
        if cfg["mlp_hidden"] > 0:
            x = norm(h, p, b + "ln2", cfg["norm"])
            h = h + (F.silu(x @ p[b + "mlp.gate_proj.weight"].T) * (x @ p[b + "mlp.up_proj.weight"].T)) \
                @ p[b + "mlp.down_proj.weight"].T
    if cfg.get("final_norm", True):
        h = norm(h, p, "ln_f", cfg["norm"])
    return h @ p["head.weight"].T + p["head.bias"]


def make_loss(cfg, params, tokens, targets):
    leaves = {n: t.clone().requires_grad_(True) for n, t in params.items()}

    def loss_fn():
        z = logits(cfg, leaves, tokens)
        return z, F.cross_entropy(z.reshape(-1, z.shape[-1]), targets.reshape(-1), ignore_index=-1)

    return leaves, loss_fn


def forward_backward(cfg, params, tokens, targets):
    leaves, loss_fn = make_loss(cfg, params, tokens, targets)
    z, loss = loss_fn()
    loss.backward()
    return z.detach(), loss.detach(), {n: p.grad.detach().clone() for n, p in leaves.items()}
