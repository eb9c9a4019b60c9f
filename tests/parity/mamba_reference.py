"""The reference of srbench's Mamba language model (linear-rnn.md, "Forward" and "Mamba"), in
float64 PyTorch, written from the spec: M's `MixerModel` with pre-norm `Block`s (RMSNorm or
LayerNorm, ε 1e-5), each mixer `mamba_simple.py`'s slow path with `selective_scan_ref`
(test_mamba_mixer_torch.torch_mixer, with PyTorch's conv1d, softplus, silu), ln_f (unless
final_norm: false) and an untied head with bias; autograd for the gradients. Nothing here imports
srbench code.

Every function takes the checkpoint's config (dict) and parameters ({name: float64 tensor}).
"""
import torch
import torch.nn.functional as F

from test_mamba_mixer_torch import torch_mixer

EPS = 1e-5  # every norm of mamba (M's norm_epsilon)


def norm(x, p, prefix, kind):
    if kind == "layer":
        return F.layer_norm(x, (x.shape[-1],), p[prefix + ".weight"], p[prefix + ".bias"], EPS)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * p[prefix + ".weight"]


def dims(cfg):
    d = cfg["d_model"]
    return dict(E=cfg["expand"] * d, N=cfg["d_state"], R=cfg["dt_rank"], K=cfg["d_conv"],
                signed=cfg["eigenvalues"] == "signed")


def logits(cfg, p, tokens):
    """logits [B, T, V] of tokens [B, T]."""
    B, T = tokens.shape
    k = dims(cfg)
    h = p["tok_emb"][tokens]
    for l in range(cfg["layers"]):
        b = f"blocks.{l}."
        m = b + "mixer."
        w = {"in_proj": p[m + "in_proj.weight"], "conv_w": p[m + "conv1d.weight"], "conv_b": p[m + "conv1d.bias"],
             "x_proj": p[m + "x_proj.weight"], "dt_w": p[m + "dt_proj.weight"], "dt_b": p[m + "dt_proj.bias"],
             "A_log": p[m + "A_log"], "D": p[m + "D"], "out_proj": p[m + "out_proj.weight"]}
        u = norm(h, p, b + "ln1", cfg["norm"])
        h = h + torch_mixer(u, w, B, T, k["E"], k["N"], k["R"], k["K"], k["signed"]).reshape(B, T, -1)
    if cfg.get("final_norm", True):
        h = norm(h, p, "ln_f", cfg["norm"])
    return h @ p["head.weight"].T + p["head.bias"]


def make_loss(cfg, params, tokens, targets):
    """(leaves by checkpoint name, loss_fn): loss_fn() gives (logits, loss), the mean cross-entropy
    over the targets >= 0."""
    leaves = {n: t.clone().requires_grad_(True) for n, t in params.items()}

    def loss_fn():
        z = logits(cfg, leaves, tokens)
        return z, F.cross_entropy(z.reshape(-1, z.shape[-1]), targets.reshape(-1), ignore_index=-1)

    return leaves, loss_fn


def forward_backward(cfg, params, tokens, targets):
    """(logits, loss, {name: gradient}) in float64."""
    leaves, loss_fn = make_loss(cfg, params, tokens, targets)
    z, loss = loss_fn()
    loss.backward()
    return z.detach(), loss.detach(), {n: p.grad.detach().clone() for n, p in leaves.items()}
