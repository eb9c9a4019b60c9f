"""Python models in a suite (`arch: python`, docs/python.md "Python models in a suite"): one run's
PyTorch model trained on exactly the batches the built-in trainer draws for that run, under the
suite's train settings, evaluated under the suite's protocol, and written as the run's file.

`srbench sweep` runs `main` in a Python process of its own for every such run (and `main check`
for `--dry-run`); `Suite.train(run)` calls `train_run` in the calling process.

The factory named by `module: "package.module:factory"` is called as
factory(vocab_size, max_len, **kwargs), with device=... added when it takes a `device` parameter
(or **kwargs); it returns a torch.nn.Module — or (module, optimizer) to use its own optimiser —
whose forward maps int64 tokens [B, T] to logits [B, T, vocab_size].
"""
import argparse
import importlib
import inspect
import math
import os
import random
import sys
import time
import traceback

import numpy as np

from . import _srbench


class ModelError(Exception):
    """A failure of the model the suite names (its import, its factory, its forward): the run's
    recorded message."""


def _where(exc):
    """'file.py:12' of the innermost frame of a traceback outside srbench and torch, or ''."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = traceback.extract_tb(exc.__traceback__)
    for f in reversed(frames):
        path = os.path.abspath(f.filename)
        if not path.startswith(here) and "/torch/" not in path and "importlib" not in path:
            return f"{os.path.basename(f.filename)}:{f.lineno}"
    return ""


def _describe(exc):
    where = _where(exc)
    return f"{type(exc).__name__}: {exc}" + (f" (at {where})" if where else "")


def load_factory(module_path):
    """The callable `module_path` ("package.module:factory") names, imported from the current
    folder (then sys.path), as the sweep and the run id's source hash find it; ModelError naming
    what failed."""
    name, _, attr = module_path.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:  # as the sweep imports it: from the current folder
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 — anything the user's module raises is its failure
        raise ModelError(f"cannot import '{name}': {_describe(e)}") from e
    factory = getattr(module, attr, None)
    if factory is None:
        raise ModelError(f"module '{name}' ({getattr(module, '__file__', '?')}) has no '{attr}'")
    if not callable(factory):
        raise ModelError(f"'{module_path}' is a {type(factory).__name__}, not a function that builds the model")
    return factory


def _takes_device(factory):
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "device" or p.kind == inspect.Parameter.VAR_KEYWORD for p in params)


def build_model(prun):
    """(model, optimizer or None) from the run's factory, on the run's device."""
    import torch
    import yaml
    factory = load_factory(prun.module)
    kwargs = yaml.safe_load(prun.kwargs) or {}
    if "device" in kwargs:
        raise ModelError("kwargs: 'device' is the model entry's own key (device: ...), not a kwarg")
    if _takes_device(factory):
        kwargs["device"] = prun.device
    try:
        out = factory(prun.vocab, prun.max_len, **kwargs)
    except Exception as e:  # noqa: BLE001
        raise ModelError(f"factory '{prun.module}' raised {_describe(e)}") from e
    optimizer = None
    if isinstance(out, tuple):
        if len(out) != 2:
            raise ModelError(f"factory '{prun.module}' returned a tuple of {len(out)}: expected a torch.nn.Module "
                             "or (module, optimizer)")
        out, optimizer = out
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ModelError(f"factory '{prun.module}' returned (module, {type(optimizer).__name__}): the second "
                             "item must be a torch.optim.Optimizer")
    if not isinstance(out, torch.nn.Module):
        raise ModelError(f"factory '{prun.module}' returned a {type(out).__name__}: expected a torch.nn.Module "
                         "(or (module, optimizer))")
    return out.to(prun.device), optimizer


def forward(model, tokens, vocab):
    """logits [B, T, vocab] of model(tokens); ModelError for anything else."""
    import torch
    try:
        out = model(tokens)
    except Exception as e:  # noqa: BLE001
        raise ModelError(f"forward raised {_describe(e)}") from e
    if isinstance(out, (tuple, list)):
        raise ModelError(f"forward returned a {type(out).__name__} of {len(out)}: it must return one tensor, logits "
                         f"[B, T, {vocab}] (return only the logits, e.g. out[0])")
    if not isinstance(out, torch.Tensor):
        raise ModelError(f"forward returned a {type(out).__name__}: expected a tensor of logits [B, T, {vocab}]")
    want = (tokens.shape[0], tokens.shape[1], vocab)
    if tuple(out.shape) != want or not out.is_floating_point():
        raise ModelError(f"forward returned {'logits' if out.is_floating_point() else out.dtype} of shape "
                         f"{tuple(out.shape)} for tokens of shape {tuple(tokens.shape)}: expected float logits of "
                         f"shape {want} (vocab_size {vocab})")
    return out


def _optimizer(model, train):
    """AdamW with the suite's betas, eps and weight decay on matrices and embeddings (tensors of
    two or more dimensions) only — as the built-in models decay."""
    import torch
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ModelError("the model has no trainable parameters")
    decay = [p for p in params if p.dim() >= 2]
    rest = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": train["weight_decay"]}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW([g for g in groups if g["params"]], lr=train["lr"],
                             betas=(train["beta1"], train["beta2"]), eps=train["eps"])


def _save(model, path):
    """model.state_dict() to `path` (torch.save), written to a temporary name and renamed. The
    temporary name is the run file's (<id>.h5.tmp-<pid>-…) when `path` is <id>.pt beside it, so that
    a sweep removes it with the run's own temporaries when the run was killed."""
    import torch
    stem, ext = os.path.splitext(path)
    tmp = f"{stem}.h5.tmp-{os.getpid()}-checkpoint" if ext == ".pt" else f"{path}.tmp-{os.getpid()}"
    torch.save(model.state_dict(), tmp)
    os.replace(tmp, path)


def train_run(suite, run_id, threads=None, progress=False, checkpoint=None):
    """Trains and evaluates run `run_id` of `suite` (a srbench.Suite; the run's model entry has
    arch: python) and returns its srbench.Result. Never raises for a failing model: the Result's
    status says failed (message: what failed and where) or diverged. `checkpoint`: a path where
    the trained model's state_dict is saved (torch.save) when the run trained to its end."""
    start = time.perf_counter()
    return _train(suite, _srbench._PythonRun(suite._suite, run_id), start, threads, progress, checkpoint)


def _train(suite, prun, start, threads, progress, checkpoint):
    """train_run on the run's _PythonRun `prun` (built at time `start`)."""
    from . import Result
    from .progress import Progress
    run_id = prun.id
    train = prun.train
    status, message, train_s, eval_s, real_tokens = "ok", "", 0.0, 0.0, 0
    predict = None
    bar = Progress(f"train {run_id}", "steps", progress)
    try:
        import torch
        import torch.nn.functional as F
        if threads:
            torch.set_num_threads(int(threads))
        torch.manual_seed(prun.seed)
        random.seed(prun.seed)
        np.random.seed(prun.seed % 2**32)
        model, optimizer = build_model(prun)
        own = optimizer is not None
        if not own:
            optimizer = _optimizer(model, train)
        initial = [g["lr"] for g in optimizer.param_groups]
        params = [p for p in model.parameters() if p.requires_grad]
        device, vocab = torch.device(prun.device), prun.vocab
        clip = train["clip"] if train["clip"] > 0 else math.inf

        def predict(tokens):
            with torch.no_grad():
                model.eval()
                x = torch.from_numpy(np.ascontiguousarray(tokens)).to(device=device, dtype=torch.long)
                return forward(model, x, vocab).float().cpu().numpy()

        loss_sum, loss_n = 0.0, 0
        for step in range(train["steps"]):
            b = prun.batch(step)
            t0 = time.perf_counter()
            lr = prun.lr(step)
            for g, lr0 in zip(optimizer.param_groups, initial):
                g["lr"] = lr0 * (lr / train["lr"]) if own else lr
            model.train()
            tokens = torch.from_numpy(b.tokens).to(device=device, dtype=torch.long)
            targets = torch.from_numpy(b.targets).to(device=device, dtype=torch.long)
            optimizer.zero_grad(set_to_none=True)
            logits = forward(model, tokens, vocab)
            loss = F.cross_entropy(logits.reshape(-1, vocab).float(), targets.reshape(-1), ignore_index=-1)
            loss.backward()
            norm = float(torch.nn.utils.clip_grad_norm_(params, clip))
            value = float(loss)
            if not (math.isfinite(value) and math.isfinite(norm)):
                status, message = "diverged", f"non-finite loss or gradient at step {step}"
                break
            optimizer.step()
            train_s += time.perf_counter() - t0
            real_tokens += int(b.lengths.sum())
            loss_sum, loss_n = loss_sum + value, loss_n + 1
            if (step + 1) % train["eval_every"] == 0 or step + 1 == train["steps"]:
                e0 = time.perf_counter()
                seq_acc, token_acc = prun.validate(predict)
                eval_s += time.perf_counter() - e0
                prun.add_curve(step + 1, loss_sum / loss_n, seq_acc, lr, norm,
                               token_acc if train["fit_metric"] == "token_acc" else math.nan)
                loss_sum, loss_n = 0.0, 0
            bar(step + 1, train["steps"])
    except ModelError as e:
        status, message = "failed", str(e)
    except Exception as e:  # noqa: BLE001 — the run fails, recorded; the sweep goes on
        traceback.print_exc()
        status, message = "failed", _describe(e)
    finally:
        bar.close()
    tokens_per_s = real_tokens / train_s if train_s > 0 else 0.0
    if checkpoint and status == "ok":
        try:
            _save(model, checkpoint)
        except Exception as e:  # noqa: BLE001
            status, message = "failed", f"cannot save the checkpoint {checkpoint}: {_describe(e)}"
    try:
        res = prun.finish(predict if status == "ok" else None, status, message, tokens_per_s, eval_s)
    except ModelError as e:  # the final evaluation's forward
        res = prun.finish(None, "failed", str(e), tokens_per_s, eval_s)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        res = prun.finish(None, "failed", _describe(e), tokens_per_s, eval_s)
    res.wall_s = time.perf_counter() - start
    return Result(res, suite)


def check_run(suite, run_id):
    """'' when run `run_id`'s model imports, builds and maps tokens [2, T] to logits [2, T, V];
    else what failed (for `sweep --dry-run`)."""
    try:
        import torch
        prun = _srbench._PythonRun(suite._suite, run_id)
        torch.manual_seed(prun.seed)
        model, _ = build_model(prun)
        T = max(1, min(prun.max_len, 8))
        with torch.no_grad():
            forward(model.eval(), torch.zeros((2, T), dtype=torch.long, device=torch.device(prun.device)), prun.vocab)
    except ModelError as e:
        return str(e)
    except Exception as e:  # noqa: BLE001
        return _describe(e)
    return ""


def main(argv=None):
    """The sweep's entry: `run --file F --run ID --index I --out PATH --threads N --commit C`,
    `check --file F --run ID ...` (the suite's text on stdin for both), or `setup` (the module's
    commit and folder)."""
    from . import Suite
    ap = argparse.ArgumentParser(prog="srbench.suite_run")
    ap.add_argument("command", choices=["run", "check", "setup"])
    ap.add_argument("--file")
    ap.add_argument("--run", action="append")
    ap.add_argument("--index", type=int)
    ap.add_argument("--out")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--commit", default="")
    args = ap.parse_args(argv)
    if args.command == "setup":
        print(f"srbench-setup\t{_srbench.__commit__}\t{os.path.dirname(os.path.abspath(__file__))}", flush=True)
        return 0
    suite = Suite(_srbench.load_suite_text(sys.stdin.read(), args.file))
    if args.command == "check":
        for run_id in args.run:
            why = check_run(suite, run_id)
            line = "\t".join(["srbench-check", run_id] + (["ok"] if not why else ["error", " ".join(why.split())]))
            print(line, flush=True)
        return 0
    run_id = args.run[0]
    ids = {r.id for r in suite.runs}
    if run_id not in ids:
        now = next((r.id for r in suite.runs if r.index == args.index), "?")
        sys.stderr.write(f"srbench: run {run_id}: the model's source changed after the sweep started (the run is now "
                         f"{now}): run the sweep again\n")
        return 5
    if args.commit and args.commit != _srbench.__commit__:
        sys.stderr.write(f"srbench: the srbench module {os.path.dirname(os.path.abspath(__file__))} imported by "
                         f"{sys.executable} was built from {_srbench.__commit__}, the sweep's binary from {args.commit}: "
                         "its training stream may differ; rebuild, or give the suite a `python:` whose srbench is "
                         "the binary's\n")
        return 6
    start = time.perf_counter()
    prun = _srbench._PythonRun(suite._suite, run_id)
    # train.save_checkpoint: the model's state_dict beside the run file, <run id>.pt
    checkpoint = os.path.splitext(args.out)[0] + ".pt" if prun.train["save_checkpoint"] else None
    res = _train(suite, prun, start, args.threads, False, checkpoint)
    res._res._write_to(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
