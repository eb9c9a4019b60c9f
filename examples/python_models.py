"""Two PyTorch models for a suite's `arch: python` entries (examples/python-models.yaml,
docs/python.md "Python models in a suite"). A factory is called as
factory(vocab_size, max_len, **kwargs) — with device=... when it takes a `device` parameter — and
returns a torch.nn.Module whose forward maps int64 tokens [B, T] to logits [B, T, vocab_size].
"""
import torch
from torch import nn


class GRUModel(nn.Module):
    """Embedding, a GRU, a linear read-out: causal by construction."""

    def __init__(self, vocab_size, hidden, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, tokens):
        h, _ = self.gru(self.embed(tokens))
        return self.out(h)


def make_gru(vocab_size, max_len, hidden=64, layers=1):
    return GRUModel(vocab_size, hidden, layers)


class CausalTransformer(nn.Module):
    """Learned absolute positions and a causal nn.TransformerEncoder (pre-norm)."""

    def __init__(self, vocab_size, max_len, d_model, heads, layers, device):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab_size)
        self.to(device)

    def forward(self, tokens):
        T = tokens.shape[1]
        x = self.embed(tokens) + self.pos(torch.arange(T, device=tokens.device))
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=tokens.device)
        return self.out(self.norm(self.encoder(x, mask=mask)))


def make_transformer(vocab_size, max_len, d_model=64, heads=4, layers=2, device="cpu"):
    return CausalTransformer(vocab_size, max_len, d_model, heads, layers, device)
