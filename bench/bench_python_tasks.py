#!/usr/bin/python3
"""Task generation from Python against C++ (docs/python.md, "Speed"): for every task, tokens per
second of srbench.Task.sample for batches of 1,024 examples at n = 64 (mqar: its bench_tasks
length), beside bench_tasks' single-thread tokens/s at the same n, and their ratio. Tokens are
the examples' own (padding not counted), as bench_tasks counts them. Each side is measured in
--rounds rounds (C++ then Python, so both see the same load) and its best round is kept: on a
shared machine the best is the least disturbed. The tokens are counted after the timed loop
(bench_tasks counts them for free; a NumPy sum per batch would be timed as generation). Run by
scripts/bench.sh.

    PYTHONPATH=build/python bench_python_tasks.py --bench-tasks build/bench/bench_tasks [--seconds 0.3] [--rounds 3]
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
    out = subprocess.run([binary, str(seconds), str(N)] + ([",".join(only)] if only else []),
                         capture_output=True, text=True, check=True).stdout
    rates = {}
    for line in out.splitlines()[1:]:
        if not line.strip():
            break  # the tape-layout table follows
        name, n, _, tokens = line.split()
        rates[name] = (int(n), float(tokens))
    return rates


def python_rate(task, n, seconds):
    lengths, start, index = [], time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        lengths.append(task.sample(n=n, count=COUNT, seed=0, stream="train", index=index).lengths)
        index += COUNT
    elapsed = time.perf_counter() - start
    return sum(int(x.sum()) for x in lengths) / elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench-tasks", required=True)
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", default="", help="comma-separated task names (default: every task)")
    args = ap.parse_args()
    only = [t for t in args.tasks.split(",") if t]
    import srbench
    tasks = [(info["name"], srbench.Task(info["name"], **({"path": os.path.join(ROOT, "LICENSE")}
                                                           if info["name"] == "text" else {})))
             for info in srbench.tasks() if not only or info["name"] in only]
    rates, py_rates = {}, {}
    for _ in range(args.rounds):
        for name, (n, cpp) in cpp_rates(args.bench_tasks, args.seconds, only).items():
            rates[name] = (n, max(cpp, rates.get(name, (n, 0))[1]))
        for name, task in tasks:
            py_rates[name] = max(py_rates.get(name, 0), python_rate(task, rates[name][0], args.seconds))
    print(f"task generation, {COUNT} x {N} batches: bench_tasks (C++) and srbench.Task.sample (Python), tokens/s")
    print(f"{'task':<28} {'n':>4} {'C++':>12} {'Python':>12} {'ratio':>6}")
    ratios = []
    for name, _ in tasks:
        n, cpp = rates[name]
        py = py_rates[name]
        ratios.append(py / cpp)
        print(f"{name:<28} {n:>4} {cpp:>12.0f} {py:>12.0f} {py / cpp:>6.2f}")
    print(f"best of {args.rounds} rounds each; ratio Python / C++: median {statistics.median(ratios):.2f}, "
          f"min {min(ratios):.2f} (target: at least 0.80)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
