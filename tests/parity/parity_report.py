"""What the parity tests (test_parity.py, test_recurrent_parity.py, test_mamba_parity.py,
test_deltanet_parity.py) share:
model.md's tolerances and the AdamW schedule they train with, and the tolerance report — each
check printed as it is made and failures gathered, the worst measure per case and column, and the
exit code; the comparison of `srbench forward`'s output and of parity_train's steps with a
reference (compare_forward, compare_training: the recurrent and Mamba tests); also `run`,
`sweep_run_files`, `eval_examples` and `eval_failures`, which the tests of the checkpoint scripts
(tests/harness, tests/python) use."""
import glob
import json
import math
import os
import subprocess

# model.md: max|ours − ref| / max|ref| per tensor
LOGITS_TOL, LOSS_TOL, GRAD_TOL, PARAM_TOL = 1e-4, 1e-5, 1e-3, 1e-4
SPEC_ZERO_FLOOR = 1e-6  # model.md: denominator floor, × the largest gradient entry of the model
TRAIN = dict(steps_run=5, warmup=2, steps=10, lr=1e-2, weight_decay=0.01, betas=(0.9, 0.98), eps=1e-9,
             spline_lr=3e-3, router_lr=2e-2)
LIMITS = ("logits 1e-4, loss 1e-5, grads 1e-3, zero grads 1e-3 with floor 1e-6·G, step losses 1e-5, "
          "params 1e-4")

failures = []
summary = {}  # case label -> {column: worst measure}
current = [""]  # label of the case being checked


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout


def sweep_run_files(srbench, suite_text, folder):
    """Sweeps the suite `suite_text` into `folder` (made if missing) and returns its run files,
    sorted."""
    os.makedirs(folder, exist_ok=True)
    suite = os.path.join(folder, "suite.yaml")
    with open(suite, "w") as f:
        f.write(suite_text)
    run([srbench, "sweep", suite, "--jobs", "2", "--out", os.path.join(folder, "suite.h5")])
    return sorted(glob.glob(os.path.join(folder, "*", "runs", "*.h5")))


def eval_examples(srbench, task, length, count, seed, sets):
    """Examples 0..count−1 of the eval stream under data seed `seed` at `length`, as `srbench sample
    --format jsonl` gives them (task parameters `sets`: ["--set", "K=V", ...])."""
    return [json.loads(s) for s in run([srbench, "sample", task, "-n", str(length), "--count", str(count), *sets,
                                        "--format", "jsonl", "--stream", "eval", "--seed", str(seed)]).splitlines()]


def eval_failures(srbench, path, task, length, count, seed, sets, folder):
    """{example index: predictions} of `srbench eval --failures` of the model in run file `path` on
    those examples, in distribution (an example right at every position is absent)."""
    out = os.path.join(folder, "failures.jsonl")
    run([srbench, "eval", "--checkpoint", path, "--task", task, "--lengths", str(length), "--examples", str(count),
         "--data-seed", str(seed), *sets, "--failures", out])
    with open(out) as f:
        return {e["index"]: e["predictions"] for e in map(json.loads, f) if e["condition"] == "id"}


def check(label, err, tol, note="", column=None):
    """Prints the measure `err` against its limit `tol`, records it in the case's `column` of the
    summary (the worst kept) and a failure when it is above the limit; returns err <= tol."""
    if column:
        row = summary.setdefault(current[0], {})
        row[column] = max(row.get(column, 0.0), err)
    ok = err <= tol
    print(f"    {'ok  ' if ok else 'FAIL'} {label:<34} {err:10.3e}  (limit {tol:.0e}){note}")
    if not ok:
        failures.append(f"{current[0]}: {label}")
    return ok


def lr_factor(s):
    """model.md's schedule as a LambdaLR factor: (s+1)/W during warm-up, then cosine to 0.1."""
    W, S = TRAIN["warmup"], TRAIN["steps"]
    if s < W:
        return (s + 1) / W
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * (s - W) / (S - W)))


def report(columns, width, limits, passed):
    """The table of the worst measure per case (`columns`, case labels `width` wide) under the
    limits' text, then the failures; returns the exit code (1 on any failure)."""
    print(f"\nworst measure per case (limits: {limits})")
    print(f"{'case':<{width}}" + "".join(f"{c:>12}" for c in columns))
    for label, row in summary.items():
        print(f"{label:<{width}}" + "".join(f"{row[c]:>12.2e}" if c in row else f"{'-':>12}" for c in columns))
    if failures:
        print(f"\nFAILED {len(failures)} check(s): {', '.join(failures[:20])}")
        return 1
    print(f"\n{passed}")
    return 0


def compare_forward(out, logits, loss, grads, one_layer=False):
    """`srbench forward`'s output file `out` against the reference's logits, loss and gradients
    ({name: tensor}): model.md's measures, every gradient by name and shape (a gradient zero in
    theory against the floor 1e-6·G, G the largest gradient entry). `one_layer`: linear-rnn.md's
    stricter limits for one-layer models, logits 1e-5 and loss 1e-6."""
    import h5py
    from reference import relative_error
    gmax = max(float(g.abs().max()) for g in grads.values())
    with h5py.File(out, "r") as f:
        ours_logits, ours_loss = f["logits"][...], float(f["loss"][()])
        ours_grads = {n: f["grads"][n][...] for n in f["grads"]}
    check("logits", relative_error(ours_logits, logits), 1e-5 if one_layer else LOGITS_TOL, column="logits")
    check("loss", abs(ours_loss - float(loss)) / abs(float(loss)), 1e-6 if one_layer else LOSS_TOL,
          f"  ours {ours_loss:.7f} ref {float(loss):.7f}", column="loss")
    if set(ours_grads) != set(grads):
        failures.append(f"{current[0]}: gradient names")
        print(f"    FAIL gradient names: ours only {sorted(set(ours_grads) - set(grads))}, "
              f"ref only {sorted(set(grads) - set(ours_grads))}")
    for name in sorted(set(grads) & set(ours_grads)):
        if tuple(ours_grads[name].shape) != tuple(grads[name].shape):
            failures.append(f"{current[0]}: grad {name} shape")
            print(f"    FAIL grad {name}: shape {ours_grads[name].shape} vs {tuple(grads[name].shape)}")
            continue
        zero = float(grads[name].abs().max()) < 1e-12 * gmax
        check(f"grad {name}", relative_error(ours_grads[name], grads[name], SPEC_ZERO_FLOOR * gmax), GRAD_TOL,
              "  (zero in theory: floor 1e-6·G)" if zero else "", column="zero grads" if zero else "grads")


def compare_training(args, ck, batch, leaves, loss_fn, ref_grads, workdir, decays, make_loss=None):
    """TRAIN's AdamW steps of parity_train on checkpoint `ck` and `batch` against
    torch.optim.AdamW on the reference's `leaves` ({name: leaf}) and `loss_fn` (() -> (logits,
    loss)), weight decay on the leaves for which decays(name, leaf) holds; every step clips at
    0.02 of the first gradient norm (`ref_grads`'), and must: each step's loss and gradient norm,
    then every trained parameter.

    `make_loss`, when given (() -> fresh (leaves, loss_fn) of the same checkpoint), measures how
    far the reference's own trajectory moves when every gradient element gets noise of 1e-7 of the
    largest (below float32's rounding of a gradient): three seeded runs, the worst deviation of each
    step's loss, gradient norm and each parameter. Where that sensitivity exceeds model.md's limit
    (AdamW's first update lr·g/(|g| + ε) takes its sign from rounding where |g| is that small, and
    a norm's ε bend amplifies it), no float32 implementation can be held to the limit, and ours is
    held to the measured sensitivity instead; both are printed."""
    import torch
    from reference import load_checkpoint, relative_error
    norm0 = math.sqrt(sum(float((g * g).sum()) for g in ref_grads.values()))
    clip = 0.02 * norm0
    out = os.path.join(workdir, "trained.h5")
    text = run([args.parity_train, "--checkpoint", ck, "--batch", batch, "--out", out,
                "--steps-run", str(TRAIN["steps_run"]), "--steps", str(TRAIN["steps"]),
                "--warmup", str(TRAIN["warmup"]), "--schedule", "cosine", "--lr", str(TRAIN["lr"]),
                "--weight-decay", str(TRAIN["weight_decay"]), "--clip", repr(clip)])
    ours_steps = [dict(zip(line.split()[0::2], map(float, line.split()[1::2]))) for line in text.splitlines()]

    def trajectory(leaves, loss_fn, noise_seed=None):
        decay = [p for n, p in leaves.items() if decays(n, p)]
        no_decay = [p for n, p in leaves.items() if not decays(n, p)]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": TRAIN["weight_decay"]},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=TRAIN["lr"], betas=TRAIN["betas"], eps=TRAIN["eps"])
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
        gen = None if noise_seed is None else torch.Generator().manual_seed(noise_seed)
        steps = []
        for s in range(TRAIN["steps_run"]):
            opt.zero_grad()
            _, loss = loss_fn()
            loss.backward()
            if gen is not None:
                G = max(float(p.grad.abs().max()) for p in leaves.values())
                for p in leaves.values():
                    p.grad += 1e-7 * G * torch.randn(p.grad.shape, generator=gen, dtype=p.grad.dtype)
            norm = float(torch.nn.utils.clip_grad_norm_(list(leaves.values()), clip))
            steps.append((float(loss), norm))
            opt.step()
            sched.step()
        return steps

    ref_steps = trajectory(leaves, loss_fn)
    sens = {}  # label -> worst deviation of the noisy reference runs
    if make_loss is not None:
        for seed in range(3):
            noisy_leaves, noisy_loss = make_loss()
            for s, ((l, n), (l0, n0)) in enumerate(zip(trajectory(noisy_leaves, noisy_loss, seed), ref_steps)):
                sens[f"step {s} loss"] = max(sens.get(f"step {s} loss", 0.0), abs(l - l0) / abs(l0))
                sens[f"step {s} grad norm"] = max(sens.get(f"step {s} grad norm", 0.0), abs(n - n0) / n0)
            for name in leaves:
                e = relative_error(noisy_leaves[name].detach().numpy(), leaves[name].detach())
                sens[f"param {name}"] = max(sens.get(f"param {name}", 0.0), e)

    def judge(label, err, tol, column=None):
        if sens.get(label, 0.0) <= tol:
            return check(label, err, tol, column=column)
        return check(label, err, sens[label], f"  (the reference moves {sens[label]:.2e} under 1e-7·G gradient noise)",
                     column=column)

    for s, (loss, norm) in enumerate(ref_steps):
        o = ours_steps[s]
        judge(f"step {s} loss", abs(o["loss"] - loss) / abs(loss), LOSS_TOL, column="step losses")
        judge(f"step {s} grad norm", abs(o["grad_norm"] - norm) / norm, GRAD_TOL)
        if not norm > clip:
            failures.append(f"{current[0]}: step {s} did not clip")
            print(f"    FAIL step {s}: gradient norm {norm:.4g} is not above the clip {clip:.4g}")
    _, _, ours = load_checkpoint(out)
    for name in sorted(leaves):
        judge(f"param {name}", relative_error(ours[name], leaves[name].detach()), PARAM_TOL, column="params")
