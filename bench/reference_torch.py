#!/usr/bin/python3
"""The PyTorch reference of the throughput benchmark (docs/performance.md): the model of
/work/shared/spec/model.md as PyTorch users write it, trained exactly as bench_model trains ours;
with --arch rnn | lstm | gru, recurrent.md's model: torch.nn.Embedding, torch.nn.RNN / LSTM / GRU
(layers, batch_first) and torch.nn.Linear; with --arch mamba, linear-rnn.md's Mamba on the CPU path
its reference has (`selective_scan_ref`'s loop over time, autograd through it; MambaMixer below);
with --arch deltanet, linear-rnn.md's DeltaNet LM with fla's naive recurrent delta rule
(`delta_rule_recurrence`'s loop over time, autograd through it; DeltaNetMixer below); with --arch gla,
linear-rnn.md's GLA LM with fla's naive recurrent GLA (`naive_recurrent_gla`'s loop over time,
autograd through it; GLAMixer below).

Learned positions, pre-LN blocks (LayerNorm eps 1e-5), fused q|k|v linear, causal softmax
attention, exact-erf GeLU MLP ×4, cross-entropy on every position; AdamW (β 0.9, 0.98, ε 1e-9,
weight decay 0.01 on matrices and embeddings only), gradient clipping by the global norm 1.0.
Data: the copy-previous-token stream bench_model uses (vocab 32).

    reference_torch.py --d 128 --layers 2 --heads 4 --T 64 --batch 32 --threads 1 --steps 10 [--arch lstm]

(--heads: the transformer's, deltanet's and gla's; the other archs ignore it.)

Prints one line `tok_s=<median train tokens/s> step_ms=<median> loss=<last loss> maxrss_kb=<peak> params=<count>`.
With --eval-examples N, forward only instead (evaluate() below).
"""
import argparse
import math
import resource
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x, mask):
        B, T, C = x.shape
        hs = C // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, hs).transpose(1, 2)
        k = k.view(B, T, self.heads, hs).transpose(1, 2)
        v = v.view(B, T, self.heads, hs).transpose(1, 2)
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        s = s.masked_fill(mask[:T, :T], float("-inf"))
        y = F.softmax(s, dim=-1) @ v
        x = x + self.o(y.transpose(1, 2).reshape(B, T, C))
        return x + self.proj(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), 1))
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(("o.weight", "proj.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T))
        for b in self.blocks:
            x = b(x, self.mask)
        return self.head(self.ln_f(x))


class Recurrent(nn.Module):
    """recurrent.md: embedding, `layers` stacked torch.nn.RNN (tanh) / LSTM / GRU layers, head."""

    def __init__(self, arch, vocab, d, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.rnn = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[arch](d, d, num_layers=layers, batch_first=True)
        self.head = nn.Linear(d, vocab)
        # recurrent.md's init: the cells keep PyTorch's default; tok_emb and head N(0, 0.02), head.bias 0
        nn.init.normal_(self.tok.weight, 0.0, 0.02)
        nn.init.normal_(self.head.weight, 0.0, 0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, idx):
        return self.head(self.rnn(self.tok(idx))[0])


class MambaMixer(nn.Module):
    """linear-rnn.md's Mamba mixer as the reference's CPU path computes it: mamba_ssm's
    `Mamba.forward` without its fused kernels, the scan `selective_scan_ref` (a loop over time,
    vectorised over batch, channels and state), the time axis unbound once."""

    def __init__(self, d, d_state=16, d_conv=4, expand=2):
        super().__init__()
        E, R = expand * d, math.ceil(d / 16)
        self.E, self.N, self.R, self.K = E, d_state, R, d_conv
        self.in_proj = nn.Linear(d, 2 * E, bias=False)
        self.conv1d = nn.Conv1d(E, E, d_conv, groups=E, padding=d_conv - 1)
        self.x_proj = nn.Linear(E, R + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(R, E)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(E, 1))
        self.D = nn.Parameter(torch.ones(E))
        self.out_proj = nn.Linear(E, d, bias=False)
        with torch.no_grad():
            dt = torch.exp(torch.rand(E) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))

    def forward(self, u):
        B, T, _ = u.shape
        x, z = self.in_proj(u).chunk(2, dim=-1)
        x = F.silu(self.conv1d(x.transpose(1, 2))[..., :T]).transpose(1, 2)  # (B, T, E)
        dt, Bm, Cm = self.x_proj(x).split([self.R, self.N, self.N], dim=-1)
        delta = F.softplus(self.dt_proj(dt))  # (B, T, E)
        A = -torch.exp(self.A_log)  # (E, N)
        dA = torch.exp(delta.unsqueeze(-1) * A)  # (B, T, E, N)
        dBx = (delta * x).unsqueeze(-1) * Bm.unsqueeze(2)  # (B, T, E, N)
        h = u.new_zeros(B, self.E, self.N)
        ys = []
        for a_t, b_t, c_t in zip(dA.unbind(1), dBx.unbind(1), Cm.unbind(1)):
            h = a_t * h + b_t
            ys.append(torch.einsum("ben,bn->be", h, c_t))
        y = torch.stack(ys, dim=1) + x * self.D
        return self.out_proj(y * F.silu(z))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Mamba(nn.Module):
    """linear-rnn.md's mamba LM: embedding, pre-RMSNorm residual mixer blocks, ln_f, head."""

    def __init__(self, vocab, d, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.norms = nn.ModuleList(RMSNorm(d) for _ in range(layers))
        self.mixers = nn.ModuleList(MambaMixer(d) for _ in range(layers))
        self.ln_f = RMSNorm(d)
        self.head = nn.Linear(d, vocab)
        nn.init.normal_(self.tok.weight, 0.0, 0.02)

    def forward(self, idx):
        x = self.tok(idx)
        for n, m in zip(self.norms, self.mixers):
            x = x + m(n(x))
        return self.head(self.ln_f(x))


def l2norm(x, eps=1e-6):
    """fla's l2norm over a head's channels: x / sqrt(sum x^2 + eps)."""
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)


def delta_rule_recurrence(q, k, v, beta):
    """fla's `fla/ops/delta_rule/naive.py` `delta_rule_recurrence` (a loop over time, vectorised over
    batch and heads; its state S is keys x values), with the time axis unbound once and the outputs
    stacked instead of `k[:, :, i]` and `o[:, :, i] = ...` inside the loop (which make autograd's
    backward quadratic in T), and without its `.clone()`s (S is never written in place here).
    q, k, v (B, T, H, K), beta (B, T, H); returns o (B, T, H, K)."""
    B, T, H, K = q.shape
    q = q * K ** -0.5
    S = q.new_zeros(B, H, K, v.shape[-1])
    os = []
    for q_t, k_t, v_t, b_t in zip(q.unbind(1), k.unbind(1), v.unbind(1), beta.unbind(1)):
        v_t = (v_t - (S * k_t[..., None]).sum(-2)) * b_t[..., None]
        S = S + k_t.unsqueeze(-1) * v_t.unsqueeze(-2)
        os.append(torch.einsum("bhd,bhdm->bhm", q_t, S))
    return torch.stack(os, dim=1)


class DeltaNetMixer(nn.Module):
    """linear-rnn.md's DeltaNet mixer as fla's `DeltaNet` layer computes it without its Triton
    kernels (defaults: expand_k = expand_v = 1, short convs of d_conv without bias and SiLU on q, k
    and v, l2 norm of q and k per head, beta = sigmoid(b_proj u) one per head, per-head RMSNorm
    o_norm, o_proj; no gate), the recurrence `delta_rule_recurrence` above."""

    def __init__(self, d, heads=4, d_conv=4, eps=1e-6):
        super().__init__()
        self.H, self.K = heads, d // heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.b_proj = nn.Linear(d, heads, bias=False)
        self.q_conv1d = nn.Conv1d(d, d, d_conv, groups=d, padding=d_conv - 1, bias=False)
        self.k_conv1d = nn.Conv1d(d, d, d_conv, groups=d, padding=d_conv - 1, bias=False)
        self.v_conv1d = nn.Conv1d(d, d, d_conv, groups=d, padding=d_conv - 1, bias=False)
        self.o_norm = RMSNorm(self.K, eps)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, u):
        B, T, d = u.shape

        def short_conv(proj, conv):  # fla's ShortConvolution with activation silu
            return F.silu(conv(proj(u).transpose(1, 2))[..., :T].transpose(1, 2)).reshape(B, T, self.H, self.K)

        q = l2norm(short_conv(self.q_proj, self.q_conv1d))
        k = l2norm(short_conv(self.k_proj, self.k_conv1d))
        v = short_conv(self.v_proj, self.v_conv1d)
        beta = self.b_proj(u).sigmoid()  # (B, T, H)
        o = delta_rule_recurrence(q, k, v, beta)
        return self.o_proj(self.o_norm(o).reshape(B, T, d))


class GatedMLP(nn.Module):
    """fla's GatedMLP (SwiGLU): down(silu(gate(x)) * up(x)), no biases."""

    def __init__(self, d, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(d, hidden, bias=False)
        self.up_proj = nn.Linear(d, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DeltaNet(nn.Module):
    """linear-rnn.md's deltanet LM (srbench's defaults: heads 4, d_conv 4, mlp_hidden
    256*ceil(floor(8d/3)/256), RMSNorm eps 1e-6 everywhere): embedding, pre-RMSNorm blocks
    h + mixer(ln1(h)), h + mlp(ln2(h)), ln_f, untied head with bias (mixer: a factory of another
    arch's mixer, as GLA below); fla's `_init_weights`
    (every Linear and Conv1d weight and the embedding N(0, 0.02), biases 0)."""

    def __init__(self, vocab, d, layers, heads=4, d_conv=4, eps=1e-6, mixer=None):
        super().__init__()
        hidden = 256 * -(-(8 * d // 3) // 256)
        mixer = mixer or (lambda: DeltaNetMixer(d, heads, d_conv, eps))
        self.tok = nn.Embedding(vocab, d)
        self.ln1 = nn.ModuleList(RMSNorm(d, eps) for _ in range(layers))
        self.mixers = nn.ModuleList(mixer() for _ in range(layers))
        self.ln2 = nn.ModuleList(RMSNorm(d, eps) for _ in range(layers))
        self.mlps = nn.ModuleList(GatedMLP(d, hidden) for _ in range(layers))
        self.ln_f = RMSNorm(d, eps)
        self.head = nn.Linear(d, vocab)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Conv1d, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, idx):
        x = self.tok(idx)
        for n1, m, n2, f in zip(self.ln1, self.mixers, self.ln2, self.mlps):
            x = x + m(n1(x))
            x = x + f(n2(x))
        return self.head(self.ln_f(x))


def naive_recurrent_gla(q, k, v, gk):
    """fla's `fla/ops/gla/naive.py` `naive_recurrent_gla` (a loop over time, vectorised over batch and
    heads; its state h is keys x values, h = h * exp(gk)[..., None] + k v^T, o = (q K^-1/2)^T h), with
    the time axis unbound once and the outputs stacked instead of `q[:, :, i]` and `o[:, :, i] = ...`
    inside the loop (as delta_rule_recurrence above), and without its float32 casts and transposes
    (the tensors are float32 already and laid out (B, T, H, .) here).
    q, k, gk (B, T, H, K), v (B, T, H, V); returns o (B, T, H, V)."""
    B, T, H, K = q.shape
    q = q * K ** -0.5
    h = q.new_zeros(B, H, K, v.shape[-1])
    os = []
    for q_t, k_t, v_t, g_t in zip(q.unbind(1), k.unbind(1), v.unbind(1), gk.exp().unbind(1)):
        h = h * g_t[..., None] + k_t[..., None] * v_t[..., None, :]
        os.append((q_t[..., None] * h).sum(-2))
    return torch.stack(os, dim=1)


class GLAMixer(nn.Module):
    """linear-rnn.md's GLA mixer as fla's `GatedLinearAttention` layer computes it without its Triton
    kernels (defaults: expand_k 0.5, expand_v 1, no short conv, no feature map, gk_proj = Linear(d, 16,
    no bias) then Linear(16, d/2), gk = logsigmoid(.)/16, per-head RMSNorm o_norm times SiLU(g_proj u)
    (`FusedRMSNormGated`, swish), o_proj), the recurrence `naive_recurrent_gla` above."""

    def __init__(self, d, heads=4, eps=1e-6, gate_low_rank=16, gate_logit_normalizer=16):
        super().__init__()
        self.H, self.K, self.V = heads, d // (2 * heads), d // heads
        self.normalizer = gate_logit_normalizer
        self.q_proj = nn.Linear(d, d // 2, bias=False)
        self.k_proj = nn.Linear(d, d // 2, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.g_proj = nn.Linear(d, d, bias=False)
        self.gk_proj = nn.Sequential(nn.Linear(d, gate_low_rank, bias=False), nn.Linear(gate_low_rank, d // 2))
        self.o_norm = RMSNorm(self.V, eps)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, u):
        B, T, d = u.shape
        q = self.q_proj(u).reshape(B, T, self.H, self.K)
        k = self.k_proj(u).reshape(B, T, self.H, self.K)
        v = self.v_proj(u).reshape(B, T, self.H, self.V)
        gk = (F.logsigmoid(self.gk_proj(u)) / self.normalizer).reshape(B, T, self.H, self.K)
        o = naive_recurrent_gla(q, k, v, gk)
        return self.o_proj((self.o_norm(o).reshape(B, T, d) * F.silu(self.g_proj(u))))


class GLA(DeltaNet):
    """linear-rnn.md's gla LM (srbench's defaults: heads 4, gla_decay gated, mlp_hidden
    256*ceil(floor(8d/3)/256), RMSNorm eps 1e-6 everywhere): DeltaNet's LM above (embedding,
    pre-RMSNorm blocks with the SwiGLU MLP, ln_f, untied head with bias; F's init N(0, 0.02), biases
    0) with GLAMixer for the mixer."""

    def __init__(self, vocab, d, layers, heads=4, eps=1e-6):
        super().__init__(vocab, d, layers, heads, eps=eps, mixer=lambda: GLAMixer(d, heads, eps))


def evaluate(model, a):
    """Forward only, as an evaluation runs: every example once, batches of a.batch, the logits'
    argmax; prints `tok_s=<examples·T / wall s> s=<wall s> maxrss_kb=<peak of the process>`."""
    gen = torch.Generator().manual_seed(1)
    data = torch.randint(0, a.vocab, (a.eval_examples, a.T), generator=gen)
    model.eval()
    t0 = time.perf_counter()
    with torch.no_grad():
        correct = 0
        for i in range(0, a.eval_examples, a.batch):
            tokens = data[i:i + a.batch]
            correct += int((model(tokens).argmax(-1) == tokens).sum())
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"tok_s={a.eval_examples * a.T / dt:.1f} s={dt:.3f} correct={correct} maxrss_kb={rss}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, required=True)
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--T", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--vocab", type=int, default=32)
    ap.add_argument("--arch", default="transformer", choices=["transformer", "rnn", "lstm", "gru", "mamba", "deltanet", "gla"])
    ap.add_argument("--eval-examples", type=int, default=0,
                    help="forward only: this many random examples in batches of --batch under torch.no_grad()")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if a.arch == "transformer":
        model = GPT(a.vocab, a.d, a.layers, a.heads, max(256, a.T))
    elif a.arch == "mamba":
        model = Mamba(a.vocab, a.d, a.layers)
    elif a.arch == "deltanet":
        model = DeltaNet(a.vocab, a.d, a.layers, a.heads)
    elif a.arch == "gla":
        model = GLA(a.vocab, a.d, a.layers, a.heads)
    else:
        model = Recurrent(a.arch, a.vocab, a.d, a.layers)
    if a.eval_examples > 0:
        return evaluate(model, a)
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    gen = torch.Generator().manual_seed(1)
    times, loss = [], float("nan")
    for s in range(a.warmup + a.steps):
        tokens = torch.randint(0, a.vocab, (a.batch, a.T), generator=gen)
        targets = torch.cat([tokens[:, :1], tokens[:, :-1]], dim=1)  # copy the previous token
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(tokens)
        l = F.cross_entropy(logits.view(-1, a.vocab), targets.view(-1))
        l.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        t1 = time.perf_counter()
        loss = l.item()
        if s >= a.warmup:
            times.append(t1 - t0)
    times.sort()
    med = times[len(times) // 2]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    params = sum(p.numel() for p in model.parameters())
    print(f"tok_s={a.batch * a.T / med:.1f} step_ms={med * 1e3:.3f} loss={loss:.6f} maxrss_kb={rss} params={params}")


if __name__ == "__main__":
    main()
