"""srbench from Python: the task generators as NumPy batches, the evaluation protocol for any
model, and results files as pandas DataFrames (docs/python.md).

    import srbench
    t = srbench.Task("dyck", k=2, label="depth")
    b = t.sample(n=12, count=64, seed=0)              # b.tokens, b.targets: int32 [64, T]
    suite = srbench.load_suite("configs/quickstart.yaml")
    for batch in suite.training_stream(entry="flipflop", seed=0): ...
    res = suite.evaluate(predict, entry="flipflop", seed=0, model="my-gru")
    res.write(suite)                                   # results/quickstart/runs/<id>.h5
    r = srbench.read_results("results/quickstart.h5")  # r.summary, r.evals, r.curves

The generators, the training stream, the evaluation and the run files are srbench's C++ code
(the extension _srbench); this file turns Python values into its text and its records into
pandas.
"""
import math
import operator

import numpy as np

from . import _srbench
from ._srbench import Batch

__version__ = _srbench.__version__
__all__ = ["tasks", "Task", "Batch", "load_suite", "Suite", "Run", "Result", "TrainingStream",
           "read_results", "Results", "__version__"]


def _text(value):
    """A parameter value as `--set key=value` would write it."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value)


def _int(name, value):
    """An integer argument: int or NumPy integer; a float (2.7, and 3.0 too) or a bool is refused
    with a TypeError naming the argument and the value, never truncated."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None


def tasks():
    """Every task: [{"name", "summary", "level", "params": [{"name", "kind", "default", "help",
    "choices"}]}], in catalogue order (as `srbench tasks`)."""
    return _srbench.tasks()


class Task:
    """A task built from parameters given as `--set` would give them: Task("dyck", k=2).
    A bad task name or parameter raises ValueError with the command line's message."""

    def __init__(self, name, data_seed=0, **params):
        self._task = _srbench.Task(name, {k: _text(v) for k, v in params.items()}, _int("data_seed", data_seed))
        self.params = dict(params)
        self.data_seed = _int("data_seed", data_seed)

    @property
    def name(self):
        return self._task.name

    @property
    def vocab(self):
        """Token names in id order (the names `srbench sample` prints)."""
        return self._task.vocab

    def max_length(self, n):
        """The longest example (in tokens) at problem length n."""
        return self._task.max_length(_int("n", n))

    def sample(self, n=8, count=1, seed=0, stream="train", index=0):
        """Examples index .. index+count-1 of `stream` under `seed` at length n, exactly those of
        `srbench sample`, right-padded as the trainer pads (token 0, target -1). Returns a Batch:
        tokens, targets int32 [count, T]; lengths, input_lengths int32 [count]."""
        return self._task.sample(_int("n", n), _int("count", count), _int("seed", seed), str(stream),
                                 _int("index", index))

    def batch(self, lengths, seed=0, stream="train", index=0):
        """One example per entry of `lengths` (example index+i at length lengths[i]), padded."""
        return self._task.batch([_int("lengths[]", n) for n in lengths], _int("seed", seed), str(stream),
                                _int("index", index))

    def __repr__(self):
        return f"srbench.Task({self.name!r}, {', '.join(f'{k}={v!r}' for k, v in self.params.items())})"


class Run:
    """One run of a suite (a task entry, model entry, grid point and seed)."""

    def __init__(self, d):
        # index, id, and the identity a run file records (task, entry, model, grid, seed, config)
        self.config_yaml = d["config"]
        for k, v in d.items():
            if k != "config":
                setattr(self, k, v)

    @property
    def config(self):
        """The resolved config (the YAML its id hashes) as a dict."""
        import yaml
        return yaml.safe_load(self.config_yaml)

    def __repr__(self):
        grid = f" · {self.grid}" if self.grid else ""
        return f"<srbench.Run {self.id} {self.entry} · {self.model}{grid} · seed {self.seed}>"


def load_suite(path, overrides=None):
    """Reads and validates a suite file, with `overrides` as `--set KEY=VALUE` pairs
    ({"train.steps": 300}). A suite that does not validate raises ValueError naming the file,
    line and YAML path."""
    pairs = [(str(k), _text(v)) for k, v in (overrides or {}).items()]
    return Suite(_srbench.load_suite(str(path), pairs))


class Suite:
    """A validated suite: its runs, the training stream of a run, and the evaluation of any
    model under its protocol."""

    def __init__(self, suite):
        self._suite = suite
        self.runs = [Run(d) for d in suite.runs()]

    @property
    def name(self):
        return self._suite.name

    @property
    def seeds(self):
        return list(self._suite.seeds)

    @property
    def text(self):
        return self._suite.text

    def training_stream(self, entry=None, seed=0, run=None):
        """The batches the built-in trainer draws for (entry, seed), in order: train.steps batches
        of train.batch examples (a TrainingStream: re-iterable, `batch(step)`, `torch_dataset()`).
        `run` (a run id) chooses the run when the runs of (entry, seed) differ in their train
        settings."""
        if entry is None and run is None:
            raise ValueError("training_stream: give entry= (and seed=) or run=")
        seed = _int("seed", seed)
        return TrainingStream(lambda: self._suite.training_stream(entry or "", seed, run or ""))

    def evaluate(self, predict, entry=None, seed=0, model="external", run=None, batch=64,
                 model_config=None, progress=None):
        """Evaluates `predict` on the evaluation sets of (entry, seed): every evaluation length
        of condition `id`, every shift at the lengths inside the training range (modadd: also
        its training pairs), the same examples built-in runs see. predict(tokens) gets int32
        [B, T] (B <= batch) and returns logits [B, T, V] (floats; loss is then measured) or
        predictions [B, T] (token ids); torch tensors are accepted. `progress`: a bar (tqdm, or a
        plain line on stderr) over the evaluation rows; None shows it when stderr is a terminal.
        Returns a Result for a run of
        model entry `model` (arch: external; `model_config`, a dict, adds keys to its model
        section)."""
        if entry is None and run is None:
            raise ValueError("evaluate: give entry= (and seed=) or run=")
        model_yaml = ""
        if model_config:
            import yaml
            model_yaml = yaml.safe_dump(dict(model_config), sort_keys=False)

        def call(tokens):
            out = predict(tokens)
            if isinstance(out, (tuple, list)):
                raise TypeError(f"predict returned a {type(out).__name__} of {len(out)}: it must return one "
                                "array, logits [B, T, V] or predictions [B, T] (for a model returning "
                                "(logits, state), pass lambda x: model(x)[0])")
            if hasattr(out, "detach"):  # a torch tensor; bfloat16 and float16 are read as float32
                import torch
                out = out.detach()
                if out.is_floating_point() and out.dtype not in (torch.float32, torch.float64):
                    out = out.float()
                out = out.cpu().numpy()
            out = np.asarray(out)
            if out.dtype == np.float16:
                out = out.astype(np.float32)
            return out

        from .progress import Progress
        bar = Progress(f"evaluate {model}", "rows", progress)
        try:
            return Result(self._suite.evaluate(call, entry or "", _int("seed", seed), str(model), run or "",
                                               _int("batch", batch), model_yaml, bar if bar.enabled else None), self)
        finally:
            bar.close()

    def train(self, run, threads=None, progress=None, checkpoint=None):
        """Trains and evaluates run `run` (the id of a run whose model entry has arch: python)
        in this process, exactly as `srbench sweep` does in a process of its own: the factory's
        model on the run's batch stream under its train settings, then the suite's evaluation.
        Returns its Result (write it with result.write(suite)); a failing model gives a Result
        with status failed (message: what failed, where), never an exception. `progress`: a bar
        over the training steps (None: when stderr is a terminal). `checkpoint`: a path where the
        trained model's state_dict is saved (torch.save)."""
        from .suite_run import train_run
        return train_run(self, str(run), threads=threads, progress=progress, checkpoint=checkpoint)

    def _trainer_batches(self, run, max_batches):
        """The first max_batches batches run_training (the built-in trainer) draws for run `run`,
        observed while it trains that run (for tests)."""
        return self._suite._trainer_batches(run, int(max_batches))


class TrainingStream:
    """The batches the built-in trainer draws for one run, in order; len() is train.steps.
    Re-iterable: every `for` over it starts at step 0 and yields the same batches (a second pass
    is never silently empty). `batch(step)` is any one of them; `torch_dataset()` the same stream
    as a torch IterableDataset that shards across DataLoader workers. Each Batch has tokens,
    targets (−1 where not scored), lengths, input_lengths (int32), and the explicit masks
    `mask` (bool [B, T]: a real token, not padding) and `loss_mask` (bool [B, T]: a scored
    position)."""

    def __init__(self, make):
        self._make = make          # () -> a fresh iterator of the extension, at step 0
        self._stream = make()      # for len, run and batch(step)

    def __len__(self):
        return len(self._stream)

    @property
    def run(self):
        """The id of the run whose batches these are."""
        return self._stream.run

    def __iter__(self):
        return self._make()

    def batch(self, step):
        """The batch of training step `step` (0 .. len − 1); IndexError outside."""
        return self._stream.batch(_int("step", step))

    def torch_dataset(self):
        """This stream as a torch.utils.data.IterableDataset (srbench.data.TrainingDataset):
        DataLoader(ds, batch_size=None, num_workers=W) yields the trainer's batches in order, as
        dicts of torch tensors."""
        from .data import TrainingDataset
        return TrainingDataset(self)

    def __repr__(self):
        return f"<srbench.TrainingStream run {self.run}: {len(self)} batches>"


class Result:
    """An external model's evaluation: metrics, rows, and a run file for the suite's results."""

    def __init__(self, res, suite):
        self._res = res
        self._suite_name = suite.name

    @property
    def run_id(self):
        return self._res.run_id

    @property
    def config(self):
        import yaml
        return yaml.safe_load(self._res.config)

    @property
    def status(self):
        """ok, or diverged when predict returned a non-finite logit at a scored position (as a
        built-in run with a non-finite loss); `message` says where."""
        return self._res.status

    @property
    def message(self):
        return self._res.message

    @property
    def metrics(self):
        """harness.md's derived metrics, as the run file records them: id_acc, ood_length_acc,
        shift_acc, shortcut_gap, steps_to_target and final_train_loss (from the curve, if added),
        ood_token_acc, fitted."""
        return self._res.metrics

    @property
    def rows(self):
        """One row per (length, condition), condition "id" first: length, condition, loss,
        token_acc, seq_acc, input_space."""
        import pandas as pd
        return pd.DataFrame(self._res._rows, columns=["length", "condition", "loss", "token_acc", "seq_acc",
                                                      "input_space"])

    @property
    def tokens_per_s(self):
        return self._res.tokens_per_s

    @tokens_per_s.setter
    def tokens_per_s(self, value):
        self._res.tokens_per_s = float(value)

    @property
    def wall_s(self):
        return self._res.wall_s

    @wall_s.setter
    def wall_s(self, value):
        self._res.wall_s = float(value)

    def add_curve(self, step, train_loss, val_acc=math.nan, lr=math.nan, grad_norm=math.nan,
                  val_token_acc=math.nan):
        """Appends a training-curve point (steps increasing); steps_to_target and
        final_train_loss follow from the curve (steps_to_target from val_token_acc under
        train.fit_metric: token_acc, which alone writes it)."""
        self._res.add_curve(int(step), float(train_loss), float(val_acc), float(lr), float(grad_norm),
                            float(val_token_acc))

    def write(self, suite, out=None):
        """Writes the run file <folder of out>/<suite>/runs/<run_id>.h5 (out defaults to
        results/<suite>.h5, as `srbench sweep`), where `srbench merge` finds it; returns its
        path."""
        if suite.name != self._suite_name:
            raise ValueError(f"write: this result is of suite '{self._suite_name}', not '{suite.name}'")
        return self._res.write(str(out) if out is not None else "")

    def __repr__(self):
        return f"<srbench.Result {self.run_id} {self.metrics}>"


from .results import Results, read_results  # noqa: E402  (pandas readers, pure Python)
