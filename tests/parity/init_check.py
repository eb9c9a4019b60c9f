"""linear-rnn.md's init check ("What the init check holds a fresh checkpoint to"): every tensor of
a fresh checkpoint held to its rule — exact values, N(0, σ) and U(±b) tensors by their moments and
extremes, dt biases by softplus's range and log-uniform moments — then the pooled normal and
uniform tensors told apart by the fraction beyond one (resp. a half) of their scale. Each test
fails a correct init with a probability of order 1e-6 per tensor.

    failures = check_init(cfg, params)   # cfg: the checkpoint's config dict; params: name -> tensor
"""
import math

import torch

LN_DT_MIN, LN_DT_MAX = math.log(1e-3), math.log(0.1)


def rules(cfg, names):
    """{name: (kind, value)} for a mamba checkpoint: ('const', v), ('normal', σ), ('uniform', b),
    ('dt_bias', None), ('a_log', None)."""
    d, L = cfg["d_model"], cfg["layers"]
    E, K, R = cfg["expand"] * d, cfg["d_conv"], cfg["dt_rank"]
    grazzi = cfg.get("init", "default") == "grazzi"
    out = {}
    for name in names:
        last = name.split(".")
        if name == "tok_emb":
            out[name] = ("normal", 1.0 if grazzi else 0.02)
        elif name == "head.weight":
            out[name] = ("uniform", 1 / math.sqrt(d)) if grazzi else ("normal", 0.02)
        elif name == "head.bias" or (last[-2] in ("ln1", "ln2", "ln_f", "o_norm") and last[-1] == "bias"):
            out[name] = ("const", 0.0)
        elif last[-2] in ("ln1", "ln2", "ln_f", "o_norm") and last[-1] == "weight":
            out[name] = ("const", 1.0)
        elif name.endswith("mixer.in_proj.weight"):
            out[name] = ("uniform", 1 / math.sqrt(d))
        elif name.endswith("mixer.x_proj.weight"):
            out[name] = ("uniform", 1 / math.sqrt(E))
        elif name.endswith("mixer.conv1d.weight") or name.endswith("mixer.conv1d.bias"):
            out[name] = ("uniform", 1 / math.sqrt(K))
        elif name.endswith("mixer.dt_proj.weight"):
            out[name] = ("uniform", R ** -0.5)
        elif name.endswith("mixer.dt_proj.bias"):
            out[name] = ("dt_bias", None)
        elif name.endswith("mixer.A_log"):
            out[name] = ("a_log", None)
        elif name.endswith("mixer.D"):
            out[name] = ("const", 1.0)
        elif name.endswith("mixer.out_proj.weight"):
            out[name] = ("uniform", 1 / math.sqrt(E) / (1.0 if grazzi else math.sqrt(L)))
        else:
            raise ValueError(f"init check: no rule for tensor '{name}'")
    return out


def check_init(cfg, params):
    """A list of failures (empty: the checkpoint is as linear-rnn.md's init draws it)."""
    bad = []
    normals, uniforms, dt = [], [], []
    for name, (kind, v) in rules(cfg, params).items():
        w = params[name].to(torch.float64).flatten()
        n = w.numel()
        if kind == "const":
            if not bool((w == v).all()):
                bad.append(f"{name}: not all {v}")
        elif kind == "a_log":
            N = params[name].shape[-1]
            want = torch.log(torch.arange(1, N + 1, dtype=torch.float64)).expand_as(params[name]).flatten()
            if float((w - want).abs().max()) > 1e-6:
                bad.append(f"{name}: not ln(n + 1)")
        elif kind == "dt_bias":
            dt.append((name, w))
        elif kind == "normal":
            mean, std, top = float(w.mean()), float(w.std()), float(w.abs().max())
            if abs(mean) > 5 * v / math.sqrt(n):
                bad.append(f"{name}: mean {mean:.3g}, N(0, {v:g}) over {n} values")
            if abs(std / v - 1) > max(0.10, 5 / math.sqrt(2 * n)):
                bad.append(f"{name}: std {std:.4g}, want {v:g}")
            if top > 6 * v:
                bad.append(f"{name}: max |w| {top:.4g} > 6σ")
            normals.append(w / v)
        elif kind == "uniform":
            mean, std, top = float(w.mean()), float(w.std()), float(w.abs().max())
            if top > v * (1 + 1e-6):
                bad.append(f"{name}: max |w| {top:.6g} beyond the bound {v:.6g}")
            if top < v * 10 ** (-6 / n):
                bad.append(f"{name}: max |w| {top:.6g}, far below the bound {v:.6g} (scaled down?)")
            if abs(mean) > 5 * (v / math.sqrt(3)) / math.sqrt(n):
                bad.append(f"{name}: mean {mean:.3g}, U(±{v:.4g}) over {n} values")
            if abs(std / (v / math.sqrt(3)) - 1) > max(0.10, 5 * math.sqrt(0.2 / n)):
                bad.append(f"{name}: std {std:.4g}, want {v / math.sqrt(3):.4g}")
            uniforms.append(w / v)
    for name, b in dt:
        sp = torch.nn.functional.softplus(b)
        if float(sp.min()) < 1e-3 * (1 - 1e-5) or float(sp.max()) > 0.1 * (1 + 1e-5):
            bad.append(f"{name}: softplus outside [0.001, 0.1]: {float(sp.min()):.4g} … {float(sp.max()):.4g}")
    if dt:
        ln = torch.log(torch.nn.functional.softplus(torch.cat([b for _, b in dt])))
        n, s = ln.numel(), (LN_DT_MAX - LN_DT_MIN) / math.sqrt(12)
        if n >= 32:
            if abs(float(ln.mean()) - math.log(0.01)) > 5 * s / math.sqrt(n):
                bad.append(f"dt biases: mean ln softplus {float(ln.mean()):.4g}, want ln 0.01 = {math.log(0.01):.4g}")
            if abs(float(ln.std()) / s - 1) > max(0.10, 5 * math.sqrt(0.2 / n)):
                bad.append(f"dt biases: std of ln softplus {float(ln.std()):.4g}, want {s:.4g} (log-uniform)")
    if normals:
        z = torch.cat(normals)
        n = z.numel()
        if abs(float(z.std()) - 1) > max(0.03, 5 / math.sqrt(2 * n)):
            bad.append(f"normal tensors pooled: std/σ {float(z.std()):.4f}, want 1")
        frac = float((z.abs() > 1).double().mean())
        if abs(frac - 0.3173) > max(0.02, 5 * math.sqrt(0.2166 / n)):
            bad.append(f"normal tensors pooled: {frac:.4f} beyond 1σ, want 0.3173 (a uniform has 0.4226)")
    if uniforms:
        u = torch.cat(uniforms)
        n = u.numel()
        if abs(float(u.std()) * math.sqrt(3) - 1) > max(0.03, 5 * math.sqrt(0.2 / n)):
            bad.append(f"uniform tensors pooled: std/b {float(u.std()):.4f}, want {1 / math.sqrt(3):.4f}")
        frac = float((u.abs() > 0.5).double().mean())
        if abs(frac - 0.5) > max(0.03, 5 * math.sqrt(0.25 / n)):
            bad.append(f"uniform tensors pooled: {frac:.4f} beyond b/2, want 0.5")
    return bad
