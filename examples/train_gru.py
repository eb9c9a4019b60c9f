#!/usr/bin/python3
# %% [markdown]
# # srbench from Python: a PyTorch GRU under srbench's protocol
#
# This tutorial trains a small PyTorch GRU on exactly the batches srbench's own trainer draws
# for the flip-flop task of `examples/tutorial.yaml`, evaluates it with the harness's evaluation
# sets and metrics (longer inputs, shifted write probabilities), writes it as a run beside the
# suite's built-in transformers, and merges, reports and plots them together. About half a
# minute on 2 cores.
#
# `examples/train_gru.py` is the same tutorial as a script (`/usr/bin/python3
# examples/train_gru.py`); the notebook `examples/tutorial.ipynb` is made from it by
# `examples/make_notebook.py`. Results go to `results/tutorial.h5` (or `$SRBENCH_TUTORIAL_OUT`).

# %%
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

# The repository: this folder or one above it (the notebook runs in examples/).
ROOT = Path(os.environ.get("SRBENCH_ROOT") or Path.cwd()).resolve()
while not (ROOT / "examples" / "tutorial.yaml").exists() and ROOT != ROOT.parent:
    ROOT = ROOT.parent
try:
    import srbench
except ImportError:  # not installed: the build's copy
    sys.path.insert(0, str(ROOT / "build" / "python"))
    import srbench
SRBENCH = ROOT / "build" / "harness" / "srbench"
OUT = Path(os.environ.get("SRBENCH_TUTORIAL_OUT") or ROOT / "results")
OUT.mkdir(parents=True, exist_ok=True)
SUITE_FILE = OUT / "tutorial.h5"
torch.set_num_threads(1)
print("srbench", srbench.__version__, "· results in", SUITE_FILE)

# %% [markdown]
# ## A task as NumPy arrays
# `Task(name, **params)` takes the parameters `srbench sample --set` takes; `sample` gives the
# examples `srbench sample` prints, as int32 arrays (targets −1 where nothing is scored).

# %%
task = srbench.Task("flipflop")
b = task.sample(n=8, count=2, seed=0)
print(task.vocab)
for i in range(2):
    print(" ".join(task.vocab[t] for t in b.tokens[i]), " → ",
          " ".join(task.vocab[t] if t >= 0 else "·" for t in b.targets[i]))

# %% [markdown]
# ## The suite and its built-in runs
# `srbench sweep` trains the suite's two transformers (learned positions and ALiBi, two seeds).

# %%
suite = srbench.load_suite(ROOT / "examples" / "tutorial.yaml")
for run in suite.runs:
    print(run)
subprocess.run([str(SRBENCH), "sweep", str(ROOT / "examples" / "tutorial.yaml"), "--out", str(SUITE_FILE),
                "--jobs", "2"], check=True)

# %% [markdown]
# ## A GRU in PyTorch
# Trained on `suite.training_stream(entry, seed)`: the batches, in order, that the built-in
# trainer draws for that entry and seed (right-padded with token 0; targets −1 are not scored).


# %%
class GRU(torch.nn.Module):
    def __init__(self, vocab, hidden=64):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.gru = torch.nn.GRU(hidden, hidden, batch_first=True)
        self.out = torch.nn.Linear(hidden, vocab)

    def forward(self, tokens):  # [B, T] -> logits [B, T, V]
        h, _ = self.gru(self.embed(tokens))
        return self.out(h)


def train(suite, entry, seed, vocab):
    """Trains a GRU on the run's stream; returns it, its curve and its training tokens/s."""
    torch.manual_seed(seed)
    model = GRU(vocab)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    cfg = [r for r in suite.runs if r.entry == entry and r.seed == seed][0].config
    val = srbench.Task(cfg["task"], **(cfg["params"] or {})).sample(
        n=cfg["train"]["length"][1], count=128, seed=cfg["train"]["data_seed"], stream="eval", index=10**6)
    curve, losses, tokens, seconds = [], [], 0, 0.0
    for step, batch in enumerate(suite.training_stream(entry=entry, seed=seed), start=1):
        t0 = time.perf_counter()
        logits = model(torch.from_numpy(batch.tokens).long())
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab),
                                                 torch.from_numpy(batch.targets).long().reshape(-1), ignore_index=-1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        seconds += time.perf_counter() - t0
        tokens += int(batch.lengths.sum())
        losses.append(loss.item())
        if step % cfg["train"]["eval_every"] == 0 or step == cfg["train"]["steps"]:
            with torch.no_grad():  # the example's own validation: 128 eval-stream examples
                pred = model(torch.from_numpy(val.tokens).long()).argmax(-1).numpy()
            scored = val.targets >= 0
            val_acc = float(np.mean([(pred[i] == val.targets[i])[scored[i]].all() for i in range(len(pred))]))
            curve.append((step, float(np.mean(losses)), val_acc))
            losses = []
    return model, curve, tokens / seconds


# %% [markdown]
# ## Evaluation under the harness's protocol, and a run file beside the built-in ones
# `evaluate` calls `predict(tokens)` on every evaluation set of the entry (every length of
# condition `id`, each shift at the training lengths) and computes the harness's metrics;
# `write` puts the run into `<results>/tutorial/runs/`, where `srbench merge` finds it.

# %%
vocab = len(task.vocab)
for seed in suite.seeds:
    model, curve, tokens_per_s = train(suite, "flipflop", seed, vocab)
    model.eval()

    def predict(tokens):
        with torch.no_grad():
            return model(torch.from_numpy(tokens).long())  # logits [B, T, V]

    res = suite.evaluate(predict, entry="flipflop", seed=seed, model="gru", model_config={"hidden": 64})
    for step, train_loss, val_acc in curve:
        res.add_curve(step, train_loss, val_acc)
    res.tokens_per_s = tokens_per_s
    print(f"seed {seed}:", {k: round(v, 3) for k, v in res.metrics.items()})
    print(res.rows.to_string(index=False))
    print("wrote", res.write(suite, out=SUITE_FILE))

# %% [markdown]
# ## Merged, reported and plotted beside the built-in models

# %%
subprocess.run([str(SRBENCH), "merge", str(OUT / "tutorial"), "--out", str(SUITE_FILE)], check=True)
print(subprocess.run([str(SRBENCH), "report", str(SUITE_FILE)], check=True, capture_output=True,
                     text=True).stdout)

# %%
r = srbench.read_results(SUITE_FILE)
print(r.summary.groupby("model")[["id_acc", "ood_length_acc", "shift_acc", "shortcut_gap"]].mean())
ids = r.summary.set_index("run_id")
acc = r.evals[r.evals.condition == "id"].assign(model=lambda d: ids.loc[d.run_id, "model"].values)
print(acc.pivot_table(index="length", columns="model", values="seq_acc"))

# %%
figures = OUT / "tutorial-figures"
subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "plot_results.py"), str(SUITE_FILE), "--out",
                str(figures)], check=True, capture_output=True)
print("figures:", sorted(p.name for p in figures.glob("*.png")))
try:  # in a notebook, show one
    from IPython.display import Image, display
    if "ipykernel" in sys.modules:
        display(Image(filename=str(figures / "acc_vs_length_flipflop.png")))
except ImportError:
    pass
