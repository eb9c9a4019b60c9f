#!/usr/bin/python3
"""`srbench forward --checkpoint RUN.h5` on a run file saved with `save_checkpoint: true`: an lstm
run is trained, and forward's logits and loss on a batch of random tokens must equal those of
torch.nn.LSTM loaded with the run file's stored parameters (model.md's tolerances: logits 1e-4 of
their scale, loss 1e-5 relative). A run file without a checkpoint must be refused by name.

    /usr/bin/python3 tests/harness/test_forward_run_file.py --srbench build/harness/srbench
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


SUITE = """name: fw
defaults:
  model: {{arch: lstm, layers: 1, d_model: 16, max_len: 64}}
  train: {{steps: 60, batch: 8, eval_every: 30, lr: 0.003, length: [1, 8], save_checkpoint: {save}}}
  eval: {{lengths: [8], examples: 16, val_examples: 16}}
tasks:
  - task: flipflop
"""


def sweep(srbench, d, save):
    os.makedirs(d)
    path = os.path.join(d, "s.yaml")
    with open(path, "w") as f:
        f.write(SUITE.format(save=save))
    r = subprocess.run([srbench, "sweep", path, "--out", os.path.join(d, "r.h5")], capture_output=True, text=True)
    check(r.returncode == 0, f"sweep exit 0 (got {r.returncode}: {r.stderr})")
    files = glob.glob(os.path.join(d, "fw", "runs", "*.h5"))
    check(len(files) == 1, f"one run file (got {files})")
    return files[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    run_file = sweep(a.srbench, os.path.join(d, "with"), "true")
    with h5py.File(run_file, "r") as f:
        (rid,) = list(f["runs"])
        P = {k: np.array(v) for k, v in f[f"runs/{rid}/checkpoint/params"].items()}
    V, dm = P["tok_emb"].shape
    rng = np.random.default_rng(3)
    B, T = 5, 11
    tokens = rng.integers(0, V, size=(B, T)).astype(np.int32)
    targets = rng.integers(0, V, size=(B, T)).astype(np.int32)
    targets[:, 0] = -1
    batch = os.path.join(d, "batch.h5")
    with h5py.File(batch, "w") as f:
        f["tokens"] = tokens
        f["targets"] = targets
    out = os.path.join(d, "out.h5")
    r = subprocess.run([a.srbench, "forward", "--checkpoint", run_file, "--batch", batch, "--out", out],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"forward on the run file exits 0 (got {r.returncode}: {r.stderr})")
    if r.returncode == 0:
        with h5py.File(out, "r") as f:
            logits = np.array(f["logits"])
            loss = float(np.array(f["loss"]))
        lstm = torch.nn.LSTM(dm, dm, batch_first=True).double()
        lstm.load_state_dict({k + "_l0": torch.tensor(P["rnn.0." + k], dtype=torch.float64)
                              for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")})
        with torch.no_grad():
            h, _ = lstm(torch.tensor(P["tok_emb"], dtype=torch.float64)[torch.tensor(tokens, dtype=torch.long)])
            ref = (h @ torch.tensor(P["head.weight"], dtype=torch.float64).T
                   + torch.tensor(P["head.bias"], dtype=torch.float64)).numpy()
        err = np.abs(logits - ref).max() / np.abs(ref).max()
        check(err <= 1e-4, f"logits equal torch.nn.LSTM's (max rel error {err:.2e})")
        t = torch.tensor(targets.reshape(-1), dtype=torch.long)
        ref_loss = torch.nn.functional.cross_entropy(torch.tensor(ref.reshape(-1, V)), t, ignore_index=-1).item()
        check(abs(loss - ref_loss) <= 1e-5 * abs(ref_loss), f"loss {loss} equals the reference {ref_loss}")
    bare = sweep(a.srbench, os.path.join(d, "without"), "false")
    r = subprocess.run([a.srbench, "forward", "--checkpoint", bare, "--batch", batch, "--out", out + "2"],
                       capture_output=True, text=True)
    check(r.returncode != 0 and "has no checkpoint" in r.stderr,
          f"a run file without a checkpoint is refused by name (exit {r.returncode}: {r.stderr})")
    shutil.rmtree(d)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
