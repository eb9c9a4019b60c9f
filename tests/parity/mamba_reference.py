"""The reference of srbench's Mamba language model (linear-rnn.md, "Forward" and "Mamba"), in
float64 PyTorch, written from the spec: M's `MixerModel` with pre-norm `Block`s (RMSNorm or
LayerNorm, ε 1e-5), each mixer `mamba_simple.py`'s slow path with `selective_scan_ref`
(test_mamba_mixer_torch.torch_mixer, with PyTorch's conv1d, softplus, silu), ln_f (unless
final_norm: false) and an untied head with bias; autograd for the gradients. Nothing here imports
srbench code.

Every function takes the checkpoint's config (dict) and parameters ({name: float64 tensor}).
"""

from lm_reference import loss_functions, norm as lm_norm
from test_mamba_mixer_torch import torch_mixer

EPS = 1e-5  # every norm of mamba (M's norm_epsilon)


def norm(x, p, prefix, kind):
    return lm_norm(x, p, prefix, kind, EPS)


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


make_loss, forward_backward = loss_functions(logits)
