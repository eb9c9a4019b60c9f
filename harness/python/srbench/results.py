"""srbench's results files as pandas DataFrames (docs/harness.md, "Results (HDF5)"): a suite file
(results/<suite>.h5, with /summary) or a single run file (results/<suite>/runs/<id>.h5)."""
import h5py
import numpy as np
import pandas as pd

from . import _srbench

_EVAL_COLUMNS = ["loss", "token_acc", "seq_acc", "seen_frac", "input_space"]
_CURVE_COLUMNS = ["step", "train_loss", "val_acc", "lr", "grad_norm"]


def _str(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def _attr(group, name, default=None):
    if name not in group.attrs:
        return default
    v = group.attrs[name]
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, np.generic):
        return v.item()
    return v


class Results:
    """A results file read into pandas:
    summary  one row per run (the suite file's /summary; for a run file, built from its attributes)
    evals    run_id, length, condition (its name), loss, token_acc, seq_acc, seen_frac, input_space
    curves   run_id, step, train_loss, val_acc, lr, grad_norm (and val_token_acc when some run has it)
    config(run_id)  the run's resolved config as a dict; suite_yaml the suite text."""

    def __init__(self, path):
        self.path = str(path)
        with h5py.File(self.path, "r") as f:
            if "runs" not in f:
                raise ValueError(f"{self.path}: not an srbench results file (no /runs)")
            self.suite_yaml = _attr(f, "suite", "")
            self.srbench_version = _attr(f, "srbench_version", "")
            self.srbench_commit = _attr(f, "srbench_commit", "")  # "" in files from before it was recorded
            runs = f["runs"]
            if "summary" in f:
                table = f["summary"][:]
                self.summary = pd.DataFrame({name: [_str(v) for v in table[name]] if table.dtype[name].kind in "OSU"
                                             else table[name] for name in table.dtype.names})
                order = list(self.summary["run_id"])
            else:
                order = sorted(runs.keys())
                self.summary = pd.DataFrame([self._summary_of(i, runs[i]) for i in order])
            self._configs = {i: _attr(runs[i], "config", "") for i in order}
            evals, curves = [], []
            for run_id in order:
                g = runs[run_id]
                if "eval" in g:  # a hand-made run file may hold only some groups
                    evals.append(self._evals_of(run_id, g["eval"]))
                if "curve" in g:
                    c = g["curve"]
                    # val_token_acc: only runs under train.fit_metric: token_acc have it (NaN for the others)
                    columns = _CURVE_COLUMNS + (["val_token_acc"] if "val_token_acc" in c else [])
                    curves.append(pd.DataFrame({"run_id": run_id, **{k: c[k][:] for k in columns}}))
        self.evals = pd.concat(evals, ignore_index=True) if evals else pd.DataFrame(
            columns=["run_id", "length", "condition"] + _EVAL_COLUMNS)
        self.curves = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(
            columns=["run_id"] + _CURVE_COLUMNS)

    @staticmethod
    def _evals_of(run_id, e):
        conditions = [_str(c) for c in e["conditions"][:]]
        rows = {"run_id": run_id, "length": e["length"][:], "condition": [conditions[c] for c in e["condition"][:]]}
        for c in _EVAL_COLUMNS:
            rows[c] = e[c][:] if c in e else np.full(len(e["length"]), np.nan)
        return pd.DataFrame(rows)

    @staticmethod
    def _summary_of(run_id, g):
        """A run file's /summary row: the suite file's columns, from the run group's attributes."""
        row = {"run_id": run_id}
        for k in _srbench.summary_columns():
            if k != "run_id":
                row[k] = _attr(g, k, np.nan)
        return row

    @property
    def run_ids(self):
        return list(self._configs)

    def config(self, run_id):
        """The resolved config of run `run_id` as a dict."""
        import yaml
        if run_id not in self._configs:
            raise KeyError(f"{self.path}: no run '{run_id}'")
        return yaml.safe_load(self._configs[run_id])

    def __repr__(self):
        return f"<srbench.Results {self.path}: {len(self.summary)} runs>"


def read_results(path):
    """Reads a suite file or a run file: Results with .summary, .evals, .curves, .config(run_id)."""
    return Results(path)
