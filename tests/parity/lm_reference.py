"""What the linear-recurrent LM references (mamba_reference.py, deltanet_reference.py,
gla_reference.py) share, written from linear-rnn.md's "Forward": the norms, the pre-norm blocks
around a mixer with the SwiGLU MLP (deltanet, gla), ln_f and the untied head with bias, and the
loss and its gradients by autograd. Nothing here imports srbench code.

A reference module defines its mixer(cfg, p, m, u) and its logits(cfg, p, tokens), and gets
make_loss and forward_backward from `loss_functions(logits)`.
"""
import torch.nn.functional as F


def norm(x, p, prefix, kind, eps):
    """RMSNorm (`norm: rms`) or LayerNorm (`norm: layer`, biased variance) over the last axis."""
    if kind == "layer":
        return F.layer_norm(x, (x.shape[-1],), p[prefix + ".weight"], p[prefix + ".bias"], eps)
    return x * (x.pow(2).mean(-1, keepdim=True) + eps).rsqrt() * p[prefix + ".weight"]


def mixer_mlp_logits(cfg, p, tokens, mixer, eps):
    """logits [B, T, V] of tokens [B, T] through linear-rnn.md's blocks h += Mixer(Norm_ln1(h)),
    h += MLP(Norm_ln2(h)) (mlp_hidden >= 1), then ln_f (final_norm) and the head."""
    h = p["tok_emb"][tokens]
    for l in range(cfg["layers"]):
        b = f"blocks.{l}."
        h = h + mixer(cfg, p, b + "mixer.", norm(h, p, b + "ln1", cfg["norm"], eps))
        if cfg["mlp_hidden"] > 0:
            x = norm(h, p, b + "ln2", cfg["norm"], eps)
            h = h + (F.silu(x @ p[b + "mlp.gate_proj.weight"].T) * (x @ p[b + "mlp.up_proj.weight"].T)) \
                @ p[b + "mlp.down_proj.weight"].T
    if cfg.get("final_norm", True):
        h = norm(h, p, "ln_f", cfg["norm"], eps)
    return h @ p["head.weight"].T + p["head.bias"]


def loss_functions(logits):
    """(make_loss, forward_backward) for a model's logits(cfg, p, tokens):
    make_loss(cfg, params, tokens, targets) -> (leaves by checkpoint name, loss_fn), loss_fn() giving
    (logits, loss), the mean cross-entropy over the targets >= 0;
    forward_backward(cfg, params, tokens, targets) -> (logits, loss, {name: gradient})."""
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
        return z.detach(), loss.detach(), {n: q.grad.detach().clone() for n, q in leaves.items()}

    return make_loss, forward_backward
