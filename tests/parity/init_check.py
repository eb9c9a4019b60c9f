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
    """{name: (kind, value)} for a mamba, deltanet or gla checkpoint: ('const', v), ('normal', σ),
    ('uniform', b), ('dt_bias', None), ('a_log', None: mamba's ln(n + 1)), ('gated_a_log', None:
    ln U(0, 16])."""
    arch = cfg.get("arch", "mamba")
    if arch not in ("mamba", "deltanet", "gla"):
        raise ValueError(f"init check: no rules for arch '{arch}'")
    grazzi = cfg.get("init", "default") == "grazzi"
    out = {}
    for name in names:
        last = name.split(".")
        if name == "head.bias" or (len(last) > 1 and last[-2] in ("ln1", "ln2", "ln_f", "o_norm") and last[-1] == "bias"):
            out[name] = ("const", 0.0)
        elif len(last) > 1 and last[-2] in ("ln1", "ln2", "ln_f", "o_norm") and last[-1] == "weight":
            out[name] = ("const", 1.0)
        elif arch == "mamba":
            out[name] = mamba_rule(cfg, name, grazzi)
        elif arch == "gla":
            out[name] = gla_rule(name)
        else:
            out[name] = deltanet_rule(cfg, name, grazzi)
    return out


def mamba_rule(cfg, name, grazzi):
    d, L = cfg["d_model"], cfg["layers"]
    E, K, R = cfg["expand"] * d, cfg["d_conv"], cfg["dt_rank"]
    if name == "tok_emb":
        return ("normal", 1.0 if grazzi else 0.02)
    if name == "head.weight":
        return ("uniform", 1 / math.sqrt(d)) if grazzi else ("normal", 0.02)
    if name.endswith("mixer.in_proj.weight"):
        return ("uniform", 1 / math.sqrt(d))
    if name.endswith("mixer.x_proj.weight"):
        return ("uniform", 1 / math.sqrt(E))
    if name.endswith("mixer.conv1d.weight") or name.endswith("mixer.conv1d.bias"):
        return ("uniform", 1 / math.sqrt(K))
    if name.endswith("mixer.dt_proj.weight"):
        return ("uniform", R ** -0.5)
    if name.endswith("mixer.dt_proj.bias"):
        return ("dt_bias", None)
    if name.endswith("mixer.A_log"):
        return ("a_log", None)
    if name.endswith("mixer.D"):
        return ("const", 1.0)
    if name.endswith("mixer.out_proj.weight"):
        return ("uniform", 1 / math.sqrt(E) / (1.0 if grazzi else math.sqrt(L)))
    raise ValueError(f"init check: no rule for tensor '{name}'")


def deltanet_rule(cfg, name, grazzi):
    """F's _init_weights (N(0, 0.02) everywhere) or G's layer (xavier with gain 2^−2.5 on the mixer's
    Linears, nn.Conv1d's default on the convs, down_proj N(0, 0.02/√(2L)))."""
    d, L, H, K = cfg["d_model"], cfg["layers"], cfg["heads"], cfg["d_conv"]
    if name.endswith("mixer.A_log"):
        return ("gated_a_log", None)
    if name.endswith("mixer.dt_bias"):
        return ("dt_bias", None)
    known = (name in ("tok_emb", "head.weight") or
             any(name.endswith(f"mixer.{x}_proj.weight") for x in "qkvbago") or
             any(name.endswith(f"mixer.{x}_conv1d.weight") for x in "qkv") or
             any(name.endswith(f"mlp.{x}_proj.weight") for x in ("gate", "up", "down")))
    if not known:
        raise ValueError(f"init check: no rule for tensor '{name}'")
    if not grazzi:
        return ("normal", 0.02)
    if name.endswith("_conv1d.weight"):
        return ("uniform", 1 / math.sqrt(K))
    if name.endswith("mlp.down_proj.weight"):
        return ("normal", 0.02 / math.sqrt(2 * L))
    if ".mixer." in name:
        fan_out = H if (name.endswith("b_proj.weight") or name.endswith("a_proj.weight")) else d
        return ("uniform", 2 ** -2.5 * math.sqrt(6 / (d + fan_out)))
    return ("normal", 0.02)


def gla_rule(name):
    """F's _init_weights: every nn.Linear weight N(0, 0.02), gk_proj.1's bias 0."""
    if name.endswith("gk_proj.1.bias"):
        return ("const", 0.0)
    known = (name in ("tok_emb", "head.weight") or
             any(name.endswith(f"mixer.{x}_proj.weight") for x in "qkvgo") or
             name.endswith("gk_proj.0.weight") or name.endswith("gk_proj.1.weight") or
             any(name.endswith(f"mlp.{x}_proj.weight") for x in ("gate", "up", "down")))
    if not known:
        raise ValueError(f"init check: no rule for tensor '{name}'")
    return ("normal", 0.02)


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
        elif kind == "gated_a_log":
            a = torch.exp(w)
            if not (float(a.min()) > 0 and float(a.max()) <= 16 * (1 + 1e-6)):
                bad.append(f"{name}: exp(A_log) outside (0, 16]: {float(a.min()):.4g} … {float(a.max()):.4g}")
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


def check_fresh_inits(srbench, tmp, cases, base, drop, wrong):
    """The init check of the parity tests: for each case (label, ["key=value", ...]) and seeds 0–2, a
    fresh checkpoint of `base` settings (the case's own keys but those starting with `drop`) at
    vocabulary 64 must pass check_init; then each wrong init {label: (applies(cfg), f(cfg, params) ->
    params)} must be caught in every checkpoint it applies to (and apply to at least one)."""
    import os
    from parity_report import check, current, run
    from reference import load_checkpoint
    current[0] = "init"
    caught = {k: [0, 0] for k in wrong}
    for label, sets in cases:
        for seed in range(3):
            settings = dict(base)
            settings.update(s.split("=", 1) for s in sets if not s.startswith(drop))
            ck = os.path.join(tmp, "init.h5")
            run([srbench, "init-checkpoint", "--vocab", "64", "--seed", str(seed), "--out", ck] +
                [a for k, v in settings.items() for a in ("--set", f"{k}={v}")])
            cfg, _, params = load_checkpoint(ck)
            bad = check_init(cfg, params)
            check(f"init: {label}, seed {seed}", float(len(bad)), 0.0, ("  " + "; ".join(bad)) if bad else "")
            torch.manual_seed(seed)
            for k, (applies, f) in wrong.items():
                if applies(cfg):
                    caught[k][0] += bool(check_init(cfg, f(cfg, params)))
                    caught[k][1] += 1
    for k, (n, of) in caught.items():
        check(f"init check catches '{k}'", float(of - n) if of else 1.0, 0.0, f"  in {n} of {of} checkpoints")
