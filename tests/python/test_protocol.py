#!/usr/bin/python3
"""The protocol from Python (docs/python.md): load_suite, training_stream, evaluate, Result.write,
read_results — against the built-in trainer, independent counts, and srbench merge / report.

- training_stream(entry, seed) equals, batch by batch, what the built-in trainer (run_training)
  draws for that run, observed while it trains the run in-process; for the unbounded generator
  every row is also the `train`-stream example s·batch+b under the run seed at some training
  length (Task.sample); a finite training set repeats its examples every epoch, reshuffled.
- evaluate with an oracle predictor (the targets, as predictions and as one-hot logits) gives
  accuracy 1 in every row and the loss of those logits worked out by hand; with a constant
  predictor every row's token_acc and seq_acc equal a count made here from the same examples
  (Task.sample of the eval stream under data_seed, shifted parameters for the shifts), and the
  derived metrics equal those computed here from the rows.
- Results written from Python land beside the built-in runs of a `srbench sweep`: `srbench
  merge` joins them, `srbench report` shows the external model, read_results reads its numbers
  back, and scripts/plot_results.py draws it.
- Bad input raises ValueError naming what is wrong.

  PYTHONPATH=build/python /usr/bin/python3 tests/python/test_protocol.py --srbench build/harness/srbench
"""
import argparse
import csv
import io
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

import srbench
from checks import check, finish, raises

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SUITE = """\
name: pyproto
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 64}
  train: {steps: 10, batch: 8, lr: 3e-3, warmup: 2, eval_every: 5}
  eval: {examples: 40, val_examples: 16}
tasks:
  - task: flipflop
    train: {length: [2, 8], data_seed: 3}
    eval:
      lengths: [4, 8, 16]
      shifts: [{p_write: 0.1}, {p_write: 0.9}]
  - task: parity
    name: parity-finite
    train: {length: [2, 6], examples: 20}
    eval:
      lengths: [4, 6, 12]
      shifts: [{p1: 0.9}]
  - task: add
    train: {length: [1, 4], length_per: batch}
    eval:
      lengths: [3, 4, 6]
  - task: reverse_string
    train: {length: [1, 5]}
    eval:
      lengths: [5, 9]
models:
  - name: tiny
  - name: tiny-alibi
    model: {position: alibi}
"""



# harness.md's derived metrics: the module's table of them, which starts with these eight
METRICS = [m["name"] for m in srbench._srbench.metric_fields()]
FIRST_METRICS = ["id_acc", "ood_length_acc", "ood_token_acc", "shift_acc", "shortcut_gap", "steps_to_target",
                 "final_train_loss", "fitted"]


def same_batch(a, b):
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("tokens", "targets", "lengths", "input_lengths"))



def eval_plan(run):
    """The evaluation sets of a run as harness.md defines them: (length, condition label, params)."""
    c = run.config
    lo, hi = c["train"]["length"]
    lengths = c["eval"]["lengths"]
    plan = [(n, "id", {}) for n in lengths]
    for sh in c["eval"].get("shifts") or []:
        label = ",".join(f"{k}={v}" for k, v in sh.items())
        plan += [(n, label, sh) for n in lengths if lo <= n <= hi]
    return plan, c


def examples_of(run, n, shift):
    c = run.config
    params = {**(c["params"] or {}), **shift}
    t = srbench.Task(run.task, data_seed=c["train"]["data_seed"], **params)
    return t, t.sample(n=n, count=c["eval"]["examples"], seed=c["train"]["data_seed"], stream="eval", index=0)


def derived(rows, lo, hi):
    """harness.md's metrics from evaluation rows (an independent re-computation)."""
    idr = rows[rows.condition == "id"]
    fit = idr[(idr.length >= lo) & (idr.length <= hi)].seq_acc
    ood = idr[idr.length > hi]
    id_acc = fit.mean() if len(fit) else math.nan
    ood_acc = ood.seq_acc.mean() if len(ood) else math.nan
    shifts = [g.seq_acc.mean() for c, g in rows[rows.condition != "id"].groupby("condition")]
    shift_acc = min(shifts) if shifts else math.nan
    worst = [v for v in (ood_acc, shift_acc) if not math.isnan(v)]
    gap = id_acc - min(worst) if worst else math.nan
    return {"id_acc": id_acc, "ood_length_acc": ood_acc, "shift_acc": shift_acc, "shortcut_gap": gap,
            "ood_token_acc": ood.token_acc.mean() if len(ood) else math.nan}


def close(a, b, tol=1e-12):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    binary = ap.parse_args().srbench
    tmp = tempfile.mkdtemp(prefix="srbench-pyproto-")
    suite_path = os.path.join(tmp, "pyproto.yaml")
    with open(suite_path, "w") as f:
        f.write(SUITE)
    suite = srbench.load_suite(suite_path)
    check(len(suite.runs) == 4 * 2 * 2, f"{len(suite.runs)} runs, expected 16")
    check(suite.seeds == [0, 1], f"seeds {suite.seeds}")

    # ---- training_stream = the trainer's batches -------------------------------------------------
    for run in suite.runs:
        if run.model != "tiny":
            continue
        stream = suite.training_stream(entry=run.entry, seed=run.seed)
        ours = list(stream)
        trainer = suite._trainer_batches(run.id, 100)
        cfg = run.config["train"]
        check(len(ours) == cfg["steps"] and len(trainer) == cfg["steps"],
              f"{run.entry} seed {run.seed}: {len(ours)} stream / {len(trainer)} trainer batches, steps {cfg['steps']}")
        for s, (a, b) in enumerate(zip(ours, trainer)):
            if not check(same_batch(a, b), f"{run.entry} seed {run.seed}: batch {s} differs from the trainer's"):
                break
        check(all(b.tokens.shape[0] == cfg["batch"] for b in ours), f"{run.entry}: batch size")
        # re-iterable: a second pass yields the same batches; batch(step) is iteration's step
        again = list(stream)
        check(len(again) == len(ours) and all(same_batch(a, b) for a, b in zip(ours, again)),
              f"{run.entry} seed {run.seed}: a second pass over the stream gives {len(again)} other batches")
        check(all(same_batch(stream.batch(k), ours[k]) for k in (0, len(ours) // 2, len(ours) - 1)),
              f"{run.entry}: batch(step) differs from the step-th batch of the iteration")
        raises(lambda: stream.batch(len(ours)), f"step {len(ours)} is outside", kind=IndexError)
        raises(lambda: stream.batch(1.0), "step must be an integer", kind=TypeError)
        # the padding made explicit: mask = a real token, loss_mask = a scored position
        for b in ours[:3]:
            want = np.arange(b.tokens.shape[1])[None, :] < b.lengths[:, None]
            check(b.mask.dtype == np.bool_ and np.array_equal(b.mask, want), f"{run.entry}: mask != t < lengths")
            check(np.array_equal(b.loss_mask, b.targets >= 0), f"{run.entry}: loss_mask != targets >= 0")
        if run.entry == "flipflop" and run.seed == 0:  # as a torch IterableDataset across 2 workers: the same order
            import torch
            ds = stream.torch_dataset()
            got = list(torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2))
            check(len(got) == len(ours) and all(
                np.array_equal(g["tokens"].numpy(), b.tokens) and np.array_equal(g["targets"].numpy(), b.targets)
                and np.array_equal(g["loss_mask"].numpy(), b.loss_mask) for g, b in zip(got, ours)),
                f"DataLoader(num_workers=2) over torch_dataset(): {len(got)} batches, not the stream's in order")
            one = list(torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0))
            check(len(one) == len(ours) and all(np.array_equal(g["tokens"].numpy(), b.tokens) for g, b in zip(one, ours)),
                  "DataLoader(num_workers=0) over torch_dataset() differs from the stream")
        # the same run's other model entry draws the same data; the other seed other data
        other = suite.training_stream(run=[r.id for r in suite.runs if r.entry == run.entry and r.seed == run.seed
                                           and r.model == "tiny-alibi"][0])
        check(all(same_batch(a, b) for a, b in zip(ours, other)), f"{run.entry}: model entries draw different data")
        reseeded = list(suite.training_stream(entry=run.entry, seed=1 - run.seed))
        check(not all(same_batch(a, b) for a, b in zip(ours, reseeded)), f"{run.entry}: seeds 0 and 1 draw the same")
        task = srbench.Task(run.task, data_seed=cfg["data_seed"], **(run.config["params"] or {}))
        lo, hi = cfg["length"]
        if run.entry == "flipflop" and run.seed == 0:  # example k = s·batch + b of the train stream
            for s in range(2):
                for b in range(cfg["batch"]):
                    k = s * cfg["batch"] + b
                    row = ours[s].tokens[b, :ours[s].lengths[b]]
                    hit = any(np.array_equal(task.sample(n=n, seed=run.seed, index=k).tokens[0], row)
                              for n in range(lo, hi + 1))
                    check(hit, f"flipflop: stream batch {s} row {b} is not train example {k} at a training length")
        if run.entry == "add":  # length_per: batch — one length per batch, every row from the train stream
            for s, bt in enumerate(ours[:3]):
                k0 = s * cfg["batch"]
                hit = [n for n in range(lo, hi + 1)
                       if same_batch(task.sample(n=n, count=cfg["batch"], seed=run.seed, index=k0), bt)]
                check(len(hit) >= 1, f"add: batch {s} is not examples {k0}.. at one training length")
        if run.entry == "parity-finite":  # 20 examples, each epoch all of them once
            rows = [tuple(bt.tokens[b, :bt.lengths[b]]) + (-1,) + tuple(bt.targets[b, :bt.lengths[b]])
                    for bt in ours for b in range(bt.tokens.shape[0])]
            epochs = [rows[i:i + 20] for i in range(0, 60, 20)]
            check(all(sorted(e) == sorted(epochs[0]) for e in epochs),
                  "parity-finite: the epochs do not visit the same 20 examples")
            check(epochs[0] != epochs[1], "parity-finite: epochs 0 and 1 in the same order")

    # ---- evaluate: oracle, constant predictor ---------------------------------------------------
    def oracle_for(run, logits):
        table = {}
        plan, _ = eval_plan(run)
        for n, _, shift in plan:
            _, b = examples_of(run, n, shift)
            for i in range(b.tokens.shape[0]):
                key = b.tokens[i, :b.lengths[i]].tobytes()
                if key in table and not np.array_equal(table[key], b.targets[i, :b.lengths[i]]):
                    raise AssertionError(f"{run.entry}: two eval examples with the same tokens and other targets")
                table[key] = b.targets[i, :b.lengths[i]]
        V = len(examples_of(run, plan[0][0], {})[0].vocab)
        calls = []

        def predict(tokens):
            calls.append(tokens.shape)
            pred = np.zeros(tokens.shape, dtype=np.int64)
            for i in range(tokens.shape[0]):
                t = table[tokens[i].tobytes()]  # fixed-length tasks: no padding
                pred[i] = np.where(t >= 0, t, 0)
            if not logits:
                return pred
            out = np.zeros(tokens.shape + (V,), dtype=np.float32)
            np.put_along_axis(out, pred[..., None], 20.0, axis=-1)
            return out
        return predict, calls, V

    for entry in ["flipflop", "parity-finite", "reverse_string"]:
        for logits in (False, True):
            run = [r for r in suite.runs if r.entry == entry and r.seed == 0][0]
            predict, calls, V = oracle_for(run, logits)
            res = suite.evaluate(predict, entry=entry, seed=0, model="oracle")
            rows = res.rows
            plan, c = eval_plan(run)
            check(list(zip(rows.length, rows.condition)) == [(n, lab) for n, lab, _ in plan],
                  f"{entry}: rows {list(zip(rows.length, rows.condition))}, expected {[(n, l) for n, l, _ in plan]}")
            check((rows.token_acc == 1).all() and (rows.seq_acc == 1).all(), f"{entry} oracle: accuracy below 1\n{rows}")
            check(all(s[0] <= 64 for s in calls), f"{entry}: predict got batches above 64")
            check(sum(s[0] for s in calls) == len(plan) * c["eval"]["examples"], f"{entry}: examples predicted")
            m = res.metrics
            check(m["id_acc"] == 1 and m["ood_length_acc"] == 1, f"{entry} oracle metrics {m}")
            if entry != "reverse_string":
                check(m["shift_acc"] == 1 and m["shortcut_gap"] == 0, f"{entry} oracle metrics {m}")
            else:
                check(m["ood_token_acc"] == 1, f"reverse_string oracle: ood_token_acc {m.get('ood_token_acc')}")
            if logits:  # one-hot logits 20: every scored position costs log(1 + (V-1) e^-20)
                want = math.log1p((V - 1) * math.exp(-20.0))
                check(all(abs(x - want) <= 1e-9 * want for x in rows.loss), f"{entry}: loss {list(rows.loss)} != {want}")
            else:
                check(rows.loss.isna().all(), f"{entry}: predictions give a loss {list(rows.loss)}")

    # ---- the progress line: one update per evaluation row, done/total, ended by a newline -------------
    from srbench.progress import Progress
    out = io.StringIO()
    bar = Progress("evaluate p", "rows", True, stream=out)
    bar.bar = None  # the plain line (tqdm, where installed, draws the same counts)
    run = [r for r in suite.runs if r.entry == "flipflop" and r.seed == 0][0]
    res = suite._suite.evaluate(lambda t: np.zeros(t.shape, dtype=np.int32), "flipflop", 0, "p", "", 64, "", bar)
    bar.close()
    n_rows = len(eval_plan(run)[0])
    check(out.getvalue() == "".join(f"\revaluate p: {k}/{n_rows} rows" for k in range(1, n_rows + 1)) + "\n",
          f"progress line {out.getvalue()!r} for {n_rows} rows")
    check(Progress("x", "rows", None, stream=io.StringIO()).enabled is False, "progress shown on a non-terminal")

    # ---- what predict may return: bf16 and float16 read as float32, tuples and bad ids refused,
    # a non-finite logit makes the run diverged (never ok) -------------------------------------------
    import torch
    run = [r for r in suite.runs if r.entry == "flipflop" and r.seed == 0][0]
    predict, _, V = oracle_for(run, True)
    want = suite.evaluate(predict, entry="flipflop", seed=0, model="oracle")
    check(want.status == "ok" and want.message == "", f"oracle status {want.status} {want.message}")
    for dtype in (torch.bfloat16, torch.float16):  # one-hot logits of 20 and 0 are exact in both
        got = suite.evaluate(lambda t: torch.from_numpy(predict(t)).to(dtype), entry="flipflop", seed=0, model="oracle")
        check(got.status == "ok" and got.rows.equals(want.rows), f"{dtype} logits: {got.status}\n{got.rows}")
    got = suite.evaluate(lambda t: predict(t).astype(np.float16), entry="flipflop", seed=0, model="oracle")
    check(got.rows.equals(want.rows), f"numpy float16 logits\n{got.rows}")
    raises(lambda: suite.evaluate(lambda t: (predict(t), None), entry="flipflop", seed=0, model="x"),
           "tuple of 2", "model(x)[0]", kind=TypeError)

    def bad_id(tokens):
        out = np.argmax(predict(tokens), axis=-1).astype(np.int32)
        out[1, 2] = V  # one past the vocabulary, at a scored position (flipflop scores every read)
        return out
    raises(lambda: suite.evaluate(bad_id, entry="flipflop", seed=0, model="x"),
           f"token id {V} at row 1, position 2", f"0..{V - 1}")

    def nan_at(tokens):
        out = predict(tokens)
        out[3, 1, 0] = np.nan
        return out
    got = suite.evaluate(nan_at, entry="flipflop", seed=0, model="nan")
    check(got.status == "diverged" and "non-finite logit at row 3, position 1" in got.message,
          f"NaN logits: status {got.status}, message '{got.message}'")
    got = suite.evaluate(lambda t: np.where(predict(t) > 0, np.inf, 0).astype(np.float32), entry="flipflop", seed=0,
                         model="inf")
    check(got.status == "diverged", f"inf logits: status {got.status}")

    results = []
    for entry in ["flipflop", "parity-finite", "add", "reverse_string"]:
        for seed in (0, 1):
            run = [r for r in suite.runs if r.entry == entry and r.seed == seed][0]
            plan, c = eval_plan(run)
            t, first = examples_of(run, plan[0][0], {})
            const = int(first.targets[first.targets >= 0][0])  # a token that is a target somewhere
            res = suite.evaluate(lambda tokens: np.full(tokens.shape, const, dtype=np.int32), entry=entry, seed=seed,
                                 model="const", model_config={"predicts": t.vocab[const]})
            rows = res.rows
            check(len(rows) == len(plan), f"{entry}: {len(rows)} rows, expected {len(plan)}")
            for (n, label, shift), (_, row) in zip(plan, rows.iterrows()):
                _, b = examples_of(run, n, shift)
                scored = b.targets >= 0
                tok = (b.targets[scored] == const).sum() / scored.sum()
                seq = np.mean([(b.targets[i][scored[i]] == const).all() for i in range(b.targets.shape[0])])
                check(row.length == n and row.condition == label, f"{entry}: row ({row.length}, {row.condition})")
                check(close(row.token_acc, tok) and close(row.seq_acc, seq),
                      f"{entry} n={n} {label}: token_acc {row.token_acc} seq_acc {row.seq_acc}, counted {tok} {seq}")
            lo, hi = c["train"]["length"]
            want = derived(rows, lo, hi)
            for k in ["id_acc", "ood_length_acc", "shift_acc", "shortcut_gap"]:
                check(close(res.metrics[k], want[k]), f"{entry}: {k} {res.metrics[k]}, from the rows {want[k]}")
            check(close(res.metrics["ood_token_acc"], want["ood_token_acc"]), f"{entry}: ood_token_acc {res.metrics}")
            check(rows.token_acc.max() > 0 and rows.seq_acc.min() < 1, f"{entry}: a constant is right everywhere or nowhere")
            res.add_curve(5, 2.0, 0.25)
            res.add_curve(10, 1.5, 0.5)
            res.tokens_per_s = 1234.0
            check(res.metrics["final_train_loss"] == 1.5, f"final_train_loss {res.metrics['final_train_loss']}")
            check(res.config["model"]["arch"] == "external" and res.config["model_entry"] == "const",
                  f"config {res.config['model']}")
            results.append(res)
    check(len({r.run_id for r in results}) == len(results), "external run ids repeat")

    # ---- beside the built-in runs: sweep, write, merge, report, plot ----------------------------------
    out = os.path.join(tmp, "pyproto.h5")
    p = subprocess.run([binary, "sweep", suite_path, "--out", out, "--jobs", "2", "--threads", "1"],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"sweep failed: {p.stderr}")
    # suite.runs: each run's identity as the sweep's run file records it
    for run in suite.runs:
        path = os.path.join(tmp, "pyproto", "runs", run.id + ".h5")
        if not check(os.path.exists(path), f"no run file {path}"):
            continue
        with h5py.File(path, "r") as f:
            a = f["runs"][run.id].attrs
            got = (run.task, run.entry, run.model, run.grid, run.seed, run.config_yaml)
            want = tuple(a[k] for k in ("task", "entry", "model", "grid", "seed", "config"))
            check(got == want, f"{run.id}: Run {got} != run file {want}")
    paths = [r.write(suite, out=out) for r in results]
    # Result.metrics: the run file's metric attributes (harness.md), each as the file records it
    for res, path in zip(results, paths):
        with h5py.File(path, "r") as f:
            attrs = f["runs"][res.run_id].attrs
            check(set(res.metrics) == set(METRICS), f"{res.run_id}: metrics keys {sorted(res.metrics)}")
            for k in set(METRICS) & set(res.metrics):
                check(close(float(attrs[k]), float(res.metrics[k]), 0), f"{res.run_id}: {k} {res.metrics[k]}, file {attrs[k]}")
    check(all(os.path.dirname(x) == os.path.join(tmp, "pyproto", "runs") for x in paths), f"run files at {paths}")
    p = subprocess.run([binary, "merge", os.path.join(tmp, "pyproto"), "--out", out], capture_output=True, text=True)
    check(p.returncode == 0, f"merge failed: {p.stderr}")
    check("warning" not in p.stderr, f"merge warned: {p.stderr}")
    check(f"models evaluated against this suite, not among its model entries: {len(results)} run(s)" in p.stdout
          and "another suite text" not in p.stdout, f"merge's listing of the external runs:\n{p.stdout}")
    rep = subprocess.run([binary, "report", out], capture_output=True, text=True)
    check(rep.returncode == 0 and "const" in rep.stdout and "tiny-alibi" in rep.stdout,
          f"report does not show the external model beside the built-in ones:\n{rep.stdout}{rep.stderr}")
    csv_text = subprocess.run([binary, "report", out, "--format", "csv"], capture_output=True, text=True).stdout
    r = srbench.read_results(out)
    check(len(r.summary) == 16 + len(results), f"summary has {len(r.summary)} rows")
    # a run file read alone: the suite file's /summary columns in their order, its row's values
    with h5py.File(out, "r") as f:
        columns = list(f["summary"].dtype.names)
    one = srbench.read_results(paths[0]).summary
    check(list(one.columns) == columns, f"run file summary columns {list(one.columns)} != /summary's {columns}")
    row = r.summary[r.summary.run_id == results[0].run_id].iloc[0]
    for k in set(columns) & set(one.columns):
        a, b = one[k].iloc[0], row[k]
        check(a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), f"run file summary {k}: {a} != {b}")
    fields = srbench._srbench.metric_fields()
    check(METRICS[:len(FIRST_METRICS)] == FIRST_METRICS, f"metric_fields {METRICS}")
    first = fields[:len(FIRST_METRICS)]
    check([m["name"] for m in first if m["kind"] == "int"] == ["steps_to_target", "fitted"]
          and [m["default"] for m in first if m["kind"] == "int"] == [-1, -1]
          and [m["name"] for m in first if m["optional"]] == ["ood_token_acc", "fitted"], f"metric_fields {first}")
    check(set(r.summary.model) == {"tiny", "tiny-alibi", "const"}, f"models {set(r.summary.model)}")
    for res in results:
        s = r.summary[r.summary.run_id == res.run_id]
        check(len(s) == 1, f"{res.run_id} not in /summary")
        if len(s) != 1:
            continue
        s = s.iloc[0]
        for k in ["id_acc", "ood_length_acc", "shift_acc", "shortcut_gap", "final_train_loss"]:
            check(close(float(s[k]), res.metrics[k]), f"{res.run_id}: summary {k} {s[k]} != {res.metrics[k]}")
        check(s.tokens_per_s == 1234.0 and s.status == "ok", f"{res.run_id}: summary {dict(s)}")
        e = r.evals[r.evals.run_id == res.run_id].reset_index(drop=True)
        want = res.rows
        check(list(e.condition) == list(want.condition) and np.allclose(e.seq_acc, want.seq_acc, rtol=0, atol=0)
              and np.allclose(e.token_acc, want.token_acc, rtol=0, atol=0), f"{res.run_id}: eval rows differ")
        cu = r.curves[r.curves.run_id == res.run_id]
        check(list(cu.step) == [5, 10] and list(cu.val_acc) == [0.25, 0.5], f"{res.run_id}: curve {cu}")
        check(r.config(res.run_id)["model"]["arch"] == "external", f"{res.run_id}: config")
    builtin = r.summary[r.summary.model == "tiny"]
    check(len(builtin) == 8 and (builtin.status == "ok").all(), "built-in runs missing or not ok")
    check(len(r.curves[r.curves.run_id == builtin.run_id.iloc[0]]) == 2, "built-in curve points")
    # the csv report's mean id_acc of const on flipflop = the mean over its two seeds
    lines = [row for row in csv.DictReader(csv_text.splitlines())
             if row["entry"] == "flipflop" and row["model"] == "const" and row["metric"] == "id_acc"]
    if check(len(lines) == 1, f"no flipflop/const/id_acc line in the csv report:\n{csv_text}"):
        want = np.mean([res.metrics["id_acc"] for res in results if res.config["entry"] == "flipflop"])
        check(lines[0]["n"] == "2" and abs(float(lines[0]["mean"]) - want) < 1e-12,
              f"report id_acc {lines[0]} != mean {want} over 2 seeds")
    figs = os.path.join(tmp, "figs")
    p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "plot_results.py"), out, "--out", figs],
                       capture_output=True, text=True)
    check(p.returncode == 0 and os.path.exists(os.path.join(figs, "acc_vs_length_flipflop.png")),
          f"plot_results failed: {p.stdout}{p.stderr}")

    # ---- merge and suite texts: an edited text keeps its runs; another suite's run is refused ------
    def const_run(s, model):
        return s.evaluate(lambda t: np.zeros(t.shape, dtype=np.int32), entry="flipflop", seed=0, model=model)
    edited_path = os.path.join(tmp, "pyproto-edited.yaml")
    with open(edited_path, "w") as f:
        f.write(SUITE + "# a comment added after the sweep: the same runs\n")
    const_run(srbench.load_suite(edited_path), "edited").write(suite, out=out)
    p = subprocess.run([binary, "merge", os.path.join(tmp, "pyproto"), "--out", out], capture_output=True, text=True)
    check(p.returncode == 0 and "another suite text" not in p.stdout + p.stderr
          and f"not among its model entries: {len(results) + 1} run(s)" in p.stdout,
          f"merge of a run written from the edited text: exit {p.returncode}\n{p.stdout}{p.stderr}")
    variant = const_run(srbench.load_suite(suite_path, {"train.steps": 7}), "variant")
    variant_file = variant.write(suite, out=out)
    p = subprocess.run([binary, "merge", os.path.join(tmp, "pyproto"), "--out", out], capture_output=True, text=True)
    check(p.returncode == 2 and "1 of the" in p.stderr and variant.run_id in p.stderr
          and "'# srbench --set train.steps=7'" in p.stderr and "--allow-mixed" in p.stderr,
          f"merge of another suite text's run: exit {p.returncode}, stderr {p.stderr}")
    p = subprocess.run([binary, "merge", os.path.join(tmp, "pyproto"), "--out", out, "--allow-mixed"],
                       capture_output=True, text=True)
    check(p.returncode == 0 and "written from another suite text (--allow-mixed): 1 run(s)" in p.stdout
          and variant.run_id in p.stdout, f"merge --allow-mixed: exit {p.returncode}\n{p.stdout}{p.stderr}")
    os.remove(variant_file)

    # ---- linear-rnn.md's entries: their config as resolved, the same batches as any arch -----------
    def linear_entry(name, entry, expect, bad):
        """A suite with model entry `name` (`entry` its model section) beside tiny: 8 runs whose
        resolved model section satisfies expect(model), whose stream is the trainer's batches and
        tiny's data; the override `bad` raises naming its key."""
        path = os.path.join(tmp, f"{name}.yaml")
        with open(path, "w") as f:
            f.write(SUITE.replace("name: pyproto", f"name: py{name}").replace(
                "  - name: tiny-alibi\n    model: {position: alibi}", f"  - name: {name}\n    model: {entry}"))
        ls = srbench.load_suite(path)
        runs = [r for r in ls.runs if r.model == name]
        check(len(runs) == 8, f"{len(runs)} {name} runs, expected 8")
        for r in runs:
            model = r.config["model"]
            check(expect(model), f"{r.id}: {name}'s resolved model section {model}")
            tiny = [t for t in ls.runs if t.model == "tiny" and t.entry == r.entry and t.seed == r.seed][0]
            ours, theirs = list(ls.training_stream(run=r.id)), list(ls.training_stream(run=tiny.id))
            trainer = ls._trainer_batches(r.id, 100)
            check(len(ours) == len(trainer) and all(same_batch(a, b) for a, b in zip(ours, trainer)),
                  f"{r.entry} seed {r.seed}: {name}'s stream is not its trainer's batches")
            check(all(same_batch(a, b) for a, b in zip(ours, theirs)), f"{r.entry}: {name} draws other data than tiny")
        raises(lambda: srbench.load_suite(path, bad), next(iter(bad)).split(".")[-1])

    linear_entry("mamba", "{arch: mamba, d_state: 4, eigenvalues: signed}",
                 lambda m: m["arch"] == "mamba" and m["d_state"] == 4 and m["eigenvalues"] == "signed"
                 and "heads" not in m, {"model.d_state": 0})
    # heads inherited by deltanet (it applies); its own keys resolved
    linear_entry("delta", "{arch: deltanet, heads: 2, beta_scale: 2, gated: true}",
                 lambda m: m["arch"] == "deltanet" and m["heads"] == 2 and m["beta_scale"] == 2 and m["gated"]
                 and m["output_gate"] is False and "position" not in m, {"model.beta_scale": 3})
    linear_entry("gla", "{arch: gla, heads: 2, gla_decay: none}",
                 lambda m: m["arch"] == "gla" and m["heads"] == 2 and m["gla_decay"] == "none"
                 and "d_conv" not in m and "position" not in m, {"model.gla_decay": "fast"})

    # ---- bad input ------------------------------------------------------------------------------
    raises(lambda: srbench.load_suite(os.path.join(tmp, "missing.yaml")), "missing.yaml")
    raises(lambda: srbench.load_suite(suite_path, {"train.stepz": 3}), "stepz")
    raises(lambda: srbench.load_suite(suite_path, {"train.steps": -1}), "steps")
    raises(lambda: suite.training_stream(entry="nope", seed=0), "entry 'nope'", "flipflop")
    raises(lambda: suite.training_stream(entry="flipflop", seed=7), "seed 7")
    raises(lambda: suite.evaluate(lambda t: np.zeros(t.shape[:1]), entry="flipflop", seed=0, model="x"), "shape")
    raises(lambda: suite.evaluate(lambda t: np.zeros(t.shape + (3,)), entry="flipflop", seed=0, model="x"), "logits")
    raises(lambda: suite.evaluate(lambda t: np.zeros(t.shape), entry="flipflop", seed=0, model="x"), "integers")
    raises(lambda: suite.evaluate(lambda t: np.zeros(t.shape, int), entry="flipflop", seed=0, model="tiny"), "'tiny'")

    return finish(f"training_stream = the trainer's batches; oracle and constant evaluations; "
                  f"{len(results)} external runs merged and reported beside 16 built-in runs")


if __name__ == "__main__":
    sys.exit(main())
