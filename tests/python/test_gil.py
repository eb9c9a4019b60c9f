#!/usr/bin/python3
"""The GIL is released in long C++ work (docs/python.md, "Build and install"): Task.sample and
Task.batch of a big batch, a training stream's batch, the built-in trainer, and evaluate.

A second Python thread takes a time stamp (time.perf_counter) every half millisecond or so of
its loop while the main thread is inside one long call. A thread can take a stamp only while it
holds the GIL, so if the call kept the GIL no stamp could fall inside the call; if it releases
it, the second thread runs beside it and stamps the whole call. The check: stamps in each of the
six inner eighths of the call's measured duration. `evaluate` calls back into Python (here a
constant predictor, called once per evaluation set, two sets): each callback may let the other
thread in for a switch interval (5 ms), stamps in at most two eighths, not six. Each call is
sized to take about 0.3 s on an idle machine (longer on a loaded one: the eighths stretch with
it); a call whose stamps miss an eighth (the other thread not scheduled for that long) is tried
again, up to 4 times. With the GIL held this cannot pass.

  PYTHONPATH=build/python /usr/bin/python3 tests/python/test_gil.py

Exit 0 when every call releases the GIL; 1 with a list of failures otherwise.
"""
import os
import sys
import tempfile
import threading
import time

import numpy as np
import yaml

import srbench
from checks import check, finish

TARGET_S = 0.3  # how long each call should take on an idle machine
ATTEMPTS = 4


class Stamper:
    """A thread that records time stamps about every 0.5 ms while it runs Python code."""

    def __init__(self):
        self.stamps, self._stop = [], False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        last = 0.0
        while not self._stop:
            t = time.perf_counter()
            if t - last >= 0.0005:
                self.stamps.append(t)
                last = t

    def stop(self):
        self._stop = True
        self._thread.join()


def released(stamper, call):
    """Runs call() (in this thread) and returns (whether the other thread stamped each of the six
    inner eighths of it, the call's duration, the stamps inside it), trying again up to ATTEMPTS
    times."""
    for _ in range(ATTEMPTS):
        start = time.perf_counter()
        call()
        end = time.perf_counter()
        d = end - start
        inside = [t for t in stamper.stamps if start <= t <= end]
        eighths = {int(8 * (t - start) / d) for t in inside}
        if eighths >= set(range(1, 7)):
            return True, d, len(inside)
    return False, d, len(inside)


def sized(time_one, unit):
    """How many units make a call of about TARGET_S, from the time of `unit` units."""
    best = min(time_one(unit) for _ in range(3))
    return max(unit, int(unit * TARGET_S / max(best, 1e-6)))


def timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


# one dyck run of a tiny transformer; train.batch and train.steps set per call
SUITE = {"name": "pygil", "seeds": [0],
         "defaults": {"model": {"layers": 1, "d_model": 16, "heads": 2, "max_len": 64},
                      "train": {"steps": 10, "batch": 8, "lr": 3e-3, "warmup": 2, "eval_every": 1000},
                      "eval": {"examples": 8, "val_examples": 8}},
         "tasks": [{"task": "dyck", "train": {"length": [8, 30]}, "eval": {"lengths": [8]}}],
         "models": [{"name": "tiny"}]}


def main():
    task = srbench.Task("dyck", k=2, label="depth")
    count = sized(lambda c: timed(lambda: task.sample(n=30, count=c, seed=0, index=0)), 4096)
    lengths = [8 + k % 23 for k in range(count)]
    tmp = tempfile.mkdtemp(prefix="srbench-pygil-")
    suite_path = os.path.join(tmp, "pygil.yaml")
    with open(suite_path, "w") as f:
        yaml.safe_dump(SUITE, f)
    # the same work as a training batch: train.batch examples at lengths 8..30
    stream_of = lambda b: srbench.load_suite(suite_path, {"train.batch": b}).training_stream(entry="dyck", seed=0)
    batch = sized(lambda b: timed(lambda: next(iter(stream_of(b)))), 4096)

    def trainer(steps):  # the built-in trainer on the suite's one run, `steps` steps
        suite = srbench.load_suite(suite_path, {"train.steps": steps})
        return lambda: suite._trainer_batches(suite.runs[0].id, 1)

    steps = sized(lambda s: timed(trainer(s)), 20)

    calls = [
        (f"Task.sample of {count} examples", lambda: task.sample(n=30, count=count, seed=1, index=0)),
        (f"Task.batch of {count} examples", lambda: task.batch(lengths, seed=1, index=0)),
    ]
    stream = iter(stream_of(batch))
    calls.append((f"a training stream's batch of {batch} examples", lambda: next(stream)))
    calls.append((f"the built-in trainer, {steps} steps", trainer(steps)))

    def evaluation(examples):  # evaluate at lengths 30 and 60, one predict call per length
        suite = srbench.load_suite(suite_path, {"eval.examples": examples, "eval.lengths": "[30, 60]"})
        predict = lambda tokens: np.zeros(tokens.shape, np.int32)
        return lambda: suite.evaluate(predict, entry="dyck", seed=0, model="constant", batch=examples)

    examples = sized(lambda e: timed(evaluation(e)), 2048)
    calls.append((f"evaluate on {examples} examples per length", evaluation(examples)))

    stamper = Stamper()
    try:
        for what, call in calls:
            ok, d, n = released(stamper, call)
            check(ok, f"{what}: the other thread did not run through the call ({d:.3f} s, {n} stamps inside it, "
                      f"{ATTEMPTS} attempts): the GIL is held")
            print(f"  {what}: {d:.3f} s, {n} stamps of the other thread inside it")
    finally:
        stamper.stop()
    return finish("the GIL is released in Task.sample, Task.batch, training_stream, the trainer and evaluate")


if __name__ == "__main__":
    sys.exit(main())
