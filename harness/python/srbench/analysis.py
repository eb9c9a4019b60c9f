"""What the analysis scripts of docs/results.md share (scripts/*.py, scripts/plot_results.py): a
suite or run file opened once (its runs in the suite's order, through srbench.read_results, with
each run's HDF5 group for the arrays results.py does not read), a run file saved with its
checkpoint, the report's statistics across seeds, `--set` overrides, and the error exit.

    from srbench.analysis import bootstrap, open_suite
    with open_suite("results/ffl-256.h5") as suite:
        for g, (entry, model, grid) in suite.runs(tasks=["ffl"]):
            ... g["diag/attn_entropy"][...] ...
    lo, hi = bootstrap([0.5, 0.75, 1.0])   # the interval `srbench report` prints for these seeds
"""
import os
import sys

import numpy as np

from . import _srbench
from .results import read_results


def fail(message):
    """Bad input: the message on stderr, naming the script, and exit code 2 (as srbench's)."""
    print(f"{os.path.basename(sys.argv[0])}: {message}", file=sys.stderr)
    sys.exit(2)


def text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def read_csv(path, need, kind):
    """The rows of csv file `path` as dicts. Bad input fails (exit 2) naming the file: unreadable,
    or rows without one of the `need` columns ("not KIND (columns [...] missing)")."""
    import csv

    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: cannot read ({e.strerror})")
    missing = sorted(set(need) - set(rows[0])) if rows else []
    if missing:
        fail(f"{path}: not {kind} (columns {missing} missing)")
    return rows


def fnum(s):
    """A csv cell as a float; NaN for an empty or non-numeric cell."""
    try:
        return float(s)
    except (TypeError, ValueError):
        return float("nan")


# ---- statistics across seeds: the report's own (harness/report/stats.cpp) ------------------------

def seed_stats(values):
    """The report's statistics of one metric over seeds (NaN left out): {n, mean, std, min, median,
    max, ci_lo, ci_hi}, the numbers `srbench report` prints for the same values."""
    return _srbench.seed_stats([float(v) for v in values])


def bootstrap(values):
    """The report's 95% percentile bootstrap interval of the mean of values (nearest rank, 10,000
    resamples, its fixed generator; NaN values left out, the rest in ascending order): (lo, hi),
    (NaN, NaN) for fewer than 2 values."""
    s = seed_stats(values)
    return (s["ci_lo"], s["ci_hi"])


# ---- suite and run files -------------------------------------------------------------------------

class SuiteFile:
    """A suite file (results/<suite>.h5) or run file opened read-only: `results` (srbench.Results:
    summary, evals, curves, config), `h5` (the h5py file) and `runs()` (each run's group in the
    suite's order)."""

    def __init__(self, path, h5):
        self.path, self.h5, self._results = path, h5, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.h5.close()

    @property
    def results(self):
        if self._results is None:
            if "runs" not in self.h5:
                fail(f"{self.path}: no /runs group: not an srbench suite file")
            self._results = read_results(self.path)
        return self._results

    def run_ids(self):
        """The runs in the suite's order: the summary's, then the runs it does not list."""
        listed = [r for r in self.results.run_ids if r in self.h5["runs"]]
        known = set(listed)
        return listed + [r for r in self.h5["runs"] if r not in known]

    def runs(self, tasks=(), models=()):
        """(run group, (entry, model, grid)) of every run in the suite's order, keeping those whose
        entry or task is in tasks and whose model is in models (an empty filter keeps all)."""
        for rid in self.run_ids():
            g = self.h5["runs"][rid]
            a = g.attrs
            entry, model, grid = text(a["entry"]), text(a["model"]), text(a.get("grid", ""))
            if tasks and entry not in tasks and text(a["task"]) not in tasks:
                continue
            if models and model not in models:
                continue
            yield g, (entry, model, grid)

    def summary_rows(self):
        """The suite file's /summary as dicts of Python values, in file order ([] without one)."""
        if "summary" not in self.h5:
            return []
        return [{k: v.item() if isinstance(v, np.generic) else v for k, v in row.items()}
                for row in self.results.summary.to_dict("records")]


def open_suite(path):
    """The suite or run file at `path`, read-only; a missing or unreadable file fails clearly."""
    import h5py

    if not os.path.exists(path):
        fail(f"{path}: no such file")
    try:
        return SuiteFile(path, h5py.File(path, "r"))
    except OSError as e:
        fail(f"{path}: not a readable HDF5 suite file ({e})")


def run_config(g):
    """A run group's resolved config (the `config` attribute) as a dict; {} when absent or unreadable."""
    import yaml

    try:
        c = yaml.safe_load(text(g.attrs.get("config", ""))) or {}
    except yaml.YAMLError:
        return {}
    return c if isinstance(c, dict) else {}


def checkpoint_run(path):
    """The one run of a run file saved with `save_checkpoint: true` (results/<suite>/runs/<id>.h5):
    {task, params (the resolved config's, as given there), data_seed, entry, model, seed, fitted}; a file
    with another number of runs or without a checkpoint fails clearly."""
    with open_suite(path) as f:
        runs = list(f.h5["runs"]) if "runs" in f.h5 else []
        if len(runs) != 1:
            fail(f"{path}: holds {len(runs)} runs; give the run files of a suite (results/<suite>/runs/*.h5)")
        g = f.h5["runs"][runs[0]]
        if "checkpoint" not in g:
            fail(f"{path}: run {runs[0]} has no checkpoint (train it with `save_checkpoint: true`)")
        cfg = f.results.config(runs[0])
        return dict(task=cfg["task"], params=dict(cfg.get("params") or {}),
                    data_seed=int((cfg.get("train") or {}).get("data_seed", 0)), entry=text(g.attrs["entry"]),
                    model=text(g.attrs["model"]), seed=int(g.attrs["seed"]), fitted=int(g.attrs.get("fitted", -1)) == 1)


# ---- command lines -------------------------------------------------------------------------------

def srbench_path(given=""):
    """The srbench binary: `given`, else the one a pip install put in the package (srbench/bin),
    else the build/harness/srbench beside this module's build/python, else srbench on PATH."""
    if given:
        return given
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "bin", "srbench"), os.path.join(here, "..", "..", "harness", "srbench")):
        if os.path.exists(path):
            return path
    return "srbench"


def add_checkpoint_options(p, examples):
    """The options of the scripts that run saved models (read_gaps.py, attention_reads.py,
    quaternion_errors.py): the run
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


def checkpoint_sets(run, overrides):
    """A checkpoint_run's task parameters as srbench's `--set` text (booleans true / false, lists
    comma-joined) with `overrides` over them: (params {key: text}, the `--set KEY=VALUE` arguments in
    the order of the keys)."""
    params = {k: str(v).lower() if isinstance(v, bool) else ",".join(map(str, v)) if isinstance(v, list)
              else str(v) for k, v in run["params"].items()}
    params.update(overrides)
    return params, [x for k, v in sorted(params.items()) for x in ("--set", f"{k}={v}")]


def checkpoint_failures(exe, path, run, sets, length, examples, threads, folder):
    """{example index: predictions} of `srbench eval --failures` of the model in run file `path`
    (checkpoint_run's `run`, task parameters `sets`) on examples 0..examples−1 of the eval stream
    under the run's data seed at `length`, in distribution; an example predicted right at every
    position is absent. The failures file is written in `folder`; a failing srbench fails clearly."""
    import json
    import subprocess

    failures = os.path.join(folder, "failures.jsonl")
    cmd = [exe, "eval", "--checkpoint", path, "--task", run["task"], "--lengths", str(length), "--examples",
           str(examples), "--data-seed", str(run["data_seed"]), "--threads", str(threads), "--failures", failures] + sets
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    out = {}
    with open(failures) as f:
        for line in f:
            e = json.loads(line)
            if e["condition"] == "id":
                out[e["index"]] = e["predictions"]
    return out


def parse_sets(items):
    """{key: value} of `--set KEY=VALUE` options."""
    out = {}
    for s in items:
        if "=" not in s:
            fail(f"--set: expected KEY=VALUE, got '{s}'")
        k, v = s.split("=", 1)
        out[k] = v
    return out
