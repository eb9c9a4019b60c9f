#!/usr/bin/python3
"""Side-by-side training throughput, ours against PyTorch (docs/performance.md); run by
scripts/bench.sh after a Release build.

    run_bench.py --build build [--repeats 5] [--steps 8] [--skip-sweep] [--configs S,M,L] [--threads 1,2]
                 [--archs rnn,lstm,gru] [--rnn-configs R1,R2] [--linear-archs mamba,deltanet,gla] [--recurrent-only]
                 [--skip-eval] [--eval-lengths 128,512,1024,2048] [--eval-archs transformer,rnn,lstm,gru]
                 [--tiny-only] [--torch-core auto|default|NAME]

For each configuration and thread count it runs bench_model and bench/reference_torch.py in
turn (ours, PyTorch, ours, PyTorch, … so that both see the same noise), each a separate process,
and prints medians over the repeats: train tokens/s, their ratio, our FLOP utilisation against a
core's float32 GEMM rate measured in this run (Eigen's 512x512 product, as performance.md defines
it, timed by bench_eigen with Eigen's own vector code, and the same product on our own kernel), and
peak resident memory (ru_maxrss) of each.
PyTorch runs with OPENBLAS_CORETYPE set to the OpenBLAS kernels of the ISA our build targets
(SkylakeX for AVX-512, Haswell for AVX2; --torch-core to choose) and OPENBLAS_L2_SIZE unset, for
its command alone; its loss is checked against a run with the caller's settings. Then the recurrent models of recurrent.md (rnn, lstm,
gru) against torch.nn.RNN / LSTM / GRU in the same way, with their utilisation against a core's
FMA peak (bench_model --peak) and GEMM rates; and linear-rnn.md's models (mamba, deltanet, gla) against
their references' naive recurrences in PyTorch (a loop over time, autograd), each beside our
transformer and lstm of about its parameter count. Then our step time as T grows (d_model 128), the
long-T evaluation rows (long_eval: `srbench eval` at T = 128 … 2048 beside PyTorch's forward
under torch.no_grad(), time and peak memory of each process, the transformer and the recurrent
models; --skip-eval leaves them out), and
runs/hour of a configs/quickstart.yaml sweep with --jobs 1 and --jobs 2, and the share of the
runs' time that evaluation took in it and in a configs/chomsky-quick.yaml sweep (--jobs 2); last,
a sweep of 200 tiny runs of 100 steps (runs/hour) and the fixed cost of a run (tiny_suite).
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CONFIGS = {"S": (64, 2, 4, 32, 32), "M": (128, 2, 4, 64, 32), "L": (256, 4, 8, 128, 16)}  # d, layers, heads, T, batch
RNN_CONFIGS = {"R1": (128, 2, 1, 64, 32), "R2": (256, 2, 1, 128, 16)}  # d, layers, (heads: unused), T, batch
GATES = {"rnn": 1, "lstm": 4, "gru": 3}
TARGETS = {"rnn": 1.25, "lstm": 1.5, "gru": 1.5}  # ours / PyTorch train tokens/s at 1 thread (issue 16)
VOCAB = 32
# linear-rnn.md's models against their references' naive CPU recurrences (issue 37): d 128, 2 layers,
# batch 32, T 64 and 256, 1 thread; ours / PyTorch train tokens/s at least 5. heads 4: deltanet's
# and gla's default (bench_model sets the heads of every arch but recurrent.md's; mamba has none)
LINEAR_CONFIGS = {"T64": (128, 2, 4, 64, 32), "T256": (128, 2, 4, 256, 32)}
LINEAR_TARGET = 5.0
# beside each, ours of about the same parameter count (arch, d, heads; 2 layers): mamba d 128 (242k)
# beside a transformer d 96 (255k) and an lstm d 128 (272k); deltanet d 128 (537k, its SwiGLU MLP of
# 512 the most of it) beside a transformer d 144 (548k) and an lstm d 180 (533k); gla d 128 (539k, the
# same MLP) beside the same two
LINEAR_PEERS = {"mamba": [("transformer", 96, 4), ("lstm", 128, 1)],
                "deltanet": [("transformer", 144, 4), ("lstm", 180, 1)],
                "gla": [("transformer", 144, 4), ("lstm", 180, 1)]}


def parse(line):
    return {k: float(v) for k, v in (f.split("=") for f in line.split())}


def run(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout.strip().splitlines()
    return parse(out[-1])


# OpenBLAS chooses its kernels from the CPU's model number; a CPU newer than the library (Debian
# 12's OpenBLAS 0.3.21 on a Sapphire Rapids Xeon, for one) falls back to its SSE3 "Prescott"
# kernels, a third of the speed its AVX2 kernels reach there, which would flatter every ratio.
# So PyTorch runs with OPENBLAS_CORETYPE set to the kernels of the vector width our build targets
# (SkylakeX for AVX-512, Haswell for AVX2 + FMA): both sides at the same ISA. --torch-core names
# another core, or `default` for OpenBLAS's own choice; both are printed.
TORCH_ENV = {}


def torch_env(keep_openblas=False):
    env = dict(os.environ)
    if not keep_openblas:
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
        env.update(TORCH_ENV)
    return env


def openblas_core(env):
    """The kernels OpenBLAS selects under `env` (its OPENBLAS_VERBOSE=2 line `Core: NAME`)."""
    out = subprocess.run(["/usr/bin/python3", "-c", "import torch; torch.ones(4, 4) @ torch.ones(4, 4)"],
                         capture_output=True, text=True, env={**env, "OPENBLAS_VERBOSE": "2"})
    m = re.search(r"Core: (\S+)", out.stderr + out.stdout)
    return m.group(1) if m else "unknown"


def build_isa(srbench):
    """The widest vector extension the srbench build targets: AVX-512, AVX2 or none."""
    v = subprocess.run([srbench, "--version"], capture_output=True, text=True).stdout
    return "AVX-512" if "AVX-512" in v else ("AVX2" if "AVX2" in v else "none")


def choose_torch_core(choice, srbench):
    default = openblas_core(torch_env(False))
    if choice == "auto":
        choice = {"AVX-512": "SkylakeX", "AVX2": "Haswell"}.get(build_isa(srbench), "default")
    if choice != "default":
        TORCH_ENV["OPENBLAS_CORETYPE"] = choice
    used = openblas_core(torch_env(False))
    print(f"PyTorch's OpenBLAS kernels: {used} (OPENBLAS_CORETYPE={TORCH_ENV.get('OPENBLAS_CORETYPE', 'unset')}; "
          f"OpenBLAS's own choice on this CPU: {default})")


def shape_args(d, layers, heads, T, batch):
    return ["--d", str(d), "--layers", str(layers), "--heads", str(heads), "--T", str(T), "--batch", str(batch)]


def side_by_side(ours, theirs):
    """Ours and PyTorch's median tokens/s over interleaved repeats, and each pair's ratio ours_i / torch_i."""
    return (statistics.median(r["tok_s"] for r in ours), statistics.median(r["tok_s"] for r in theirs),
            [x["tok_s"] / y["tok_s"] for x, y in zip(ours, theirs)])


def flops_per_token(d, layers, heads, T, batch):
    # 6 · non-embedding parameters + 6 · layers · T · d (attention, causal half)
    per_layer = 12 * d * d + 9 * d + 4 * d  # q|k|v, o, fc, proj weights and biases; two norms
    params = layers * per_layer + 2 * d + VOCAB * d + VOCAB
    return 6 * params + 6 * layers * T * d


def recurrent_flops_per_token(arch, d, layers, heads, T, batch):
    """6 · non-embedding parameters (model FLOPs: forward 2, backward 4 per parameter and token), and
    what srbench executes: layer 0's input side W_ih·x is computed per vocabulary entry (V columns
    instead of T·batch), so its 6·|W_ih| per token are left out."""
    G = GATES[arch]
    params = layers * (2 * G * d * d + 2 * G * d) + VOCAB * d + VOCAB
    model = 6 * params
    executed = model - (6 * G * d * d if VOCAB < T * batch else 0)
    return model, executed


def child_peak(cmd, env=None):
    """(wall s, peak RSS MB of that child alone, stdout): os.wait4 on the child's pid."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.time() - t0
    out, err = p.stdout.read().decode(), p.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.strip()}")
    return dt, usage.ru_maxrss / 1024, out


def eval_share(sweep_output):
    """The sweep's own account of its evaluation's share of the runs' time (its last line)."""
    lines = [x for x in sweep_output.splitlines() if "evaluation took" in x]
    return lines[-1].split("; ", 1)[-1].strip() if lines else "(no evaluation share printed)"


TINY_SUITE = """name: tiny
seeds: [{seeds}]
defaults:
  model: {{layers: 2, d_model: 32, heads: 4, max_len: 32}}
  train: {{steps: {steps}, batch: 16, lr: 3e-3, warmup: 10, eval_every: {steps}, length: [1, 8]}}
  eval: {{lengths: [8, 16], examples: 64, val_examples: 64}}
tasks:
  - task: parity
  - task: flipflop
  - task: modcount
  - task: dyck
"""


def tiny_sweep(srbench, steps, tmp):
    """Wall seconds and CPU seconds (user + system, the sweep and its workers) of one --jobs 2 sweep
    of TINY_SUITE (4 tasks x 50 seeds = 200 runs)."""
    path = os.path.join(tmp, f"tiny-{steps}.yaml")
    with open(path, "w") as f:
        f.write(TINY_SUITE.format(seeds=", ".join(map(str, range(50))), steps=steps))
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    subprocess.run([srbench, "sweep", path, "--jobs", "2", "--threads", "1", "--out", os.path.join(tmp, f"tiny-{steps}.h5")],
                   check=True, capture_output=True, text=True)
    wall = time.time() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def tiny_suite(srbench, repeats):
    """Runs/hour of a 200-run suite of 100-step runs (--jobs 2), and a run's fixed cost: the same
    suite at 1 training step (what is left: process start, task set-up, the validation and final
    evaluation, the run file, the merge), and that cost's share of a 100-step run. Each the median
    of up to 3 sweeps."""
    print()
    print("a sweep of many tiny runs: 200 runs (parity, flipflop, modcount, dyck x 50 seeds), d_model 32, 2 layers,"
          " batch 16, lengths 1..8, eval 64 examples at 8 and 16, --jobs 2 --threads 1")
    walls, cpus = {}, {}
    for steps in (100, 1):
        times, cpu = [], []
        for _ in range(max(1, min(repeats, 3))):
            tmp = tempfile.mkdtemp(prefix="srbench-bench-")
            try:
                wall, secs = tiny_sweep(srbench, steps, tmp)
                times.append(wall), cpu.append(secs)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        walls[steps], cpus[steps] = statistics.median(times), statistics.median(cpu)
        print(f"train.steps={steps:<4}: {walls[steps]:6.1f} s (median of {len(times)}), {200 * 3600 / walls[steps]:8.0f} runs/hour,"
              f" {2 * walls[steps] / 200 * 1e3:6.1f} ms of a core per run ({cpus[steps] / 200 * 1e3:.1f} ms of CPU time)",
              flush=True)
    # The wall figure assumes both cores are the sweep's; the CPU time (user + system of the sweep
    # and its workers) also holds beside other work.
    print(f"fixed cost of a run (the 1-step suite's core time per run): {2 * walls[1] / 200 * 1e3:.1f} ms,"
          f" {walls[1] / walls[100]:.1%} of a 100-step run; CPU time {cpus[1] / 200 * 1e3:.1f} ms,"
          f" {cpus[1] / cpus[100]:.1%} of a 100-step run's")


EVAL_EXAMPLES = 256  # issue 18's rows: a 2-layer d 128 model (4 heads) on 256 parity examples
EVAL_TARGET_RATIO = 3.0  # ours / PyTorch tokens/s at T >= 512
EVAL_TARGET_MB = 400  # our whole process at T = 2048


def long_eval(srbench, py, ref, lengths, repeats, archs):
    """Forward-only evaluation at long T: `srbench eval` of a freshly initialised 2-layer d 128
    model on 256 parity examples (the whole process: start, task set-up, evaluation; 1 thread)
    beside PyTorch's forward of the same model under torch.no_grad() (batch 32, 1 thread, its
    whole process for the memory, its evaluation loop for the time). Medians over the repeats of
    the time; the largest peak. The targets are the transformer's; the recurrent rows (rnn, lstm,
    gru beside torch.nn.RNN / LSTM / GRU) have none."""
    d, layers, heads, vocab = 128, 2, 4, 4  # parity's vocabulary: 0, 1 and the two states' labels
    print()
    print(f"long-T evaluation: srbench eval, {layers} layers, d_model {d} (the transformer: {heads} heads), "
          f"{EVAL_EXAMPLES} parity examples (1 thread) beside PyTorch's forward under torch.no_grad() (batch 32, "
          f"1 thread)")
    tmp = tempfile.mkdtemp(prefix="srbench-eval-")
    ok = True
    try:
        print(f"{'model':<13}{'T':>6}{'ours s':>9}{'ours MB':>9}{'ours tok/s':>12}{'PyTorch tok/s':>15}"
              f"{'PyTorch MB':>12}{'ratio':>8}  target")
        for arch in archs:
            ck = os.path.join(tmp, f"{arch}.h5")
            shape = ["--set", f"heads={heads}"] if arch == "transformer" else ["--set", f"arch={arch}"]
            subprocess.run([srbench, "init-checkpoint", "--vocab", str(vocab), "--set", f"layers={layers}", "--set",
                            f"d_model={d}", *shape, "--set", f"max_len={max(lengths)}", "--out", ck],
                           check=True, capture_output=True)
            for T in lengths:
                ours, theirs = [], []
                for _ in range(repeats):
                    ours.append(child_peak([srbench, "eval", "--checkpoint", ck, "--task", "parity", "--lengths",
                                            str(T), "--examples", str(EVAL_EXAMPLES), "--threads", "1"]))
                    dt, mb, out = child_peak([py, ref, "--arch", arch, "--d", str(d), "--layers", str(layers),
                                              "--heads", str(heads), "--T", str(T), "--batch", "32", "--vocab",
                                              str(vocab), "--threads", "1", "--eval-examples", str(EVAL_EXAMPLES)],
                                             torch_env(False))
                    theirs.append((parse(out.strip().splitlines()[-1])["tok_s"], mb))
                s_ours = statistics.median(x[0] for x in ours)
                mb_ours = max(x[1] for x in ours)
                tok_ours = EVAL_EXAMPLES * T / s_ours
                tok_torch = statistics.median(x[0] for x in theirs)
                mb_torch = max(x[1] for x in theirs)
                ratio = tok_ours / tok_torch
                checks = []
                if arch == "transformer" and T >= 512:
                    checks.append(f">={EVAL_TARGET_RATIO:g} " + ("ok" if ratio >= EVAL_TARGET_RATIO else "MISSED"))
                    ok = ok and ratio >= EVAL_TARGET_RATIO
                if arch == "transformer" and T == 2048:
                    checks.append(f"<={EVAL_TARGET_MB}MB " + ("ok" if mb_ours <= EVAL_TARGET_MB else "MISSED"))
                    ok = ok and mb_ours <= EVAL_TARGET_MB
                print(f"{arch:<13}{T:>6}{s_ours:>9.2f}{mb_ours:>9.0f}{tok_ours:>12.0f}{tok_torch:>15.0f}"
                      f"{mb_torch:>12.0f}{ratio:>8.2f}  {', '.join(checks) or '-'}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ok


def machine_line(srbench):
    """What was measured on: the CPU, its vector extensions, and the build (`srbench --version`)."""
    model, flags = "unknown CPU", set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = "AVX-512" if "avx512f" in flags else ("AVX2+FMA" if {"avx2", "fma"} <= flags else "no AVX2")
    build = subprocess.run([srbench, "--version"], capture_output=True, text=True).stdout
    build = next((l[len("build: "):] for l in build.splitlines() if l.startswith("build: ")), "unknown build")
    return f"measured on: {model}, {os.cpu_count()} cores, {isa}; srbench build: {build}"


def linear_rows(bench, py, ref, archs, repeats, steps):
    """linear-rnn.md's models against the references' naive recurrences in PyTorch (bench/
    reference_torch.py's MambaMixer, DeltaNetMixer, GLAMixer), 1 thread, interleaved as above; after each, ours
    for a transformer and an lstm of about its parameter count at the same shapes (LINEAR_PEERS).
    Both sides' parameter counts are printed; a difference is flagged."""
    print()
    print(f"linear RNNs (linear-rnn.md) against their references' PyTorch CPU path (a loop over time, autograd, "
          f"AdamW), 1 thread, medians of {repeats} runs x {steps} steps; d 128, 2 layers, batch 32 (deltanet, gla: "
          f"4 heads); target: ours / PyTorch >= {LINEAR_TARGET:g}")
    print(f"{'arch':<20}{'cfg':<6}{'params':>8}{'ours tok/s':>12}{'torch tok/s':>13}{'ratio':>7}{'min-max':>11}"
          f"{'target':>9}{'ours MB':>9}{'torch MB':>10}{'ours loss':>11}{'torch loss':>11}{'torch params':>14}")
    for arch in archs:
        for name, shp in LINEAR_CONFIGS.items():
            ours, theirs = [], []
            for _ in range(repeats):
                ours.append(run([bench, "--run", "--arch", arch, *shape_args(*shp), "--threads", "1", "--steps", str(steps)]))
                theirs.append(run([py, ref, "--arch", arch, *shape_args(*shp), "--threads", "1", "--steps", str(steps)],
                                  torch_env(False)))
            o, t, pairs = side_by_side(ours, theirs)
            target = ("met" if o / t >= LINEAR_TARGET else "MISSED") + f" {LINEAR_TARGET:g}"
            p_ours, p_torch = int(ours[-1]["params"]), int(theirs[-1]["params"])
            print(f"{arch:<20}{name:<6}{p_ours:>8}{o:>12.0f}{t:>13.0f}{o / t:>7.2f}"
                  f"{min(pairs):>6.2f}-{max(pairs):<4.2f}{target:>9}"
                  f"{max(r['maxrss_kb'] for r in ours) / 1024:>9.1f}{max(r['maxrss_kb'] for r in theirs) / 1024:>10.1f}"
                  f"{ours[-1]['loss']:>11.4f}{theirs[-1]['loss']:>11.4f}{p_torch:>14}"
                  f"{'' if p_torch == p_ours else '  PARAMETER COUNTS DIFFER'}", flush=True)
        for peer, d, heads in LINEAR_PEERS.get(arch, []):
            for name, (_, layers, _, T, batch) in LINEAR_CONFIGS.items():
                r = [run([bench, "--run", "--arch", peer, *shape_args(d, layers, heads, T, batch), "--threads", "1",
                          "--steps", str(steps)]) for _ in range(repeats)]
                label = f" {peer} d {d}"
                print(f"{label:<20}{name:<6}{int(r[-1]['params']):>8}{statistics.median(x['tok_s'] for x in r):>12.0f}"
                      f"{'(ours only)':>13}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--configs", default="S,M,L")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--archs", default="rnn,lstm,gru", help="recurrent archs to compare ('' for none)")
    ap.add_argument("--rnn-configs", default="R1,R2")
    ap.add_argument("--linear-archs", default="mamba,deltanet,gla",
                    help="linear-rnn.md's models against their references' PyTorch path ('' for none)")
    ap.add_argument("--recurrent-only", action="store_true",
                    help="only the GEMM rates and the recurrent rows (no transformer table, T scaling or sweep)")
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--tiny-only", action="store_true", help="only the sweep of 200 tiny runs and a run's fixed cost")
    ap.add_argument("--sweep-steps", type=int, default=300)
    ap.add_argument("--skip-eval", action="store_true", help="leave out the long-T evaluation rows")
    ap.add_argument("--eval-lengths", default="128,512,1024,2048")
    ap.add_argument("--eval-archs", default="transformer,rnn,lstm,gru", help="the long-T evaluation's models")
    ap.add_argument("--torch-core", default="auto",
                    help="OPENBLAS_CORETYPE for PyTorch: auto (the ISA our build targets: SkylakeX or Haswell), "
                         "default (OpenBLAS's own choice) or a core name")
    a = ap.parse_args()
    bench = os.path.join(a.build, "bench", "bench_model")
    bench_eigen = os.path.join(a.build, "bench", "bench_eigen")
    srbench = os.path.join(a.build, "harness", "srbench")
    py = "/usr/bin/python3"
    ref = os.path.join(HERE, "reference_torch.py")
    threads = [int(t) for t in a.threads.split(",")]
    t_start = time.time()
    print(machine_line(srbench))
    choose_torch_core(a.torch_core, srbench)
    if a.tiny_only:
        tiny_suite(srbench, a.repeats)
        return 0

    # the best of 3 processes (each the median of 15 products): other load only ever lowers it.
    # Eigen's rate comes from bench_eigen, built with Eigen's own vector code (srbench and
    # bench_model are built with EIGEN_DONT_VECTORIZE, under which Eigen's products are scalar).
    eigen_outs = [subprocess.run([bench_eigen, "--gemm"], check=True, capture_output=True, text=True).stdout.strip().splitlines()
                  for _ in range(3)]
    gflops = max(parse(o[-1])["gflops"] for o in eigen_outs)
    sgemm_gflops = max(run([bench, "--gemm"])["sgemm_gflops"] for _ in range(3))
    print(f"core float32 GEMM rate (Eigen 3.4 with its vector code: {eigen_outs[0][0]}; 512x512, 1 thread, best of 3): "
          f"{gflops:.1f} GFLOP/s")
    print(f"the same product on our kernel (model/sgemm):                 {sgemm_gflops:.1f} GFLOP/s")
    # a core's FMA peak: independent chains of the widest vector the build targets, in CPU time
    outs = [subprocess.run([bench, "--peak"], check=True, capture_output=True, text=True).stdout.strip().splitlines()
            for _ in range(3)]
    peak = max(parse(o[-1])["peak_gflops"] for o in outs)
    unit = outs[0][0]  # its first line names the vector unit and the loop
    print(f"core FMA peak (bench_model --peak, in CPU time, best of 3; {unit}):  {peak:.1f} GFLOP/s")

    configs = [] if a.recurrent_only else [x for x in a.configs.split(",") if x]
    # PyTorch's loss with the caller's OPENBLAS_* settings and with the kernels chosen above: the
    # same model, only the speed differs.
    s = CONFIGS["S"]
    l_set = run([py, ref, *shape_args(*s), "--steps", "3"], torch_env(True))["loss"]
    l_unset = run([py, ref, *shape_args(*s), "--steps", "3"], torch_env(False))["loss"]
    ok = abs(l_set - l_unset) <= 1e-4 * abs(l_set)
    print(f"PyTorch loss after 6 steps, caller's OPENBLAS_* {l_set:.6f} / chosen kernels {l_unset:.6f}: "
          f"{'same' if ok else 'DIFFERENT'}")

    if configs:
        print()
        print(f"train tokens/s, medians of {a.repeats} runs x {a.steps} steps (after 3 warm-up); "
              "util = ours FLOP/s / (threads x core GEMM rate), util/sgemm the same against our kernel's rate, "
              "util/peak and torch/peak ours and PyTorch's FLOP/s against threads x the FMA peak; pairs: the median, "
              "smallest and largest of the repeats' ratios ours_i / torch_i (interleaved pairs: the spread is the "
              "machine's noise)")
        print(f"{'cfg':<4}{'thr':>4}{'ours tok/s':>12}{'torch tok/s':>13}{'ratio':>7}{'pairs':>19}{'util':>7}{'util/sgemm':>12}"
              f"{'util/peak':>11}{'torch/peak':>12}{'ours MB':>9}{'torch MB':>10}{'ours loss':>11}{'torch loss':>11}")
    ours_by = {}
    for name in configs:
        shp = CONFIGS[name]
        for nt in threads:
            ours, theirs = [], []
            for _ in range(a.repeats):
                ours.append(run([bench, "--run", *shape_args(*shp), "--threads", str(nt), "--steps", str(a.steps)]))
                theirs.append(run([py, ref, *shape_args(*shp), "--threads", str(nt), "--steps", str(a.steps)],
                                  torch_env(False)))
            o, t, pairs = side_by_side(ours, theirs)
            ours_by[(name, nt)] = o
            util = o * flops_per_token(*shp) / (nt * gflops * 1e9)
            util_own = o * flops_per_token(*shp) / (nt * sgemm_gflops * 1e9)
            util_peak = o * flops_per_token(*shp) / (nt * peak * 1e9)
            torch_peak = t * flops_per_token(*shp) / (nt * peak * 1e9)
            orss = max(r["maxrss_kb"] for r in ours) / 1024
            trss = max(r["maxrss_kb"] for r in theirs) / 1024
            spread = f"{statistics.median(pairs):.2f} ({min(pairs):.2f}-{max(pairs):.2f})"
            print(f"{name:<4}{nt:>4}{o:>12.0f}{t:>13.0f}{o / t:>7.2f}{spread:>19}{util:>7.0%}{util_own:>12.0%}{util_peak:>11.0%}"
                  f"{torch_peak:>12.0%}{orss:>9.1f}{trss:>10.1f}"
                  f"{ours[-1]['loss']:>11.4f}{theirs[-1]['loss']:>11.4f}", flush=True)
    for name in configs:
        if (name, 1) in ours_by and (name, 2) in ours_by:
            print(f"{name}: 2 threads / 1 thread (ours) = {ours_by[(name, 2)] / ours_by[(name, 1)]:.2f}")

    archs = [x for x in a.archs.split(",") if x]
    if archs:
        print()
        print(f"recurrent models (recurrent.md) against torch.nn.RNN / LSTM / GRU, medians of {a.repeats} runs x "
              f"{a.steps} steps; core FMA peak (bench_model --peak, in CPU time, best of 3; {unit}): {peak:.1f} GFLOP/s")
        print("R1: d 128, 2 layers, T 64, batch 32; R2: d 256, 2 layers, T 128, batch 16. util = ours model FLOP/s "
              "(6 x non-embedding parameters per token) / (threads x peak); cpu: the same from ours tokens per CPU-second "
              "(time the process was not running left out: steadier on a loaded machine); exec = the FLOPs srbench executes "
              "(layer 0's input side per vocabulary entry) / (threads x peak); /gemm, /sgemm: model FLOP/s against "
              "the GEMM rates above; target: the ratio asked for at 1 thread (LSTM, GRU 1.5, RNN 1.25); "
              "ratio min-max: the smallest and largest of the repeats' ratios ours_i / torch_i (interleaved pairs: "
              "the spread is the machine's noise)")
        print(f"{'arch':<6}{'cfg':<4}{'thr':>4}{'ours tok/s':>12}{'torch tok/s':>13}{'ratio':>7}{'util':>7}{'cpu':>6}{'exec':>7}"
              f"{'/gemm':>7}{'/sgemm':>8}{'min-max':>11}{'target':>11}{'ours MB':>9}{'torch MB':>10}{'ours loss':>11}{'torch loss':>11}")
        for arch in archs:
            for name in a.rnn_configs.split(","):
                shp = RNN_CONFIGS[name]
                for nt in threads:
                    ours, theirs = [], []
                    for _ in range(a.repeats):
                        ours.append(run([bench, "--run", "--arch", arch, *shape_args(*shp), "--threads", str(nt),
                                         "--steps", str(a.steps)]))
                        theirs.append(run([py, ref, "--arch", arch, *shape_args(*shp), "--threads", str(nt),
                                           "--steps", str(a.steps)], torch_env(False)))
                    o, t, pairs = side_by_side(ours, theirs)
                    o_cpu = statistics.median(r["cpu_tok_s"] for r in ours)
                    model_f, exec_f = recurrent_flops_per_token(arch, *shp)
                    orss = max(r["maxrss_kb"] for r in ours) / 1024
                    trss = max(r["maxrss_kb"] for r in theirs) / 1024
                    target = "-" if nt != 1 else ("met" if o / t >= TARGETS[arch] else "MISSED") + f" {TARGETS[arch]}"
                    print(f"{arch:<6}{name:<4}{nt:>4}{o:>12.0f}{t:>13.0f}{o / t:>7.2f}"
                          f"{o * model_f / (nt * peak * 1e9):>7.0%}{o_cpu * model_f / (peak * 1e9):>6.0%}"
                          f"{o * exec_f / (nt * peak * 1e9):>7.0%}{o * model_f / (nt * gflops * 1e9):>7.0%}{o * model_f / (nt * sgemm_gflops * 1e9):>8.0%}"
                          f"{min(pairs):>6.2f}-{max(pairs):<4.2f}{target:>11}"
                          f"{orss:>9.1f}{trss:>10.1f}{ours[-1]['loss']:>11.4f}{theirs[-1]['loss']:>11.4f}", flush=True)

    linear = [x for x in a.linear_archs.split(",") if x]
    if linear:
        linear_rows(bench, py, ref, linear, a.repeats, a.steps)
    if a.recurrent_only:
        print(f"\n(benchmark took {time.time() - t_start:.0f} s)")
        return 0 if ok else 1
    print()
    print("our step time as T grows (d_model 128, 2 layers, 4 heads, batch 8, 1 thread)")
    print(f"{'T':>5}{'step ms':>10}{'tok/s':>10}")
    for T in (32, 64, 128, 256, 512):
        r = [run([bench, "--run", *shape_args(128, 2, 4, T, 8), "--steps", str(a.steps)]) for _ in range(a.repeats)]
        ms = statistics.median(x["step_ms"] for x in r)
        print(f"{T:>5}{ms:>10.2f}{8 * T / ms * 1e3:>10.0f}", flush=True)

    if not a.skip_eval:
        ok = long_eval(srbench, py, ref, [int(t) for t in a.eval_lengths.split(",")], a.repeats,
                       [x for x in a.eval_archs.split(",") if x]) and ok

    if not a.skip_sweep:
        print()
        # 3 tasks × 2 models × 3 seeds; each run trains, then evaluates at every length and shift
        print(f"sweep throughput: configs/quickstart.yaml (18 runs), train.steps={a.sweep_steps}, --threads 1")
        rates = {}
        for jobs in (1, 2):
            tmp = tempfile.mkdtemp(prefix="srbench-bench-")
            try:
                t0 = time.time()
                done = subprocess.run([srbench, "sweep", os.path.join(ROOT, "configs", "quickstart.yaml"), "--jobs",
                                       str(jobs), "--threads", "1", "--set", f"train.steps={a.sweep_steps}", "--out",
                                       os.path.join(tmp, "quickstart.h5")],
                                      check=True, capture_output=True, text=True)
                dt = time.time() - t0
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            rates[jobs] = 18 * 3600 / dt
            print(f"--jobs {jobs}: {dt:7.1f} s, {rates[jobs]:8.0f} runs/hour; {eval_share(done.stdout)}", flush=True)
        print(f"--jobs 2 / --jobs 1 = {rates[2] / rates[1]:.2f}")
        # the Chomsky protocol's evaluation lengths, as configured (24 runs, --jobs 2)
        tmp = tempfile.mkdtemp(prefix="srbench-bench-")
        try:
            t0 = time.time()
            done = subprocess.run([srbench, "sweep", os.path.join(ROOT, "configs", "chomsky-quick.yaml"), "--jobs", "2",
                                   "--threads", "1", "--out", os.path.join(tmp, "chomsky-quick.h5")],
                                  check=True, capture_output=True, text=True)
            dt = time.time() - t0
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"configs/chomsky-quick.yaml (24 runs, as configured), --jobs 2: {dt:7.1f} s; {eval_share(done.stdout)}")
        tiny_suite(srbench, a.repeats)
    print(f"\n(benchmark took {time.time() - t_start:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
