"""What the parity tests (test_parity.py, test_recurrent_parity.py) share: model.md's tolerances
and the AdamW schedule they train with, and the tolerance report — each check printed as it is
made and failures gathered, the worst measure per case and column, and the exit code; also
`run` and `sweep_run_files`, which the tests of the checkpoint scripts (tests/harness) use."""
import glob
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
