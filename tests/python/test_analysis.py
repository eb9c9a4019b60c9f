#!/usr/bin/python3
"""srbench.analysis: its intervals are the report's, and it reads a suite file in the suite's order.

results_fixture writes a 12-run suite's run files and `srbench merge` joins them (as in
tests/harness/test_suite_file.py); then
- every (group, metric) row of `srbench report --format csv` must equal srbench.analysis.seed_stats
  of that group's per-run values read through srbench.analysis (n, mean, std, min, median, max,
  ci_lo, ci_hi, bit for bit);
- srbench.analysis.bootstrap must equal an independent re-implementation here of the interval
  harness/report/stats.hpp describes (xoshiro256** seeded 0x626f6f7473747261 as tasks/rng.hpp
  seeds it, Lemire's bounded draw, 10,000 resamples, nearest rank) on values that are not sorted,
  must not depend on their order, must leave NaN out, and must be NaN for fewer than 2 values;
- SuiteFile.runs yields the summary's runs in its order, filtered by task and model.

    PYTHONPATH=build/python /usr/bin/python3 tests/python/test_analysis.py \\
        --srbench build/harness/srbench --fixture build/tests/results_fixture
"""
import argparse
import csv
import io
import math
import os
import subprocess
import sys
import tempfile

from checks import check, finish
from srbench.analysis import bootstrap, open_suite, seed_stats

M64 = (1 << 64) - 1
STATS = ["n", "mean", "std", "min", "median", "max", "ci_lo", "ci_hi"]


def mix64(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Xoshiro:
    def __init__(self, seed):
        self.s, z = [], seed
        for _ in range(4):
            z = (z + 0x9E3779B97F4A7C15) & M64
            self.s.append(mix64(z))

    def next(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64  # noqa: E731
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n):
        m = self.next() * n
        if (m & M64) < n:
            threshold = ((1 << 64) - n) % n
            while (m & M64) < threshold:
                m = self.next() * n
        return m >> 64


def reference_interval(values, level=0.95, resamples=10000):
    """The report's interval as harness/report/stats.hpp describes it, over `values` as given."""
    rng, n = Xoshiro(0x626F6F7473747261), len(values)
    means = []
    for _ in range(resamples):
        total = 0.0
        for _ in range(n):
            total += values[rng.below(n)]
        means.append(total / n)
    means.sort()

    def rank(q):
        k = math.ceil(q * resamples)
        return means[min(len(means) - 1, 0 if k == 0 else k - 1)]

    return rank((1 - level) / 2), rank((1 + level) / 2)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def check_bootstrap():
    values = [0.91, 0.12, 0.55, 0.97, 0.33, 0.40, 0.78]
    want = reference_interval(sorted(values))
    got = bootstrap(values)
    check(got == want, f"bootstrap({values}) = {got}, the report's interval recomputed: {want}")
    check(min(values) < got[0] < got[1] < max(values), f"a 7-value interval inside (min, max): {got}")
    check(bootstrap(list(reversed(values))) == got, "bootstrap depends on the order of the values")
    check(bootstrap(values + [math.nan]) == got, "a NaN value is not left out")
    check(all(math.isnan(x) for x in bootstrap([0.5]) + bootstrap([])), "fewer than 2 values: not NaN")


def report_rows(srbench, path):
    p = subprocess.run([srbench, "report", path, "--format", "csv"], capture_output=True, text=True)
    check(p.returncode == 0, f"srbench report exit {p.returncode}: {p.stderr}")
    return list(csv.DictReader(io.StringIO(p.stdout)))


def check_report(srbench, path):
    """Every summary metric's row of the report equals seed_stats of the group's per-run values."""
    with open_suite(path) as suite:
        summary = suite.results.summary
    rows = [r for r in report_rows(srbench, path) if r["metric"] in summary.columns]
    check(len(rows) >= 12, f"the report has {len(rows)} rows of summary metrics")
    spread = 0
    for r in rows:
        group = summary[(summary.entry == r["entry"]) & (summary.model == r["model"]) & (summary.grid == r["grid"])]
        values = [float(v) for v in group[r["metric"]]]
        if r["metric"] == "steps_to_target":
            values = [v for v in values if v >= 0]
        got = seed_stats(values)
        where = f"{r['entry']} {r['model']} {r['grid']} {r['metric']}"
        for k in STATS:
            check(same(float(r[k]), float(got[k])), f"{where}: {k} report {r[k]}, srbench.analysis {got[k]!r}")
        spread += got["n"] >= 2 and got["ci_hi"] > got["ci_lo"]
    check(spread >= 6, f"only {spread} rows with a proper interval: the comparison says little")


def check_runs(path):
    with open_suite(path) as suite:
        ids = list(suite.results.summary["run_id"])
        got = [g.name.split("/")[-1] for g, _ in suite.runs()]
        check(got == ids, f"runs() in the summary's order: {got} != {ids}")
        keys = [k for _, k in suite.runs(tasks=["parity"], models=["a"])]
        want = [(e, m, g) for e, m, g, t in zip(suite.results.summary.entry, suite.results.summary.model,
                                                 suite.results.summary.grid, suite.results.summary.task)
                if m == "a" and (e == "parity" or t == "parity")]
        check(keys == want and len(keys) >= 2, f"runs(tasks, models) filtered: {keys} != {want}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--fixture", required=True)
    a = ap.parse_args()
    check_bootstrap()
    with tempfile.TemporaryDirectory() as tmp:
        fx = subprocess.run([a.fixture, tmp], capture_output=True, text=True)
        if not check(fx.returncode == 0, f"results_fixture exit {fx.returncode}: {fx.stderr}"):
            return finish("")
        path = os.path.join(tmp, "mini.h5")
        m = subprocess.run([a.srbench, "merge", os.path.join(tmp, "mini"), "--out", path], capture_output=True,
                           text=True)
        if check(m.returncode == 0, f"merge exit {m.returncode}: {m.stderr}"):
            check_report(a.srbench, path)
            check_runs(path)
    return finish("srbench.analysis's intervals are the report's; its runs are the suite's")


if __name__ == "__main__":
    sys.exit(main())
