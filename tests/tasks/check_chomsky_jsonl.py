#!/usr/bin/python3
"""Independent checker of the fifteen Chomsky-hierarchy tasks (spec chomsky.md §2-4).

Runs `srbench sample --format jsonl` for every task at n = 1..40 and at long lengths up to 500,
under default and other parameters, and checks each example from its token names alone: the
names, the tape layout (input tape without `_`, then exactly L_out(L) blanks), `input_length`,
and every target recomputed by this file's own reading of the spec (Python integers for the
binary tasks, Python's evaluator and a recursive parser of the grammar G for the modular ones).
Where the spec pins a sampling distribution, large samples are tested against it (chi-square or
z statistics; the tolerance is a fixed false-alarm rate, so it scales with the sample size).
Bad parameters must exit 2 naming the task and the parameter. Nothing here reads the C++ code.

Usage: check_chomsky_jsonl.py --srbench PATH
"""
import argparse
import collections
import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from check_jsonl import Fail, need

sys.setrecursionlimit(20000)

# A statistic fails beyond 5 standard deviations (two-sided p ≈ 6e-7): with the ~60 statistics
# below the whole check raises a false alarm with probability about 4e-5.
Z_MAX = 5.0
BITS = ["0", "1"]


def numbers(k):
    return [str(v) for v in range(k)]


def le_bits(v):
    """v in binary, least significant digit first, without leading zeros ('0' for 0)."""
    return list(bin(v)[2:][::-1])


def le_value(digits):
    need(all(d in BITS for d in digits), "non-binary digit in %s" % digits)
    return int("".join(reversed(digits)), 2) if digits else 0


# ----------------------------------------------------------------- the fifteen tasks
# Each label function gets the input tape x (names), n and the parameters; it checks the tape's
# structure and returns the scored output symbols (the rest of the blanks are null).

def lab_parity_check(x, n, P):
    return ["c%d" % (x.count("1") % 2)]


def lab_even_pairs(x, n, P):
    return ["c%d" % (sum(1 for a, b in zip(x, x[1:]) if a != b) % 2)]


def lab_cycle_navigation(x, n, P):
    return ["c%d" % (sum(int(a) for a in x) % int(P.get("cycle_length", 5)))]


def lab_modular_arithmetic(x, n, P):
    m = int(P.get("modulus", 5))
    ops = P.get("operators", "+-*")
    need(len(x) == (n if n % 2 else n - 1), "expression length %d at n=%d (odd-length rule)" % (len(x), n))
    for t, s in enumerate(x):
        need(s in numbers(m) if t % 2 == 0 else s in ops, "position %d holds %r" % (t, s))
    return [str(eval(" ".join(x), {"__builtins__": {}}) % m)]  # Python's precedence, exact integers


class Grammar:
    """Parses exactly G of chomsky.md §3 — d | - d | ( d ) | ( - d ) | ( G op G ) — and evaluates it
    with Python integers; `x` takes the value x_value. Records the root's left length."""

    def __init__(self, toks, m, x_value=None):
        self.t, self.m, self.x, self.pos, self.ops, self.root_left = toks, m, x_value, 0, [], None

    def peek(self, k=0):
        return self.t[self.pos + k] if self.pos + k < len(self.t) else None

    def take(self):
        need(self.pos < len(self.t), "expression ends early")
        self.pos += 1
        return self.t[self.pos - 1]

    def digit(self):
        s = self.take()
        if s == "x" and self.x is not None:
            return self.x
        need(s in numbers(self.m), "expected a digit, got %r" % s)
        return int(s)

    def expr(self, depth=0):
        if self.peek() == "-":
            self.take()
            return -self.digit()
        if self.peek() != "(":
            return self.digit()
        self.take()
        start = self.pos
        if self.peek() == "-" and self.peek(2) == ")":
            self.take()
            v = -self.digit()
        elif self.peek(1) == ")":
            v = self.digit()
        else:
            left = self.expr(depth + 1)
            if depth == 0:
                self.root_left = self.pos - start
            op = self.take()
            need(op in ("+", "-", "*"), "expected an operator, got %r" % op)
            self.ops.append(op)
            right = self.expr(depth + 1)
            v = left + right if op == "+" else left - right if op == "-" else left * right
        need(self.take() == ")", "expected )")
        return v

    def value(self):
        v = self.expr()
        need(self.pos == len(self.t), "tokens after the expression")
        return v % self.m


def lab_modular_arithmetic_brackets(x, n, P):
    g = Grammar(x, int(P.get("modulus", 5)))
    v = g.value()
    if P.get("mult", "true") == "false":
        need("*" not in g.ops, "* drawn with mult=false")
    return [str(v)]


def lab_solve_equation(x, n, P):
    m = int(P.get("modulus", 5))
    if n <= 2:
        need(x == ["0"] * n, "n <= 2 is not the placeholder")
        return ["0"]
    need(x[-2] == "=" and x[-1] in numbers(m), "the tape does not end in = v")
    lhs = x[:-2]
    need(lhs.count("x") == 1, "not exactly one x")
    need("*" not in lhs, "* in an equation")
    solutions = [d for d in range(m) if Grammar(lhs, m, d).value() == int(x[-1])]
    need(len(solutions) == 1, "solutions %s" % solutions)
    return [str(solutions[0])]


def stack_split(x, n):
    k = 0
    while k < len(x) and x[k] in BITS:
        k += 1
    need(1 <= k <= max(1, n - 1), "k = %d initial stack bits at n = %d" % (k, n))
    need(all(a in ("pop", "push0", "push1") for a in x[k:]), "a bit among the actions")
    return k


def lab_stack_manipulation(x, n, P):
    k = stack_split(x, n)
    stack = list(x[:k])
    for a in x[k:]:
        if a == "pop":
            if stack:
                stack.pop()
        else:
            stack.append(a[-1])
    return stack[::-1] + ["<eos>"]


def lab_reverse_string(x, n, P):
    return x[::-1]


def lab_duplicate_string(x, n, P):
    return x + x


def lab_odds_first(x, n, P):
    return [x[t] for t in range(1, n, 2)] + [x[t] for t in range(0, n, 2)]


def lab_bucket_sort(x, n, P):
    return sorted(x, key=int)


def lab_missing_duplicate_string(x, n, P):
    if n == 1:
        need(x == ["1"], "n = 1 is not the placeholder")
        return ["1"]
    h = n // 2
    body, pad = x[:2 * h], x[2 * h:]
    need(pad == (["#"] if n % 2 else []), "padding %s at n = %d" % (pad, n))
    need(body.count("?") == 1 and all(s in BITS + ["?"] for s in body), "not one ? among bits")
    j = body.index("?")
    need(all(body[i] == body[i + h] for i in range(h) if i != j % h), "the halves differ")
    return [body[(j + h) % (2 * h)]]


def binary_operands(x, n, op):
    """(a digits, b digits) of an n >= 3 tape, checked: one op, both operands nonzero."""
    need(x.count(op) == 1, "not one %r" % op)
    a = x.index(op)
    need(1 <= a <= n - 2, "split a = %d at n = %d" % (a, n))
    xs, ys = x[:a], x[a + 1:]
    need(le_value(xs) > 0 and le_value(ys) > 0, "an all-zero operand")
    return xs, ys


def small_binary(x, n):
    """The tape of n <= 2: n = 1 is `0`; n = 2 is v in 0..2 in 2 LE digits."""
    need(len(x) == n and all(d in BITS for d in x), "n <= 2 tape %s" % x)
    v = le_value(x)
    need(v == 0 if n == 1 else v <= 2, "n <= 2 value %d" % v)
    return v


def lab_binary_addition(x, n, P):
    if n <= 2:
        return le_bits(small_binary(x, n)) + ["<eos>"]
    xs, ys = binary_operands(x, n, "+")
    return le_bits(le_value(xs) + le_value(ys)) + ["<eos>"]


def lab_binary_multiplication(x, n, P):
    if n <= 2:
        small_binary(x, n)
        return ["<eos>"] if n == 1 else ["0", "<eos>"]
    xs, ys = binary_operands(x, n, "*")
    return le_bits(le_value(xs) * le_value(ys)) + ["<eos>"]


def lab_compute_sqrt(x, n, P):
    v = int("".join(x), 2)
    need(v >= 1, "v = 0")
    return list(bin(math.isqrt(v))[2:].zfill((n + 1) // 2))


def V(P, default):
    return int(P.get("vocab_size", default))


# name: (input alphabet, output classes, L_in(n), L_out(L), label)
TASKS = {
    "parity_check": (lambda P: BITS, lambda P: ["c0", "c1"], None, lambda L: 1, lab_parity_check),
    "even_pairs": (lambda P: BITS, lambda P: ["c0", "c1"], None, lambda L: 1, lab_even_pairs),
    "cycle_navigation": (lambda P: ["-1", "0", "+1"], lambda P: ["c%d" % c for c in range(int(P.get("cycle_length", 5)))],
                         None, lambda L: 1, lab_cycle_navigation),
    "modular_arithmetic": (lambda P: numbers(int(P.get("modulus", 5))) + ["+", "-", "*"],
                           lambda P: numbers(int(P.get("modulus", 5))),
                           lambda n: n if n % 2 else n - 1, lambda L: 1, lab_modular_arithmetic),
    "stack_manipulation": (lambda P: BITS + ["pop", "push0", "push1"], lambda P: BITS + ["<eos>"], None,
                           lambda L: L + 1, lab_stack_manipulation),
    "reverse_string": (lambda P: numbers(V(P, 2)), lambda P: numbers(V(P, 2)), None, lambda L: L, lab_reverse_string),
    "modular_arithmetic_brackets": (lambda P: numbers(int(P.get("modulus", 5))) + ["+", "-", "*", "(", ")"],
                                    lambda P: numbers(int(P.get("modulus", 5))), None, lambda L: 1,
                                    lab_modular_arithmetic_brackets),
    "solve_equation": (lambda P: numbers(int(P.get("modulus", 5))) + ["+", "-", "(", ")", "x", "="],
                       lambda P: numbers(int(P.get("modulus", 5))), None, lambda L: 1, lab_solve_equation),
    "duplicate_string": (lambda P: numbers(V(P, 2)), lambda P: numbers(V(P, 2)), None, lambda L: 2 * L,
                         lab_duplicate_string),
    "missing_duplicate_string": (lambda P: BITS + ["?", "#"], lambda P: BITS, None, lambda L: 1,
                                 lab_missing_duplicate_string),
    "odds_first": (lambda P: numbers(V(P, 2)), lambda P: numbers(V(P, 2)), None, lambda L: L, lab_odds_first),
    "binary_addition": (lambda P: BITS + ["+"], lambda P: BITS + ["<eos>"], None, lambda L: L + 1, lab_binary_addition),
    "binary_multiplication": (lambda P: BITS + ["*"], lambda P: BITS + ["<eos>"], None, lambda L: L,
                              lab_binary_multiplication),
    "compute_sqrt": (lambda P: BITS, lambda P: BITS, None, lambda L: (L + 1) // 2, lab_compute_sqrt),
    "bucket_sort": (lambda P: numbers(V(P, 5)), lambda P: numbers(V(P, 5)), None, lambda L: L, lab_bucket_sort),
}


def check_example(ex, task, n, P):
    """Checks one example; returns its input tape."""
    inputs, outputs, L_in, L_out, label = TASKS[task]
    need(set(ex) == {"task", "n", "tokens", "targets", "input_length"}, "keys %s" % sorted(ex))
    need(ex["task"] == task and ex["n"] == n, "task/n fields")
    toks, tg = ex["tokens"], ex["targets"]
    L = L_in(n) if L_in else n
    need(ex["input_length"] == L, "input_length %r, expected %d" % (ex["input_length"], L))
    need(len(toks) == L + L_out(L) and len(tg) == len(toks), "length %d, expected L + L_out = %d" % (len(toks), L + L_out(L)))
    x = toks[:L]
    alphabet = inputs(P)
    need(all(s in alphabet for s in x), "input tape holds a name outside %s: %s" % (alphabet, x))
    need(toks[L:] == ["_"] * L_out(L), "the blanks are not exactly L_out `_`")
    need(all(t is None for t in tg[:L]), "a target on the input tape")
    out = label(x, n, P)
    need(len(out) <= L_out(L), "spec output longer than the blanks")
    need(all(s in outputs(P) for s in out), "spec output outside the classes (checker bug)")
    want = out + [None] * (L_out(L) - len(out))
    if tg[L:] != want:
        j = next(j for j, (a, b) in enumerate(zip(tg[L:], want)) if a != b)
        raise Fail("target on blank %d of %d is %r, expected %r (expected output %s)"
                   % (j, L_out(L), tg[L + j], want[j], " ".join(out) if len(out) <= 40 else "%d symbols" % len(out)))
    return x


# ----------------------------------------------------------------- statistics

def normal_z_chi2(X, df):
    """Wilson-Hilferty: chi-square(df) statistic X as an approximately standard normal z."""
    c = 2.0 / (9 * df)
    return ((X / df) ** (1.0 / 3) - (1 - c)) / math.sqrt(c)


def chi_square(counts, probs):
    """(ok, text) for counts (value -> count) against probs (value -> probability)."""
    N = sum(counts.values())
    outside = set(counts) - set(probs)
    if outside:
        return False, "values outside the support: %s" % sorted(outside)[:5]
    assert min(probs.values()) * N >= 5, "expected counts below 5: sample too small"
    X = sum((counts.get(v, 0) - N * p) ** 2 / (N * p) for v, p in probs.items())
    z = normal_z_chi2(X, len(probs) - 1)
    return z < Z_MAX, "chi2 %.1f, df %d, z %.2f, N %d" % (X, len(probs) - 1, z, N)


def uniform(values):
    return {v: 1.0 / len(values) for v in values}


def symbols(xs_list, positions=lambda x: range(len(x))):
    return collections.Counter(x[t] for x in xs_list for t in positions(x))


def stat_solve_digit_choice(xs, n, P):
    """The replaced digit: chosen with probability gap/(n-2), gap = its cyclic distance from the
    previous digit. z of the summed gap of the chosen digits against its mean and variance."""
    m = int(P.get("modulus", 5))
    total = mean = var = 0.0
    for x in xs:
        E = x[:-2]
        digits = [i for i, s in enumerate(E) if s in numbers(m) or s == "x"]
        gaps = {i: (i - digits[k - 1]) % len(E) or len(E) for k, i in enumerate(digits)}
        p = {i: g / len(E) for i, g in gaps.items()}
        assert abs(sum(p.values()) - 1) < 1e-9
        e = sum(p[i] * gaps[i] for i in digits)
        total += gaps[E.index("x")]
        mean += e
        var += sum(p[i] * gaps[i] ** 2 for i in digits) - e * e
    z = (total - mean) / math.sqrt(var)
    return abs(z) < Z_MAX, "sum of chosen gaps %.0f, expected %.1f, z %.2f, N %d" % (total, mean, z, len(xs))


def stat_operand_joint(xs, n, op):
    """n >= 3: P(a, x, y) = 1/(n-2) · 1/(2^a - 1) · 1/(2^b - 1)."""
    probs = {}
    for a in range(1, n - 1):
        b = n - 1 - a
        for xv in range(1, 2 ** a):
            for yv in range(1, 2 ** b):
                probs[(a, xv, yv)] = 1.0 / ((n - 2) * (2 ** a - 1) * (2 ** b - 1))
    counts = collections.Counter()
    for x in xs:
        a = x.index(op)
        counts[(a, le_value(x[:a]), le_value(x[a + 1:]))] += 1
    return chi_square(counts, probs)


def parsed(x, m):
    """The Grammar parse of an expression (x, if any, read as 0)."""
    g = Grammar(x, m, 0)
    g.value()
    return g


EVEN = lambda x: range(0, len(x), 2)
ODD = lambda x: range(1, len(x), 2)

# (task, params, n, count, [(what, test(xs, n, P) -> (ok, text))])
STAT_RUNS = [
    ("parity_check", {}, 40, 500, [("bits uniform", lambda xs, n, P: chi_square(symbols(xs), uniform(BITS)))]),
    ("even_pairs", {}, 40, 500, [("bits uniform", lambda xs, n, P: chi_square(symbols(xs), uniform(BITS)))]),
    ("cycle_navigation", {}, 40, 500,
     [("actions uniform", lambda xs, n, P: chi_square(symbols(xs), uniform(["-1", "0", "+1"])))]),
    ("modular_arithmetic", {}, 9, 3000,
     [("numbers uniform", lambda xs, n, P: chi_square(symbols(xs, EVEN), uniform(numbers(5)))),
      ("operators uniform", lambda xs, n, P: chi_square(symbols(xs, ODD), uniform(["+", "-", "*"])))]),
    ("modular_arithmetic", {"operators": "+*", "modulus": "7"}, 10, 3000,
     [("n even draws as n-1: numbers uniform", lambda xs, n, P: chi_square(symbols(xs, EVEN), uniform(numbers(7)))),
      ("operators uniform over +*", lambda xs, n, P: chi_square(symbols(xs, ODD), uniform(["+", "*"])))]),
    ("stack_manipulation", {}, 10, 4000,
     [("k uniform in 1..n-1", lambda xs, n, P: chi_square(collections.Counter(stack_split(x, n) for x in xs),
                                                           uniform(range(1, n)))),
      ("stack bits uniform", lambda xs, n, P: chi_square(symbols(xs, lambda x: range(stack_split(x, len(x)))),
                                                         uniform(BITS))),
      ("actions uniform", lambda xs, n, P: chi_square(symbols(xs, lambda x: range(stack_split(x, len(x)), len(x))),
                                                      uniform(["pop", "push0", "push1"])))]),
    ("reverse_string", {"vocab_size": "7"}, 40, 300,
     [("symbols uniform", lambda xs, n, P: chi_square(symbols(xs), uniform(numbers(7))))]),
    ("duplicate_string", {}, 40, 300, [("symbols uniform", lambda xs, n, P: chi_square(symbols(xs), uniform(BITS)))]),
    ("odds_first", {"vocab_size": "3"}, 40, 300,
     [("symbols uniform", lambda xs, n, P: chi_square(symbols(xs), uniform(numbers(3))))]),
    ("bucket_sort", {}, 40, 300, [("symbols uniform", lambda xs, n, P: chi_square(symbols(xs), uniform(numbers(5))))]),
    ("modular_arithmetic_brackets", {}, 11, 4000,
     [("root split l uniform in 1..L-4", lambda xs, n, P: chi_square(collections.Counter(parsed(x, 5).root_left for x in xs),
                                                                      uniform(range(1, n - 3)))),
      ("operators uniform over + - *", lambda xs, n, P: chi_square(
          collections.Counter(op for x in xs for op in parsed(x, 5).ops), uniform(["+", "-", "*"]))),
      ("digits uniform", lambda xs, n, P: chi_square(collections.Counter(s for x in xs for s in x if s.isdigit()),
                                                     uniform(numbers(5))))]),
    ("modular_arithmetic_brackets", {"mult": "false", "modulus": "3"}, 30, 1000,
     [("operators uniform over + -", lambda xs, n, P: chi_square(
         collections.Counter(op for x in xs for op in parsed(x, 3).ops), uniform(["+", "-"])))]),
    ("solve_equation", {}, 12, 5000,
     [("digit replaced with probability gap/(n-2)", stat_solve_digit_choice),
      ("root split l uniform in 1..(n-2)-4", lambda xs, n, P: chi_square(
          collections.Counter(parsed(x[:-2], 5).root_left for x in xs),
          uniform(range(1, n - 5))))]),
    ("solve_equation", {}, 30, 2000, [("digit replaced with probability gap/(n-2)", stat_solve_digit_choice)]),
    ("missing_duplicate_string", {}, 9, 4000,
     [("j uniform in 0..2h-1", lambda xs, n, P: chi_square(collections.Counter(x.index("?") for x in xs),
                                                          uniform(range(2 * (n // 2))))),
      ("bits uniform", lambda xs, n, P: chi_square(collections.Counter(s for x in xs for s in x if s in BITS),
                                                   uniform(BITS)))]),
    ("compute_sqrt", {}, 4, 3000,
     [("v uniform in 1..2^n-1", lambda xs, n, P: chi_square(collections.Counter(int("".join(x), 2) for x in xs),
                                                           uniform(range(1, 16))))]),
]


def binary_operand_runs(task, op):
    """binary_addition and binary_multiplication draw their tapes alike (chomsky.md §3)."""
    return [
        (task, {}, 2, 3000, [("v uniform in 0..2", lambda xs, n, P: chi_square(
            collections.Counter(le_value(x) for x in xs), uniform(range(3))))]),
        (task, {}, 5, 6000, [("(a, x, y) joint", lambda xs, n, P: stat_operand_joint(xs, n, op))]),
        (task, {}, 12, 4000, [("a uniform in 1..n-2", lambda xs, n, P: chi_square(
            collections.Counter(x.index(op) for x in xs), uniform(range(1, n - 1))))]),
    ]


STAT_RUNS += binary_operand_runs("binary_addition", "+") + binary_operand_runs("binary_multiplication", "*")



# ----------------------------------------------------------------- settings and the driver

def settings():
    """(task, params, n, count) for the label and layout checks."""
    S = [(t, {}, n, 10) for t in TASKS for n in range(1, 41)]
    S += [(t, {}, n, 3) for t in TASKS for n in (64, 100, 250, 500)]
    variants = [("cycle_navigation", {"cycle_length": "2"}), ("cycle_navigation", {"cycle_length": "1000"}),
                ("modular_arithmetic", {"modulus": "1000", "operators": "*"}),
                ("modular_arithmetic", {"modulus": "2", "operators": "-"}),
                ("modular_arithmetic", {"operators": "-+"}),
                ("modular_arithmetic_brackets", {"modulus": "10"}),
                ("modular_arithmetic_brackets", {"modulus": "2", "mult": "false"}),
                ("solve_equation", {"modulus": "2"}), ("solve_equation", {"modulus": "10"})]
    variants += [(t, {"vocab_size": v}) for t in ("reverse_string", "duplicate_string", "odds_first", "bucket_sort")
                 for v in ("3", "256")]
    S += [(t, P, n, 10) for t, P in variants for n in (1, 2, 3, 4, 5, 6, 7, 8, 11, 17, 26, 39)]
    S += [(t, P, 200, 2) for t, P in variants]
    return S


# (task, params, the parameter the error must name)
BAD = [(t, {}, "n") for t in TASKS] + [
    ("cycle_navigation", {"cycle_length": "1"}, "cycle_length"),
    ("cycle_navigation", {"cycle_length": "1001"}, "cycle_length"),
    ("modular_arithmetic", {"modulus": "1"}, "modulus"), ("modular_arithmetic", {"modulus": "1001"}, "modulus"),
    ("modular_arithmetic", {"operators": ""}, "operators"), ("modular_arithmetic", {"operators": "*-*"}, "operators"),
    ("modular_arithmetic", {"operators": "+/"}, "operators"),
    ("modular_arithmetic_brackets", {"modulus": "11"}, "modulus"),
    ("modular_arithmetic_brackets", {"mult": "maybe"}, "mult"),
    ("solve_equation", {"modulus": "1"}, "modulus"), ("solve_equation", {"modulus": "11"}, "modulus"),
    ("reverse_string", {"vocab_size": "1"}, "vocab_size"), ("duplicate_string", {"vocab_size": "257"}, "vocab_size"),
    ("odds_first", {"vocab_size": "0"}, "vocab_size"), ("bucket_sort", {"vocab_size": "300"}, "vocab_size"),
    ("parity_check", {"p1": "0.5"}, "p1"), ("compute_sqrt", {"base": "2"}, "base"),
]


def command(srbench, task, params, n, count, seed, stream, index=0):
    cmd = [srbench, "sample", task, "-n", str(n), "--count", str(count), "--seed", str(seed),
           "--stream", stream, "--index", str(index), "--format", "jsonl"]
    for k, v in params.items():
        cmd += ["--set", "%s=%s" % (k, v)]
    return cmd


def run_all(cmds):
    def one(cmd):
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, cmds))


def checked_examples(r, cmd, task, params, n, count, failures):
    """The input tapes of a run's examples that pass check_example; failures appended."""
    where = "%s %s n=%d" % (task, " ".join("%s=%s" % kv for kv in params.items()), n)
    if r.returncode != 0:
        failures.append((where, "exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()), " ".join(cmd)))
        return []
    lines = r.stdout.decode().splitlines()
    if len(lines) != count:
        failures.append((where, "%d lines, expected %d" % (len(lines), count), " ".join(cmd)))
    xs = []
    for ln in lines:
        try:
            xs.append(check_example(json.loads(ln), task, n, params))
        except (Fail, ValueError, KeyError, IndexError, TypeError, ZeroDivisionError) as e:
            failures.append((where, "%s: %s" % (type(e).__name__, e), ln[:400]))
    return xs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    args = ap.parse_args()
    streams = ["train", "train-arch", "eval"]
    failures, lines = [], []

    # Labels and layout.
    S = settings()
    cmds = [command(args.srbench, t, P, n, c, 100 + i, streams[i % 3]) for i, (t, P, n, c) in enumerate(S)]
    examples = collections.Counter()
    for (t, P, n, c), cmd, r in zip(S, cmds, run_all(cmds)):
        examples[t] += len(checked_examples(r, cmd, t, P, n, c, failures))
    lines.append("labels and layout: %d settings, %d examples (%s)" % (
        len(S), sum(examples.values()), ", ".join("%s %d" % kv for kv in sorted(examples.items()))))

    # Distributions.
    cmds = [command(args.srbench, t, P, n, c, 7, "train") for t, P, n, c, _ in STAT_RUNS]
    for (t, P, n, c, tests), cmd, r in zip(STAT_RUNS, cmds, run_all(cmds)):
        xs = checked_examples(r, cmd, t, P, n, c, failures)
        for what, test in tests:
            ok, text = test(xs, n, P) if len(xs) == c else (False, "examples failed their checks")
            lines.append("%-4s %s %s n=%d: %s: %s" % ("ok" if ok else "FAIL", t, P or "", n, what, text))
            if not ok:
                failures.append(("%s n=%d" % (t, n), "distribution: %s: %s" % (what, text), " ".join(cmd)))

    # Determinism: identical calls print identical bytes; --index i --count 1 is line i.
    det = [(t, n) for t in TASKS for n in (7, 40)]
    cmds = [command(args.srbench, t, {}, n, 8, 3, "eval") for t, n in det]
    singles = [command(args.srbench, t, {}, n, 1, 3, "eval", index=5) for t, n in det]
    runs = run_all(cmds + cmds + singles)
    k = len(det)
    for j, (t, n) in enumerate(det):
        a, b, one = runs[j], runs[k + j], runs[2 * k + j]
        if a.stdout != b.stdout:
            failures.append(("%s n=%d" % (t, n), "identical calls printed different bytes", " ".join(cmds[j])))
        if one.stdout.decode().splitlines() != a.stdout.decode().splitlines()[5:6]:
            failures.append(("%s n=%d" % (t, n), "--index 5 --count 1 differs from line 5", " ".join(singles[j])))
    lines.append("determinism: %d settings" % len(det))

    # Bad parameters: exit 2, one message naming the task and the parameter.
    cmds = [command(args.srbench, t, P, 0 if param == "n" else 5, 1, 0, "train") for t, P, param in BAD]
    for (t, P, param), cmd, r in zip(BAD, cmds, run_all(cmds)):
        err = r.stderr.decode(errors="replace")
        if r.returncode != 2 or r.stdout or "'%s'" % t not in err or "'%s'" % param not in err:
            failures.append((t, "bad %s: exit %d, stderr %r" % (param, r.returncode, err.strip()), " ".join(cmd)))
    lines.append("bad parameters: %d cases" % len(BAD))

    print("\n".join(lines))
    print("failures: %d" % len(failures))
    shown = collections.Counter()
    for where, msg, detail in failures:  # at most 2 per task setting, 12 in all
        if shown[where] >= 2 or sum(shown.values()) >= 12:
            continue
        shown[where] += 1
        print("\nFAIL %s: %s\n  %s" % (where, msg, detail))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
