"""The references of srbench's recurrent models (recurrent.md), in float64 PyTorch:

- rnn, lstm, gru: the real torch.nn.RNN / LSTM / GRU(d, d, num_layers=L, batch_first=True),
  torch.nn.Embedding and torch.nn.Linear, loaded from a checkpoint by recurrent.md's name map
  (rnn.{l}.W is W_l{l}; tok_emb is the embedding's weight; head.* the Linear's);
- stack_rnn, tape_rnn: an independent implementation of recurrent.md's equations with tensors of
  the whole batch per step (the stack as NNCH's _update_stack writes it, by concatenation; the
  tape's moves by torch.roll), differentiated by autograd.

Every function takes the checkpoint's config (dict) and parameters ({name: float64 tensor}).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

GATED = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
TORCH_NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def torch_modules(cfg, params):
    """(embedding, recurrent module, head) of a rnn / lstm / gru checkpoint, weights copied in by
    the name map; every checkpoint tensor must be used exactly once."""
    V, d, L = cfg["vocab"], cfg["d_model"], cfg["layers"]
    kwargs = {"nonlinearity": cfg.get("nonlinearity", "tanh")} if cfg["arch"] == "rnn" else {}
    rnn = GATED[cfg["arch"]](d, d, num_layers=L, batch_first=True, **kwargs).double()
    emb, head = nn.Embedding(V, d).double(), nn.Linear(d, V).double()
    used = set()
    with torch.no_grad():
        for name, p in named_parameters(emb, rnn, head).items():
            if tuple(p.shape) != tuple(params[name].shape):
                raise ValueError(f"{name}: checkpoint shape {tuple(params[name].shape)}, torch {tuple(p.shape)}")
            p.copy_(params[name])
            used.add(name)
    if used != set(params):
        raise ValueError(f"checkpoint tensors not in the name map: {sorted(set(params) - used)}")
    return emb, rnn, head


def named_parameters(emb, rnn, head):
    """The torch modules' parameters by their checkpoint names (recurrent.md's name map)."""
    out = {"tok_emb": emb.weight, "head.weight": head.weight, "head.bias": head.bias}
    for l in range(rnn.num_layers):
        for w in TORCH_NAMES:
            out[f"rnn.{l}.{w}"] = getattr(rnn, f"{w}_l{l}")
    return out


def controller(x, read, h, p, pre):
    """Haiku's VanillaRNN on u = [x ; read]: relu(W_ih u + b_ih + W_hh h + b_hh)."""
    u = torch.cat([x, read], dim=1)
    return torch.relu(u @ p[pre + "weight_ih"].T + p[pre + "bias_ih"] + h @ p[pre + "weight_hh"].T + p[pre + "bias_hh"])


def stack_layer(x, p, l, n, c):
    """One Stack-RNN layer over x [B,T,d]: its outputs h [B,T,d]."""
    B, T, d = x.shape
    pre = f"rnn.{l}."
    h, S, outs = x.new_zeros(B, d), x.new_zeros(B, n, c), []
    for t in range(T):
        h = controller(x[:, t], S[:, 0], h, p, pre)
        push_value = h @ p[pre + "stack.push.weight"].T + p[pre + "stack.push.bias"]
        a = torch.softmax(h @ p[pre + "stack.action.weight"].T + p[pre + "stack.action.bias"], dim=-1)
        pushed = torch.cat([push_value[:, None], S[:, :-1]], dim=1)   # the bottom falls off
        popped = torch.cat([S[:, 1:], S.new_zeros(B, 1, c)], dim=1)   # 0 enters the bottom
        S = a[:, 0, None, None] * pushed + a[:, 1, None, None] * popped + a[:, 2, None, None] * S
        outs.append(h)
    return torch.stack(outs, dim=1)


def tape_layer(x, p, l, n, c, lengths):
    """One Tape-RNN layer over x [B,T,d], lengths [B] the jumps L: its outputs h [B,T,d]."""
    B, T, d = x.shape
    pre = f"rnn.{l}.tape."
    h, M, outs = x.new_zeros(B, d), x.new_zeros(B, n, c), []

    def by_example(Mp, sign):  # row m takes row (m + sign·L_b) mod n
        return torch.stack([torch.roll(Mp[b], -sign * int(lengths[b]), dims=0) for b in range(B)])

    for t in range(T):
        h = controller(x[:, t], M[:, 0], h, p, f"rnn.{l}.")
        z1 = torch.relu(h @ p[pre + "write1.weight"].T + p[pre + "write1.bias"])
        z2 = torch.relu(z1 @ p[pre + "write2.weight"].T + p[pre + "write2.bias"])
        w = z2 @ p[pre + "write3.weight"].T + p[pre + "write3.bias"]
        pi = torch.softmax(h @ p[pre + "action.weight"].T + p[pre + "action.bias"], dim=-1)
        Mp = torch.cat([w[:, None], M[:, 1:]], dim=1)  # the write replaces row 0
        moves = [Mp, torch.roll(Mp, -1, dims=1), torch.roll(Mp, 1, dims=1), by_example(Mp, 1), by_example(Mp, -1)]
        M = sum(pi[:, a, None, None] * moves[a] for a in range(5))
        outs.append(h)
    return torch.stack(outs, dim=1)


def memory_forward(cfg, params, tokens, input_lengths):
    """logits [B,T,V] of a stack_rnn / tape_rnn checkpoint (params: leaves requiring grad)."""
    B, T = tokens.shape
    x = params["tok_emb"][tokens]
    lengths = input_lengths if input_lengths is not None else torch.full((B,), T)
    for l in range(cfg["layers"]):
        if cfg["arch"] == "stack_rnn":
            x = stack_layer(x, params, l, cfg.get("stack_size", 30), cfg.get("stack_cell_size", 8))
        else:
            x = tape_layer(x, params, l, cfg.get("tape_size", 40), cfg.get("tape_cell_size", 8), lengths)
    return x @ params["head.weight"].T + params["head.bias"]


def make_loss(cfg, params, tokens, targets, input_lengths=None):
    """(leaves by checkpoint name, loss_fn): loss_fn() gives (logits [B,T,V], loss), the loss the
    mean cross-entropy over the targets >= 0, computed from the leaves (the torch modules' own
    parameters for rnn / lstm / gru), so that an optimiser can step them."""
    if cfg["arch"] in GATED:
        emb, rnn, head = torch_modules(cfg, params)
        leaves = named_parameters(emb, rnn, head)

        def logits_fn():
            return head(rnn(emb(tokens))[0])
    else:
        leaves = {n: t.clone().requires_grad_(True) for n, t in params.items()}

        def logits_fn():
            return memory_forward(cfg, leaves, tokens, input_lengths)

    def loss_fn():
        logits = logits_fn()
        return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)

    return leaves, loss_fn


def forward_backward(cfg, params, tokens, targets, input_lengths=None):
    """(logits, loss, {name: gradient}) in float64."""
    leaves, loss_fn = make_loss(cfg, params, tokens, targets, input_lengths)
    logits, loss = loss_fn()
    loss.backward()
    return logits.detach(), loss.detach(), {n: p.grad.detach().clone() for n, p in leaves.items()}
