"""What the table scripts of docs/results.md share (attention_pattern.py, position_horizon.py,
results_table.py, read_gaps.py, attention_reads.py): opening a suite file, its runs in the suite's
order, a run file saved with its checkpoint, `--set` overrides, the bootstrap interval, and the
error exit. Imported by them from this folder.
"""
import math
import os
import sys

import numpy as np


def fail(message):
    """Bad input: the message on stderr, naming the script, and exit code 2 (as srbench's)."""
    print(f"{os.path.basename(sys.argv[0])}: {message}", file=sys.stderr)
    sys.exit(2)


def open_suite(path):
    """The suite file, opened read-only with h5py; a missing or unreadable file fails clearly."""
    import h5py

    if not os.path.exists(path):
        fail(f"{path}: no such file")
    try:
        return h5py.File(path, "r")
    except OSError as e:
        fail(f"{path}: not a readable HDF5 suite file ({e})")


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def bootstrap(values, reps=10000, seed=0):
    """95% percentile bootstrap interval of the mean of values (NaN, NaN when fewer than 2)."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(reps, values.size))].mean(axis=1)
    return (float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)))


def iter_runs(f, tasks=(), models=()):
    """(run group, (entry, model, grid)) of every run in the suite's order (the summary's; runs it
    does not list after them), keeping those whose entry or task is in tasks and whose model is in
    models (an empty filter keeps all)."""
    if "runs" not in f:
        fail(f"{f.filename}: no /runs group: not an srbench suite file")
    ids = list(f["runs"])
    if "summary" in f and "run_id" in (f["summary"].dtype.names or ()):
        listed = [text(r) for r in f["summary"]["run_id"][:]]
        known = set(listed)
        ids = [r for r in listed if r in f["runs"]] + [r for r in ids if r not in known]
    for rid in ids:
        g = f["runs"][rid]
        a = g.attrs
        entry, model, grid = text(a["entry"]), text(a["model"]), text(a.get("grid", ""))
        if tasks and entry not in tasks and text(a["task"]) not in tasks:
            continue
        if models and model not in models:
            continue
        yield g, (entry, model, grid)


def srbench_path(given=""):
    """The srbench binary: `given`, else this checkout's build/harness/srbench, else srbench on PATH."""
    if given:
        return given
    built = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "harness", "srbench")
    return built if os.path.exists(built) else "srbench"


def checkpoint_run(path):
    """The one run of a run file saved with `save_checkpoint: true` (results/<suite>/runs/<id>.h5):
    {task, params (the resolved config's, as given there), data_seed, entry, model, seed, fitted}; a file
    with another number of runs or without a checkpoint fails clearly."""
    import yaml

    with open_suite(path) as f:
        runs = list(f["runs"]) if "runs" in f else []
        if len(runs) != 1:
            fail(f"{path}: holds {len(runs)} runs; give the run files of a suite (results/<suite>/runs/*.h5)")
        g = f["runs"][runs[0]]
        if "checkpoint" not in g:
            fail(f"{path}: run {runs[0]} has no checkpoint (train it with `save_checkpoint: true`)")
        cfg = yaml.safe_load(text(g.attrs["config"]))
        return dict(task=cfg["task"], params=dict(cfg.get("params") or {}),
                    data_seed=int((cfg.get("train") or {}).get("data_seed", 0)), entry=text(g.attrs["entry"]),
                    model=text(g.attrs["model"]), seed=int(g.attrs["seed"]), fitted=int(g.attrs.get("fitted", -1)) == 1)


def add_checkpoint_options(p, examples):
    """The options of the scripts that run saved models (read_gaps.py, attention_reads.py): the run
    files, --length, --set, --examples (default `examples`) and --srbench."""
    p.add_argument("files", nargs="+", help="run files saved with save_checkpoint")
    p.add_argument("--length", type=int, required=True, help="the problem length n of the examples")
    p.add_argument("--set", action="append", default=[], help="task parameter KEY=VALUE over the run's own")
    p.add_argument("--examples", type=int, default=examples)
    p.add_argument("--srbench", default="")


def checkpoint_options(a):
    """(the --set overrides, the srbench binary) of parsed add_checkpoint_options; bad values fail."""
    if a.examples < 1:
        fail(f"--examples must be at least 1, got {a.examples}")
    return parse_sets(a.set), srbench_path(a.srbench)


def parse_sets(items):
    """{key: value} of `--set KEY=VALUE` options."""
    out = {}
    for s in items:
        if "=" not in s:
            fail(f"--set: expected KEY=VALUE, got '{s}'")
        k, v = s.split("=", 1)
        out[k] = v
    return out
