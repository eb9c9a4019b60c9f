#!/usr/bin/python3
"""Python models declared in a suite (arch: python; docs/python.md "Python models in a suite"),
end to end through `srbench sweep`, against independent computations:

- A suite of a PyTorch GRU, a causal nn.TransformerEncoder, a factory with its own optimiser and
  srbench's lstm, plus four broken models (a module that does not import, a factory that
  raises, a forward of the wrong shape, a model whose loss is NaN): the sweep finishes every
  run, records the broken ones failed/diverged with messages naming what failed and where, and
  exits 3.
- The GRU's run file equals, number for number, a training written here in plain PyTorch on
  the stream `training_stream(run=...)` gives (AdamW with the suite's betas/eps, weight decay
  on tensors of 2+ dimensions, the schedule computed here from model.md's formula, clipping at
  train.clip), evaluated with Suite.evaluate; the own-optimiser run likewise with its SGD.
- Same numbers twice (a second sweep into another folder), and after SIGKILL of the sweep
  mid-run: no Python process left, the re-run skips the finished runs and ends with the same
  numbers; `srbench merge` and `srbench report` show the Python models.
- Run ids: the resolved config's `source` is FNV-1a (computed here) of the module file; editing
  the file or a kwarg gives new ids, nothing else changes them.
- `--dry-run` imports and builds each model: a broken one is a config error at its `module:`
  line (exit 2); bad keys are refused with file:line.
- Suite.train(run) in this process gives the sweep's numbers; its progress line counts steps.

  PYTHONPATH=build/python /usr/bin/python3 tests/python/test_python_models.py --srbench build/harness/srbench
"""
import argparse
import io
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import srbench
from checks import check, finish, raises

MODELS = '''\
import torch
from torch import nn


class GRUModel(nn.Module):
    def __init__(self, vocab_size, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, tokens):
        h, _ = self.gru(self.embed(tokens))
        return self.out(h)


def make_gru(vocab_size, max_len, hidden=16):
    return GRUModel(vocab_size, hidden)


def make_gru_sgd(vocab_size, max_len, hidden=16):
    m = GRUModel(vocab_size, hidden)
    return m, torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)


class Causal(nn.Module):
    def __init__(self, vocab_size, max_len, d, device):
        super().__init__()
        assert device == "cpu", device
        self.embed = nn.Embedding(vocab_size, d)
        self.pos = nn.Embedding(max_len, d)
        layer = nn.TransformerEncoderLayer(d, 2, dim_feedforward=2 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 1)
        self.out = nn.Linear(d, vocab_size)

    def forward(self, tokens):
        T = tokens.shape[1]
        x = self.embed(tokens) + self.pos(torch.arange(T))
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        return self.out(self.enc(x, mask=mask))


def make_transformer(vocab_size, max_len, d=16, device="cpu"):
    return Causal(vocab_size, max_len, d, device)


def make_broken(vocab_size, max_len):
    raise RuntimeError("boom")


class Wrong(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Linear(4, 4)

    def forward(self, tokens):
        return self.w(torch.zeros(tokens.shape[0], tokens.shape[1], 4))


def make_wrong(vocab_size, max_len):
    return Wrong()


class NaN(GRUModel):
    def forward(self, tokens):
        return super().forward(tokens) * float("nan")


def make_nan(vocab_size, max_len):
    return NaN(vocab_size, 8)
'''

GOOD = """\
  - name: torch-gru
    model: {arch: python, module: "mymodels:make_gru", kwargs: {hidden: 16}}
    train: {save_checkpoint: true}
  - name: torch-sgd
    model: {arch: python, module: "mymodels:make_gru_sgd"}
  - name: torch-transformer
    model: {arch: python, module: "mymodels:make_transformer", kwargs: {d: 16}}
  - name: lstm
    model: {arch: lstm, d_model: 16}
"""
EXPECT = """\
expect:
  - {entry: flipflop, model: torch-gru, metric: seq_acc, length: 8, at_least: 0.0, source: "test"}
"""
BROKEN = """\
  - name: no-module
    model: {arch: python, module: "nosuch_module_xyz:make"}
  - name: raises
    model: {arch: python, module: "mymodels:make_broken"}
  - name: wrong-shape
    model: {arch: python, module: "mymodels:make_wrong"}
  - name: nan
    model: {arch: python, module: "mymodels:make_nan"}
"""


def suite_text(name, models, steps=40, expect=""):
    return f"""\
name: {name}
seeds: [0, 1]
defaults:
  model: {{max_len: 32}}
  train: {{steps: {steps}, batch: 8, lr: 1e-2, warmup: 5, eval_every: 10, clip: 0.5, weight_decay: 0.1}}
  eval: {{examples: 32, val_examples: 16}}
tasks:
  - task: flipflop
    train: {{length: [2, 8]}}
    eval:
      lengths: [8, 16]
      shifts: [{{p_write: 0.1}}]
models:
{models}{expect}"""


def scheduled_lr(lr, s, warmup, steps):
    """model.md: linear warm-up, then cosine to 0.1·lr."""
    if s < warmup:
        return lr * (s + 1) / warmup
    lo = 0.1 * lr
    frac = min(1.0, (s - warmup) / (steps - warmup))
    return lo + (lr - lo) * 0.5 * (1 + math.cos(math.pi * frac))


def model_line(text, needle):
    """The 1-based line of `text` holding `needle`."""
    return next(i + 1 for i, line in enumerate(text.splitlines()) if needle in line)


def fnv12(text):
    h = 0xcbf29ce484222325
    for c in text.encode():
        h = ((h ^ c) * 0x100000001b3) % 2**64
    return f"{h:016x}"[:12]


def train_here(suite, run, factory, own_optimiser):
    """The run trained in plain PyTorch on its stream, as docs/python.md says the sweep trains it;
    returns (curve rows [(step, train_loss, lr, grad_norm)], evaluation Result)."""
    c = run.config
    t = c["train"]
    torch.manual_seed(run.seed)
    out = factory(c["model"]["vocab"], c["model"]["max_len"], **c["model"]["kwargs"])
    if own_optimiser:
        model, opt = out
        initial = [g["lr"] for g in opt.param_groups]
    else:
        model = out
        ps = list(model.parameters())
        opt = torch.optim.AdamW([{"params": [p for p in ps if p.dim() >= 2], "weight_decay": t["weight_decay"]},
                                 {"params": [p for p in ps if p.dim() < 2], "weight_decay": 0.0}],
                                lr=t["lr"], betas=(0.9, 0.98), eps=1e-9)
    V = c["model"]["vocab"]
    curve, losses = [], []
    for s, b in enumerate(suite.training_stream(run=run.id)):
        lr = scheduled_lr(t["lr"], s, t["warmup"], t["steps"])
        for i, g in enumerate(opt.param_groups):
            g["lr"] = initial[i] * (lr / t["lr"]) if own_optimiser else lr
        model.train()
        opt.zero_grad()
        logits = model(torch.from_numpy(b.tokens).long())
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), torch.from_numpy(b.targets).long().reshape(-1),
                                                 ignore_index=-1)
        loss.backward()
        norm = float(torch.nn.utils.clip_grad_norm_(list(model.parameters()), t["clip"]))
        opt.step()
        losses.append(float(loss))
        if (s + 1) % t["eval_every"] == 0:
            curve.append((s + 1, sum(losses) / len(losses), lr, norm))
            losses = []

    def predict(tokens):
        with torch.no_grad():
            model.eval()
            return model(torch.from_numpy(tokens).long()).numpy()
    return curve, suite.evaluate(predict, run=run.id, model="here")


def sweep(binary, suite_path, out, cwd, *extra):
    return subprocess.run([binary, "sweep", suite_path, "--out", out, "--jobs", "2", *extra], cwd=cwd,
                          capture_output=True, text=True)


def run_numbers(path):
    """{run_id: (status, message, eval rows, curve rows)} of a suite file."""
    import h5py
    r = srbench.read_results(path)
    out = {}
    with h5py.File(path, "r") as f:
        messages = {rid: f["runs"][rid].attrs["message"] for rid in f["runs"]}
    for _, row in r.summary.iterrows():
        rid = row.run_id
        row = row.copy()
        row["message"] = messages[rid].decode() if isinstance(messages[rid], bytes) else str(messages[rid])
        ev = r.evals[r.evals.run_id == rid][["length", "condition", "loss", "token_acc", "seq_acc", "seen_frac"]]
        cu = r.curves[r.curves.run_id == rid][["step", "train_loss", "val_acc", "lr", "grad_norm"]]
        out[rid] = (row.status, row.message, ev.to_numpy().tolist(), cu.to_numpy().tolist())
    return out


def run_numbers_file(path):
    """(status, message) of one run file."""
    import h5py
    with h5py.File(path, "r") as f:
        g = f["runs"][list(f["runs"])[0]] if "runs" in f else f["run"]
        return tuple(v.decode() if isinstance(v, bytes) else str(v) for v in (g.attrs["status"], g.attrs["message"]))


def same(a, b):
    """Equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def python_processes(marker):
    """pids of live processes whose command line contains `marker`."""
    pids = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        pids.append(int(p))
            except OSError:
                pass
    return pids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    binary = os.path.abspath(ap.parse_args().srbench)
    tmp = tempfile.mkdtemp(prefix="srbench-pymodels-")
    with open(os.path.join(tmp, "mymodels.py"), "w") as f:
        f.write(MODELS)
    os.chdir(tmp)  # the modules import from the current folder, in the sweep and here
    sys.path.insert(0, tmp)
    import mymodels

    # ---- the sweep: good and broken models, failures recorded, exit code 3
    full = os.path.join(tmp, "pymodels.yaml")
    with open(full, "w") as f:
        f.write(suite_text("pymodels", GOOD + BROKEN))
    p = sweep(binary, full, os.path.join(tmp, "a", "pymodels.h5"), tmp)
    check(p.returncode == 3, f"sweep with failing models: exit {p.returncode}, expected 3\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    a = run_numbers(os.path.join(tmp, "a", "pymodels.h5"))
    suite = srbench.load_suite(full)
    by_model = {}
    for run in suite.runs:
        by_model.setdefault(run.model, []).append(run)
    check(len(a) == len(suite.runs) == 16, f"{len(a)} runs in the suite file, {len(suite.runs)} in the suite; expected 16")
    expect_failures = {
        "no-module": ("failed", "cannot import 'nosuch_module_xyz': ModuleNotFoundError"),
        "raises": ("failed", "factory 'mymodels:make_broken' raised RuntimeError: boom (at mymodels.py:"),
        "wrong-shape": ("failed", "forward returned logits of shape (8,"),
        "nan": ("diverged", "non-finite loss or gradient at step 0"),
    }
    for name, (status, needle) in expect_failures.items():
        for run in by_model[name]:
            got = a.get(run.id, ("missing", "", [], []))
            check(got[0] == status and needle in got[1], f"{name} seed {run.seed}: {got[0]} '{got[1]}', expected {status} with '{needle}'")
    for name in ("torch-gru", "torch-sgd", "torch-transformer", "lstm"):
        for run in by_model[name]:
            check(a[run.id][0] == "ok", f"{name} seed {run.seed}: status {a[run.id][0]} ({a[run.id][1]})")
    gru = by_model["torch-gru"][1]
    ids = srbench.read_results(os.path.join(tmp, "a", "pymodels.h5"))
    check(ids.summary.set_index("run_id").loc[gru.id, "tokens_per_s"] > 0, "the GRU run has no tokens_per_s")
    seen = ids.evals[(ids.evals.run_id == gru.id) & (ids.evals.length == 8)].seen_frac
    check(len(seen) > 0 and all(0 <= v <= 1 for v in seen), f"seen_frac of the GRU run: {list(seen)}")

    # ---- the GRU and the own-optimiser run against a training written here
    for name, factory, own in (("torch-gru", mymodels.make_gru, False), ("torch-sgd", mymodels.make_gru_sgd, True)):
        run = by_model[name][1]
        curve, res = train_here(suite, run, factory, own)
        got = a[run.id]
        check(len(got[3]) == len(curve) == 4, f"{name}: {len(got[3])} curve points, {len(curve)} here")
        for (step, loss, lr, norm), row in zip(curve, got[3]):  # the same operations: the same floats
            check(row[0] == step and row[1] == loss and row[3] == lr and row[4] == norm,
                  f"{name} step {step}: file (loss {row[1]}, lr {row[3]}, norm {row[4]}), here ({loss}, {lr}, {norm})")
        here_rows = res.rows[["length", "condition", "loss", "token_acc", "seq_acc"]].to_numpy().tolist()
        file_rows = [r[:5] for r in got[2]]
        check(len(here_rows) == len(file_rows) == 3, f"{name}: {len(file_rows)} evaluation rows, {len(here_rows)} here")
        for h, r in zip(here_rows, file_rows):
            check(same(h, r), f"{name}: row here {h}, in the file {r}")

    # ---- same numbers twice; SIGKILL and resume
    good = os.path.join(tmp, "good.yaml")
    with open(good, "w") as f:
        f.write(suite_text("good", GOOD, steps=200, expect=EXPECT))
    p = sweep(binary, good, os.path.join(tmp, "b", "good.h5"), tmp)
    check(p.returncode == 0, f"sweep of the good models: exit {p.returncode}\n{p.stderr[-2000:]}")
    b = run_numbers(os.path.join(tmp, "b", "good.h5"))
    out_c = os.path.join(tmp, "c", "good.h5")
    runs_dir = os.path.join(tmp, "c", "good", "runs")

    def finished():
        return sorted(n for n in os.listdir(runs_dir) if n.endswith(".h5")) if os.path.isdir(runs_dir) else []

    def start_and_wait(done_at_least):
        """A sweep of `good` into c/, once `done_at_least` runs are written and a Python model trains."""
        proc = subprocess.Popen([binary, "sweep", good, "--out", out_c, "--jobs", "2"], cwd=tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 120
        while time.time() < deadline and not (len(finished()) >= done_at_least and python_processes(runs_dir)):
            time.sleep(0.05)
        check(bool(python_processes(runs_dir)), "no Python model was training when the sweep was stopped")
        return proc

    # SIGTERM (Slurm's preemption, scancel): the sweep stops, exits 143, the runs in progress leave nothing
    proc = start_and_wait(0)
    before_term = finished()
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    check(proc.returncode == 143 and "interrupted by SIGTERM" in out, f"SIGTERM: exit {proc.returncode}\n{out[-1500:]}")
    time.sleep(0.5)
    check(not python_processes(runs_dir), f"Python processes outlived the stopped sweep: {python_processes(runs_dir)}")
    after_term = finished()
    c_mid = {n: run_numbers_file(os.path.join(runs_dir, n)) for n in after_term}
    check(all(v[0] == "ok" for v in c_mid.values()), f"a run recorded as other than ok after SIGTERM: {c_mid}")
    check(set(before_term) <= set(after_term), "a finished run file went missing after SIGTERM")
    # SIGKILL of the sweep alone: its workers and their Python processes die with it
    proc = start_and_wait(len(after_term) + 1)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    time.sleep(1.0)
    check(not python_processes(runs_dir), f"Python processes outlived the killed sweep: {python_processes(runs_dir)}")
    before = len([n for n in os.listdir(runs_dir) if n.endswith(".h5")])
    p = sweep(binary, good, out_c, tmp)
    check(p.returncode == 0, f"resumed sweep: exit {p.returncode}\n{p.stderr[-2000:]}")
    check(f"{before} already finished" in p.stdout, f"the resumed sweep does not skip the {before} finished runs:\n{p.stdout[:500]}")
    c = run_numbers(out_c)
    check(set(b) == set(c) and len(b) == 8, f"run ids: {sorted(b)} vs {sorted(c)}")
    for rid in b:
        check(same(b[rid], c.get(rid)), f"run {rid}: numbers differ between the sweep and the killed-and-resumed one")
    d_out = os.path.join(tmp, "d", "good.h5")  # a second sweep, in two shards
    for shard in ("0/2", "1/2"):
        p = sweep(binary, good, d_out, tmp, "--shard", shard)
        check(p.returncode == 0, f"shard {shard}: exit {p.returncode}\n{p.stderr[-2000:]}")
    p = subprocess.run([binary, "merge", os.path.join(tmp, "d", "good"), "--out", d_out], cwd=tmp, capture_output=True,
                       text=True)
    d = run_numbers(d_out)
    for rid in b:
        check(same(b[rid], d.get(rid)), f"run {rid}: numbers differ between two sweeps (the second in two shards)")
    # train.save_checkpoint: the GRU's state_dict beside its run file, the model the run evaluated
    gsuite0 = srbench.load_suite(good)
    grun0 = next(r for r in gsuite0.runs if r.model == "torch-gru" and r.seed == 1)
    pt = os.path.join(tmp, "b", "good", "runs", grun0.id + ".pt")
    check(os.path.exists(pt), f"no checkpoint {pt} for the GRU (train.save_checkpoint: true)")
    if os.path.exists(pt):
        m = mymodels.make_gru(grun0.config["model"]["vocab"], 32, hidden=16)
        m.load_state_dict(torch.load(pt))
        m.eval()

        def loaded(tokens):
            with torch.no_grad():
                return m(torch.from_numpy(tokens).long()).numpy()
        again = gsuite0.evaluate(loaded, run=grun0.id, model="loaded").rows[["seq_acc"]].to_numpy().ravel().tolist()
        check(again == [r[4] for r in b[grun0.id][2]], f"the checkpoint's model scores {again}, the run {b[grun0.id][2]}")
    check(not [n for n in os.listdir(os.path.join(tmp, "b", "good", "runs")) if n.endswith(".pt") and
               not n.startswith(tuple(r.id for r in gsuite0.runs if r.model == "torch-gru"))],
          "checkpoints of runs without save_checkpoint")
    # merge from a folder where the module is not found: a warning saying why ids do not match
    elsewhere = tempfile.mkdtemp(prefix="srbench-pymodels-elsewhere-")
    p = subprocess.run([binary, "merge", os.path.join(tmp, "b", "good"), "--out", os.path.join(elsewhere, "m.h5")],
                       cwd=elsewhere, capture_output=True, text=True)
    check(p.returncode == 0 and "finds no module for 'mymodels:make_gru' from this folder" in p.stderr,
          f"merge from another folder: exit {p.returncode}, stderr {p.stderr!r}")
    shutil.rmtree(elsewhere, ignore_errors=True)
    # the suite's claims about its Python models: report --check reads their runs
    p = subprocess.run([binary, "report", d_out, "--check"], cwd=tmp, capture_output=True, text=True)
    good_gru = {r.id for r in srbench.load_suite(good).runs if r.model == "torch-gru"}
    gru_id = float(np.mean([v[2][0][4] for k, v in b.items() if k in good_gru]))
    check(p.returncode == 0 and "torch-gru" in p.stdout and f"{gru_id:.3f}" in p.stdout,
          f"report --check on the Python models (GRU's mean seq_acc at 8: {gru_id:.3f}): exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    # merge and report
    p = subprocess.run([binary, "merge", os.path.join(tmp, "c", "good"), "--out", os.path.join(tmp, "merged.h5")],
                       cwd=tmp, capture_output=True, text=True)
    check(p.returncode == 0, f"merge: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    p = subprocess.run([binary, "report", os.path.join(tmp, "merged.h5"), "--compact"], cwd=tmp, capture_output=True,
                       text=True)
    for name in ("torch-gru", "torch-sgd", "torch-transformer", "lstm"):
        check(any(name in line and "python" in line for line in p.stdout.splitlines()) or name == "lstm",
              f"report --compact has no line for {name} (arch python):\n{p.stdout}")

    # ---- Suite.train in this process: the sweep's numbers; its progress, plain and through tqdm
    gsuite = srbench.load_suite(good)
    grun = next(r for r in gsuite.runs if r.model == "torch-gru" and r.seed == 0)
    err, old = io.StringIO(), sys.stderr
    sys.stderr = err
    try:
        res = gsuite.train(grun.id, threads=1, progress=True)
    finally:
        sys.stderr = old
    check(f"train {grun.id}: 200/200 steps" in err.getvalue(), f"progress line: {err.getvalue()[-200:]!r}")
    check(res.status == "ok", f"Suite.train: {res.status} {res.message}")
    rows = res.rows[["length", "condition", "loss", "token_acc", "seq_acc"]].to_numpy().tolist()
    check(same(rows, [r[:5] for r in b[grun.id][2]]), f"Suite.train's rows {rows} differ from the sweep's {b[grun.id][2]}")
    bars = []

    class FakeTqdm:  # tqdm's interface as srbench.progress uses it: total, update(n), close()
        def __init__(self, desc, unit, file, leave):
            self.desc, self.unit, self.total, self.n, self.closed = desc, unit, None, 0, False
            bars.append(self)

        def update(self, n):
            self.n += n

        def close(self):
            self.closed = True
    sys.modules["tqdm"] = type(sys)("tqdm")
    sys.modules["tqdm"].tqdm = FakeTqdm
    try:
        res = gsuite.train(grun.id, threads=1, progress=True)
        res.wall_s  # noqa: B018
        gsuite.evaluate(lambda x: np.zeros(x.shape, dtype=np.int32), run=grun.id, model="zeros", progress=True)
    finally:
        del sys.modules["tqdm"]
    check([(b.desc, b.unit, b.total, b.n, b.closed) for b in bars] ==
          [(f"train {grun.id}", "steps", 200, 200, True), ("evaluate zeros", "rows", 3, 3, True)],
          f"tqdm bars: {[(b.desc, b.unit, b.total, b.n, b.closed) for b in bars]}")

    # ---- run ids: the module file's hash, kwargs; nothing else
    cfg = grun.config["model"]
    with open(os.path.join(tmp, "mymodels.py")) as f:
        text = f.read()
    check(cfg["source"] == fnv12(text), f"source {cfg['source']}, FNV-1a of mymodels.py {fnv12(text)}")
    check(cfg == {"arch": "python", "vocab": len(srbench.Task("flipflop").vocab), "max_len": 32,
                  "module": "mymodels:make_gru", "kwargs": {"hidden": 16}, "device": "cpu", "source": cfg["source"]},
          f"the GRU's resolved model section: {cfg}")
    ids_before = [r.id for r in srbench.load_suite(good).runs]
    check(ids_before == [r.id for r in gsuite.runs], "ids changed with nothing changed")
    with open(os.path.join(tmp, "mymodels.py"), "a") as f:
        f.write("# edited\n")
    ids_after = [r.id for r in srbench.load_suite(good).runs]
    changed = [r.model for r, i in zip(gsuite.runs, ids_after) if r.id != i]
    check(sorted(set(changed)) == ["torch-gru", "torch-sgd", "torch-transformer"],
          f"editing mymodels.py changed the ids of {sorted(set(changed))}")
    with open(good) as f:
        g2 = f.read().replace("kwargs: {hidden: 16}", "kwargs: {hidden: 17}")
    with open(os.path.join(tmp, "good2.yaml"), "w") as f:
        f.write(g2)
    ids_k = {r.model: r.id for r in srbench.load_suite(os.path.join(tmp, "good2.yaml")).runs if r.seed == 0}
    now = {r.model: r.id for r in srbench.load_suite(good).runs if r.seed == 0}
    check(ids_k["torch-gru"] != now["torch-gru"] and ids_k["lstm"] == now["lstm"] and
          ids_k["torch-transformer"] == now["torch-transformer"], f"kwargs change: {ids_k} vs {now}")

    # ---- --dry-run: each model imported and built; a broken one is a config error at its line
    p = sweep(binary, full, os.path.join(tmp, "e", "pymodels.h5"), tmp, "--dry-run")
    line = model_line(suite_text("pymodels", GOOD + BROKEN), '"nosuch_module_xyz:make"')
    check(p.returncode == 2 and f"pymodels.yaml:{line}: models[4].model.module: " in p.stderr and
          "cannot import 'nosuch_module_xyz'" in p.stderr, f"dry run of the broken suite: exit {p.returncode}, {p.stderr!r}")
    p = sweep(binary, good, os.path.join(tmp, "e", "good.h5"), tmp, "--dry-run")
    check(p.returncode == 0 and p.stdout.count("(python:") == 6, f"dry run of the good suite: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    for name, broken, needle in (("wrong-shape", "mymodels:make_wrong", "forward returned logits of shape (2, 8, 4) for tokens "
                                  f"of shape (2, 8): expected float logits of shape (2, 8, {len(srbench.Task('flipflop').vocab)})"),
                                 ("raises", "mymodels:make_broken", expect_failures["raises"][1])):
        path = os.path.join(tmp, f"{name}.yaml")
        with open(path, "w") as f:
            f.write(suite_text(name, f'  - name: {name}\n    model: {{arch: python, module: "{broken}"}}\n'))
        p = sweep(binary, path, os.path.join(tmp, "e", f"{name}.h5"), tmp, "--dry-run")
        check(p.returncode == 2 and f"{name}.yaml:{model_line(suite_text(name, ''), 'models:') + 2}: models[0].model.module: " in p.stderr and
              needle in p.stderr, f"dry run of {name}: exit {p.returncode}, {p.stderr!r}")

    # ---- keys
    bad = {
        '{arch: python, module: "mymodels:make_gru", layers: 2}':
            ["models[0].model.layers", "'layers' does not apply to arch python", "max_len, module, kwargs, device"],
        '{arch: python, module: "mymodels.make_gru"}': ["models[0].model.module", "expected 'package.module:factory'"],
        '{arch: python}': ["models[0].model.arch", "arch python needs module"],
        '{arch: python, module: "m:f", kwargs: [1, 2]}': ["models[0].model.kwargs", "expected a map"],
        '{arch: lstm, module: "mymodels:make_gru"}': ["models[0].model.module", "'module' does not apply to arch lstm"],
    }
    for model, needles in bad.items():
        path = os.path.join(tmp, "bad.yaml")
        with open(path, "w") as f:
            f.write(suite_text("bad", f"  - name: m\n    model: {model}\n"))
        raises(lambda: srbench.load_suite(path), f"bad.yaml:{model_line(suite_text('bad', ''), 'models:') + 2}:", *needles)
    # inherited python keys under another arch are dropped
    with open(os.path.join(tmp, "inherit.yaml"), "w") as f:
        f.write(suite_text("inherit", '  - name: m\n    model: {arch: lstm, d_model: 8}\n').replace(
            "model: {max_len: 32}", 'model: {max_len: 32, module: "mymodels:make_gru", kwargs: {hidden: 3}}'))
    inh = srbench.load_suite(os.path.join(tmp, "inherit.yaml"))
    check("module" not in inh.runs[0].config["model"], f"an inherited module under lstm: {inh.runs[0].config['model']}")

    shutil.rmtree(tmp, ignore_errors=True)
    return finish("Python models in a suite: failures recorded, equal to a training written here, same numbers "
                  "twice and after SIGKILL, ids from the module's hash, dry-run and key errors located")


if __name__ == "__main__":
    sys.exit(main())
