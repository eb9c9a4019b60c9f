#!/usr/bin/python3
"""Task generation from Python against C++ (docs/python.md, "Speed"): for every task, the tokens per
second of srbench.Task.sample for batches of 1,024 examples at n = 64 (mqar: its bench_tasks
length), beside bench_tasks' single-thread tokens/s at the same n, and their ratio.

Both sides draw the same examples (0, 1, 2, … of the train stream under seed 0) in batches of
1,024 for --seconds per task, and both are timed per batch: bench_tasks around each 1,024 calls of
sample_into into one reused Example, Python around each Task.sample call (the call, its C++
generation written into the batch's arrays, and the arrays handed to NumPy). The figure compared
is each side's fastest batch: a shared machine's load only ever slows a batch down, so the
fastest is the least disturbed, and the two sides need not see the same load at the same time.
The mean rates (every batch, the Python loop included) are printed beside them. Tokens are the
examples' own (padding not counted), as bench_tasks counts them, summed outside the timed calls.
Each side runs --rounds times (C++ then Python, the rounds spread the sides over the same
stretch of load), keeping its best. Run by scripts/bench.sh.

    PYTHONPATH=build/python bench_python_tasks.py --bench-tasks build/bench/bench_tasks [--seconds 0.2] [--rounds 5]
                                                  [--tasks a,b,...]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N, COUNT = 64, 1024


def cpp_rates(binary, seconds, only):
    """{task: (n, mean tokens/s, fastest batch's tokens/s)} from bench_tasks' first table."""
    out = subprocess.run([binary, str(seconds), str(N), ",".join(only)], capture_output=True, text=True,
                         check=True).stdout
    rates = {}
    for line in out.splitlines()[1:]:
        if not line.strip():
            break  # the tape-layout table follows
        name, n, _, mean, best = line.split()
        rates[name] = (int(n), float(mean), float(best))
    return rates


def python_rates(task, n, seconds):
    """(mean tokens/s, fastest batch's tokens/s) of Task.sample in batches of COUNT."""
    batches, start, index = [], time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        b = task.sample(n=n, count=COUNT, seed=0, stream="train", index=index)
        batches.append((time.perf_counter() - t0, b.lengths))
        index += COUNT
    elapsed = time.perf_counter() - start
    tokens = [int(lengths.sum()) for _, lengths in batches]
    return sum(tokens) / elapsed, max(t / d for t, (d, _) in zip(tokens, batches))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench-tasks", required=True)
    ap.add_argument("--seconds", type=float, default=0.2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tasks", default="", help="comma-separated task names (default: every task)")
    args = ap.parse_args()
    import srbench
    only = [t for t in args.tasks.split(",") if t] or [info["name"] for info in srbench.tasks()]
    tasks = [(info["name"], srbench.Task(info["name"], **({"path": os.path.join(ROOT, "LICENSE")}
                                                           if info["name"] == "text" else {})))
             for info in srbench.tasks() if info["name"] in only]
    cpp, py = {}, {}
    for _ in range(args.rounds):
        for name, (n, mean, best) in cpp_rates(args.bench_tasks, args.seconds, only).items():
            old = cpp.get(name, (n, 0, 0))
            cpp[name] = (n, max(mean, old[1]), max(best, old[2]))
        for name, task in tasks:
            mean, best = python_rates(task, cpp[name][0], args.seconds)
            old = py.get(name, (0, 0))
            py[name] = (max(mean, old[0]), max(best, old[1]))
    print(f"task generation, {COUNT} x {N} batches: bench_tasks (C++) and srbench.Task.sample (Python), tokens/s "
          f"of the fastest batch, and the ratio of the mean rates")
    print(f"{'task':<28} {'n':>4} {'C++':>12} {'Python':>12} {'ratio':>6} {'mean ratio':>11}")
    ratios = []
    for name, _ in tasks:
        n, cpp_mean, cpp_best = cpp[name]
        py_mean, py_best = py[name]
        ratios.append(py_best / cpp_best)
        print(f"{name:<28} {n:>4} {cpp_best:>12.0f} {py_best:>12.0f} {py_best / cpp_best:>6.2f} "
              f"{py_mean / cpp_mean:>11.2f}")
    print(f"best of {args.rounds} rounds each; ratio Python / C++ (fastest batches): median "
          f"{statistics.median(ratios):.2f}, min {min(ratios):.2f} (target: at least 0.80)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
