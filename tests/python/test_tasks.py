#!/usr/bin/python3
"""srbench.Task against the command line (docs/python.md, "Tasks").

For every task, every value of each of its choice parameters (its output modes, labels, groups,
operations) and a few lengths, Task.sample must give exactly the examples of `srbench sample
--format jsonl` for the same arguments — token names through Task.vocab, unscored positions as
-1, input_length — right-padded with token 0 and target -1 to the longest example. Where the command
line refuses (a length the task does not take), Python raises ValueError with the same message.
Task.batch is checked against one `srbench sample` per example, and bad parameters must raise
ValueError naming the parameter.

  PYTHONPATH=build/python /usr/bin/python3 tests/python/test_tasks.py --srbench build/harness/srbench

Exit 0 when everything holds; 1 with a list of failures otherwise.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

import srbench
from checks import check, finish, raises

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))



def cli(binary, task, n, count, seed, stream, index, params):
    cmd = [binary, "sample", task, "-n", str(n), "--count", str(count), "--seed", str(seed), "--stream", stream,
           "--index", str(index), "--format", "jsonl"]
    for k, v in params.items():
        cmd += ["--set", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr.strip()


def compare(name, batch, vocab, lines):
    """A Batch against jsonl lines; returns False at the first difference (recorded)."""
    records = [json.loads(line) for line in lines]
    if not check(batch.tokens.dtype == np.int32 and batch.targets.dtype == np.int32, f"{name}: dtype not int32"):
        return False
    if not check(batch.tokens.shape[0] == len(records), f"{name}: {batch.tokens.shape[0]} rows, cli {len(records)}"):
        return False
    T = max(len(r["tokens"]) for r in records)
    if not check(batch.tokens.shape == (len(records), T) and batch.targets.shape == (len(records), T),
                 f"{name}: shape {batch.tokens.shape}, expected ({len(records)}, {T})"):
        return False
    for i, r in enumerate(records):
        L = len(r["tokens"])
        toks = [vocab[t] for t in batch.tokens[i, :L]]
        tgts = [None if t == -1 else vocab[t] for t in batch.targets[i, :L]]
        if not (check(toks == r["tokens"], f"{name} row {i}: tokens {toks} != cli {r['tokens']}")
                and check(tgts == r["targets"], f"{name} row {i}: targets {tgts} != cli {r['targets']}")
                and check(int(batch.lengths[i]) == L, f"{name} row {i}: length {batch.lengths[i]} != {L}")
                and check(int(batch.input_lengths[i]) == r["input_length"],
                          f"{name} row {i}: input_length {batch.input_lengths[i]} != cli {r['input_length']}")
                and check(np.all(batch.tokens[i, L:] == 0) and np.all(batch.targets[i, L:] == -1),
                          f"{name} row {i}: padding is not token 0 / target -1")):
            return False
    return True


def variants(info):
    """The task's defaults, then each other value of each choice parameter."""
    base = {"path": os.path.join(ROOT, "LICENSE")} if info["name"] == "text" else {}
    out = [dict(base)]
    for p in info["params"]:
        for c in p["choices"]:
            if c != p["default"]:
                out.append({**base, p["name"]: c})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    binary = ap.parse_args().srbench

    infos = srbench.tasks()
    names = [t["name"] for t in infos]
    listing = subprocess.run([binary, "tasks"], capture_output=True, text=True, check=True).stdout
    listed = [line.split(" — ")[0] for line in listing.splitlines() if line and not line.startswith(" ")]
    check(names == listed, f"srbench.tasks() names {names} != `srbench tasks` {listed}")
    for t in infos:
        for p in t["params"]:
            check(set(p) == {"name", "kind", "default", "help", "choices"}, f"{t['name']}.{p['name']}: keys {set(p)}")
    check(srbench.__version__ and isinstance(srbench.__version__, str), "no __version__")

    compared, per_task = 0, {}
    streams = ["train", "eval", "train-arch"]
    for k, info in enumerate(infos):
        for j, params in enumerate(variants(info)):
            task = srbench.Task(info["name"], **params)
            check(len(task.vocab) == len(set(task.vocab)), f"{info['name']}: vocab names repeat")
            for m, n in enumerate([1, 6, 13]):
                stream = streams[(k + j + m) % 3]
                seed, index, count = 3 + m, 5 * j + m, 4
                name = f"{info['name']} {params} n={n} {stream}"
                rc, out, err = cli(binary, info["name"], n, count, seed, stream, index, params)
                if rc == 0:
                    b = task.sample(n=n, count=count, seed=seed, stream=stream, index=index)
                    ok = compare(name, b, task.vocab, out.splitlines())
                    compared += ok
                    per_task[info["name"]] = per_task.get(info["name"], 0) + ok
                else:
                    check(rc == 2, f"{name}: cli exit {rc}: {err}")
                    try:
                        task.sample(n=n, count=count, seed=seed, stream=stream, index=index)
                        check(False, f"{name}: cli refused ({err}) but Python sampled")
                    except ValueError as e:
                        check("srbench sample: " + str(e) == err, f"{name}: ValueError '{e}' != cli '{err}'")
    check(set(per_task) == set(names), f"tasks with no batch compared: {sorted(set(names) - set(per_task))}")

    # a data seed (modadd's split) goes to the task as --data-seed does
    t = srbench.Task("modadd", data_seed=4)
    p = subprocess.run([binary, "sample", "modadd", "--count", "6", "--data-seed", "4", "--stream", "eval",
                        "--format", "jsonl"], capture_output=True, text=True, check=True)
    compare("modadd data_seed=4", t.sample(n=8, count=6, stream="eval"), t.vocab, p.stdout.splitlines())

    # Task.batch: one example per length, each as `srbench sample -n L --index index+i`
    for name, params, lengths in [("add", {}, [3, 7, 1, 5]), ("parity", {"output": "scratchpad"}, [4, 1, 9]),
                                  ("reverse_string", {}, [2, 11, 6])]:
        t = srbench.Task(name, **params)
        b = t.batch(lengths, seed=2, stream="eval", index=10)
        lines = []
        for i, n in enumerate(lengths):
            rc, out, err = cli(binary, name, n, 1, 2, "eval", 10 + i, params)
            check(rc == 0, f"{name}: cli failed: {err}")
            lines += out.splitlines()
        compare(f"{name} batch {lengths}", b, t.vocab, lines)

    # bad input: ValueError naming the parameter, with the command line's message
    msg = raises(lambda: srbench.Task("dyck", k=0), "task 'dyck'", "parameter 'k'")
    rc, _, err = cli(binary, "dyck", 8, 1, 0, "train", 0, {"k": 0})
    check(rc == 2 and err == f"srbench sample: {msg}", f"dyck k=0: Python '{msg}', cli '{err}'")
    raises(lambda: srbench.Task("dyck", kk=2), "parameter 'kk'")
    raises(lambda: srbench.Task("dyck", label="nope"), "parameter 'label'", "nope")
    raises(lambda: srbench.Task("flipflop", p_write=1.5), "parameter 'p_write'")
    raises(lambda: srbench.Task("parity", p1="x"), "parameter 'p1'")
    raises(lambda: srbench.Task("no_such_task"), "no_such_task")
    raises(lambda: srbench.Task("parity").sample(n=0), "parameter 'n'", "length 0 is below 1")
    msg = raises(lambda: srbench.Task("parity").sample(n=-100), "parameter 'n'", "length -100 is below 1")
    rc, _, err = cli(binary, "parity", -3, 1, 0, "train", 0, {})
    check(rc == 2 and "parameter 'n': length -3 is below 1" in err, f"srbench sample -n -3: exit {rc}, '{err}'")
    raises(lambda: srbench.Task("ffl").sample(n=1), "parameter 'n'", "below 2")  # the task's own minimum
    for bad in (2.7, 3.0, True):
        raises(lambda: srbench.Task("parity").sample(n=bad), f"n must be an integer, got {bad!r}", kind=TypeError)
    raises(lambda: srbench.Task("parity").sample(n=4, count=2.5), "count", "2.5", kind=TypeError)
    raises(lambda: srbench.Task("parity").batch([3, 4.5]), "4.5", kind=TypeError)
    check(srbench.Task("parity").sample(n=np.int64(4), count=np.int32(2)).tokens.shape[0] == 2,
          "NumPy integers are accepted as n and count")
    raises(lambda: srbench.Task("parity").sample(n=4, count=0), "count")
    raises(lambda: srbench.Task("parity").sample(n=4, index=-1), "index")
    raises(lambda: srbench.Task("parity").sample(n=4, stream="test"), "stream", "test")
    raises(lambda: srbench.Task("parity").batch([3, 0]), "parameter 'n'", "length 0 is below 1")

    return finish(f"{compared} batches equal to srbench sample's jsonl over {len(infos)} tasks")


if __name__ == "__main__":
    sys.exit(main())
