#!/usr/bin/python3
"""Independent checker of `srbench sample --format jsonl` labels against docs/spec tasks.md.

Every labelling rule here is re-implemented from the task catalogue (token names only), not
from the C++ generators. Usage: check_jsonl.py --srbench PATH [--samples N]
"""
import argparse
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile


class Fail(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Fail(msg)


def num(tok, prefix, lo, hi):
    """Parse a token `prefix<int>` with lo <= int < hi."""
    need(isinstance(tok, str) and tok.startswith(prefix), "bad token %r (want %s*)" % (tok, prefix))
    s = tok[len(prefix):]
    need(s.isdigit() and (s == "0" or not s.startswith("0")), "bad token %r" % tok)
    v = int(s)
    need(lo <= v < hi, "token %r out of range [%d,%d)" % (tok, lo, hi))
    return v


# ----------------------------------------------------------------- state-tracking tasks
# Each returns (inputs -> list of states) given a parse of the input symbols.

def split_mode(ex, n, output):
    """Check the output-mode layout; return (inputs, claimed states, positions scored)."""
    toks, tg = ex["tokens"], ex["targets"]
    if output == "scratchpad":
        need(len(toks) == 2 * n and len(tg) == 2 * n, "scratchpad length != 2n")
        xs, qs = toks[0::2], toks[1::2]
        for t in range(n):
            need(tg[2 * t] == qs[t], "scratchpad: target at x_%d (%r) != following state token %r"
                 % (t, tg[2 * t], qs[t]))
            need(tg[2 * t + 1] is None, "scratchpad: state position %d scored" % (2 * t + 1))
        return xs, qs
    need(len(toks) == n and len(tg) == n, "length != n")
    if output == "final":
        for t in range(n - 1):
            need(tg[t] is None, "final: position %d scored" % t)
        need(tg[n - 1] is not None, "final: last position not scored")
        return toks, [None] * (n - 1) + [tg[n - 1]]
    for t in range(n):
        need(tg[t] is not None, "states: position %d not scored" % t)
    return toks, list(tg)


def check_states(ex, n, output, parse_input, step, init, name_state):
    xs, qs = split_mode(ex, n, output)
    q = init
    for t, x in enumerate(xs):
        q = step(q, parse_input(x))
        if qs[t] is not None:
            need(qs[t] == name_state(q), "t=%d: state %r, expected %r" % (t, qs[t], name_state(q)))
    return xs


def chk_parity(ex, n, P):
    xs = check_states(ex, n, P.get("output", "states"),
                      lambda x: (need(x in ("0", "1"), "bad input %r" % x), int(x))[1],
                      lambda q, v: (q + v) % 2, 0, lambda q: "q%d" % q)
    STATS.setdefault(("parity", P.get("p1", "0.5")), []).extend(int(x) for x in xs)


def chk_modcount(ex, n, P):
    m = int(P.get("m", 5))
    acts = [int(a) for a in P["actions"].strip("[]").split(",")] if "actions" in P else list(range(m))

    def parse(x):
        v = num(x, "a", 0, m)
        need(v in acts, "action %r not in actions %s" % (x, acts))
        return v
    xs = check_states(ex, n, P.get("output", "states"), parse,
                      lambda q, v: (q + v) % m, 0, lambda q: "q%d" % q)
    if "probs" in P:
        STATS.setdefault(("modcount", P["actions"], P["probs"]), []).extend(xs)


def chk_flipflop(ex, n, P):
    V = int(P.get("values", 2))
    parse = lambda x: 0 if x == "r" else num(x, "w", 1, V + 1)
    xs = check_states(ex, n, P.get("output", "states"), parse,
                      lambda q, v: q if v == 0 else v, 0, lambda q: "q%d" % q)
    STATS.setdefault(("flipflop", P.get("p_write", "0.5")), []).extend(0 if x == "r" else 1 for x in xs)


def chk_gridworld(ex, n, P):
    C = int(P.get("cells", 9))
    parse = lambda x: (need(x in ("L", "R"), "bad input %r" % x), 1 if x == "R" else -1)[1]
    xs = check_states(ex, n, P.get("output", "states"), parse,
                      lambda q, d: min(C - 1, max(0, q + d)), 0, lambda q: "c%d" % q)
    STATS.setdefault(("gridworld", P.get("p_right", "0.5")), []).extend(1 if x == "R" else 0 for x in xs)


# quaternion: represent as (sign, unit) with unit in 1 i j k
QMUL = {("1", u): (1, u) for u in "1ijk"}
QMUL.update({(u, "1"): (1, u) for u in "1ijk"})
QMUL.update({("i", "i"): (-1, "1"), ("j", "j"): (-1, "1"), ("k", "k"): (-1, "1"),
             ("i", "j"): (1, "k"), ("j", "k"): (1, "i"), ("k", "i"): (1, "j"),
             ("j", "i"): (-1, "k"), ("k", "j"): (-1, "i"), ("i", "k"): (-1, "j")})


def chk_quaternion(ex, n, P):
    def parse(x):
        need(x in ("1", "i", "j", "k"), "bad input %r" % x)
        return x

    def step(q, x):
        s, u = QMUL[(q[1], x)]
        return (q[0] * s, u)
    check_states(ex, n, P.get("output", "states"), parse, step, (1, "1"),
                 lambda q: ("+" if q[0] > 0 else "-") + q[1])


def perm_group(group, d):
    def even(p):
        inv = sum(1 for a in range(d) for b in range(a + 1, d) if p[a] > p[b])
        return inv % 2 == 0
    elems = sorted(p for p in itertools.permutations(range(d)) if group == "S" or even(p))
    gens = [tuple(range(d))]
    if group == "S":
        sw = list(range(d)); sw[0], sw[1] = 1, 0
        gens += [tuple(sw), tuple((i + 1) % d for i in range(d))]
    else:
        for x in range(2, d):
            g = list(range(d)); g[0], g[1], g[x] = 1, x, 0  # 0->1->x->0
            gens.append(tuple(g))
    return elems, {p: r for r, p in enumerate(elems)}, gens


def chk_permutation(ex, n, P):
    G, d = P.get("group", "S"), int(P.get("degree", 5))
    if (G, d) not in PERM_CACHE:
        PERM_CACHE[(G, d)] = perm_group(G, d)
    elems, rank, gens = PERM_CACHE[(G, d)]
    check_states(ex, n, P.get("output", "states"), lambda x: gens[num(x, "g", 0, len(gens))],
                 lambda s, g: tuple(g[s[i]] for i in range(d)), tuple(range(d)),
                 lambda s: "p%d" % rank[s])


PERM_CACHE = {}

BR = ["(", ")", "[", "]", "{", "}", "<", ">"]


def bracket(tok, k):
    need(tok in BR[:2 * k], "bad bracket %r for k=%d" % (tok, k))
    i = BR.index(tok)
    return i // 2 + 1, i % 2 == 0  # type 1..k, is_open


def dyck_valid(word, k):
    """(valid closed word, max depth reached) or (False, None)."""
    st, md = [], 0
    for tok in word:
        ty, op = bracket(tok, k)
        if op:
            st.append(ty); md = max(md, len(st))
        else:
            if not st or st[-1] != ty:
                return False, None
            st.pop()
    return not st, md


def chk_dyck(ex, n, P):
    k, D = int(P.get("k", 2)), int(P.get("max_depth", 8))
    label = P.get("label", "top")
    if label == "balanced":
        toks, tg = ex["tokens"], ex["targets"]
        need(len(toks) == n and len(tg) == n, "length != n")
        need(all(t is None for t in tg[:-1]), "balanced: a non-last position scored")
        need(tg[-1] in ("yes", "no"), "balanced: last target %r" % tg[-1])
        ok, md = dyck_valid(toks, k)
        need(ok == (tg[-1] == "yes"), "balanced: label %r but word valid=%s" % (tg[-1], ok))
        if ok:
            need(md <= D, "balanced: valid word deeper (%d) than max_depth" % md)
        STATS.setdefault(("dyck-balanced",), []).append(1 if ok else 0)
        return
    st = []

    def step(stack, tok):
        ty, op = tok
        stack = list(stack)
        if op:
            stack.append(ty)
            need(len(stack) <= D, "depth %d above max_depth %d" % (len(stack), D))
        else:
            need(stack and stack[-1] == ty, "invalid prefix: close of type %d" % ty)
            stack.pop()
        return tuple(stack)
    name = (lambda s: "t%d" % (s[-1] if s else 0)) if label == "top" else (lambda s: "d%d" % len(s))
    check_states(ex, n, P.get("output", "states"), lambda x: bracket(x, k), step, (), name)


# ----------------------------------------------------------------- other tasks

def chk_ffl(ex, n, P):
    toks, tg = ex["tokens"], ex["targets"]
    need(len(toks) == 2 * n and len(tg) == 2 * n, "length != 2n")
    ins, bits = toks[0::2], toks[1::2]
    need(all(i in ("w", "r", "i") for i in ins), "bad instruction")
    need(all(b in ("0", "1") for b in bits), "bad bit")
    need(ins[0] == "w" and ins[-1] == "r", "first instruction not w or last not r")
    last = None
    for t in range(n):
        if ins[t] == "w":
            last = bits[t]
        elif ins[t] == "r":
            need(bits[t] == last, "pair %d: bit after r is %r, last written %r" % (t, bits[t], last))
        need(tg[2 * t + 1] is None, "bit position scored")
        if ins[t] == "r":
            need(tg[2 * t] == bits[t], "target at r (pair %d) %r != following bit %r" % (t, tg[2 * t], bits[t]))
        else:
            need(tg[2 * t] is None, "non-r instruction scored")
    STATS.setdefault(("ffl", P.get("p_i", "0.8")), []).extend(1 if i == "i" else 0 for i in ins[1:-1])


def next_token_region(toks, tg, lo, hi):
    """targets[t] = tokens[t+1] for lo <= t < hi, None elsewhere."""
    for t in range(len(toks)):
        if lo <= t < hi:
            need(tg[t] == toks[t + 1], "pos %d: target %r != next token %r" % (t, tg[t], toks[t + 1]))
        else:
            need(tg[t] is None, "pos %d scored outside the answer" % t)


def chk_copy(ex, n, P):
    A, rev = int(P.get("alphabet", 10)), P.get("reverse", "false") == "true"
    toks, tg = ex["tokens"], ex["targets"]
    need(len(toks) == 2 * n + 2 and len(tg) == len(toks), "length != 2n+2")
    letters = [chr(ord("a") + i) for i in range(A)]
    x, y = toks[:n], toks[n + 1:2 * n + 1]
    need(all(c in letters for c in x + y), "letter outside alphabet")
    need(toks[n] == "<sep>" and toks[-1] == "<eos>", "bad <sep>/<eos>")
    need(y == (x[::-1] if rev else x), "y is not the %s of x" % ("reverse" if rev else "copy"))
    next_token_region(toks, tg, n, 2 * n + 1)


def chk_add(ex, n, P):
    B = int(P.get("base", 10))
    le = P.get("little_endian", "true") == "true"
    mixed = P.get("mixed_lengths", "false") == "true"
    toks, tg = ex["tokens"], ex["targets"]
    need(len(toks) == len(tg), "tokens/targets lengths differ")
    digits = [str(d) for d in range(B)]
    need(toks.count("+") == 1 and toks.count("=") == 1 and toks.count("<eos>") == 1 and toks[-1] == "<eos>",
         "bad + = <eos> structure")
    ip, ie = toks.index("+"), toks.index("=")
    A, Bo, C = toks[:ip], toks[ip + 1:ie], toks[ie + 1:-1]
    need(ip < ie, "= before +")

    def val(ds, what, lens):
        need(all(d in digits for d in ds), "%s: non-digit" % what)
        need(len(ds) in lens, "%s: %d digits, allowed %d..%d" % (what, len(ds), lens[0], lens[-1]))
        msf = ds[::-1] if le else ds
        need(len(msf) == 1 or msf[0] != "0", "%s: leading zero" % what)
        v = 0
        for d in msf:
            v = v * B + int(d)
        return v
    lens = range(1, n + 1) if mixed else [n]
    a, b = val(A, "a", lens), val(Bo, "b", lens)
    c = val(C, "c", range(1, 2 * n + 2))
    need(c == a + b, "c=%d but a+b=%d" % (c, a + b))
    next_token_region(toks, tg, ie, len(toks) - 1)
    if mixed:
        STATS.setdefault(("add-mixed", n), []).extend([len(A), len(Bo)])


def chk_modadd(ex, n, P):
    p, op = int(P.get("p", 97)), P.get("op", "+")
    toks, tg = ex["tokens"], ex["targets"]
    need(len(toks) == 4 and len(tg) == 4, "length != 4")
    need(toks[1] == op and toks[3] == "=", "bad op/=")
    a, b = num(toks[0], "", 0, p), num(toks[2], "", 0, p)
    r = {"+": a + b, "-": a - b, "*": a * b}[op] % p
    need(tg[:3] == [None] * 3, "scored before =")
    need(tg[3] == str(r), "target %r, expected %d" % (tg[3], r))
    MODADD_PAIRS.setdefault((P.get("p", "97"), op, P.get("train_fraction", ""), SEED[0], STREAM[0]),
                            set()).add((a, b))


MODADD_PAIRS = {}
SEED = [None]
STREAM = [None]


def chk_mano(ex, n, P):
    p = int(P.get("p", 23))
    toks, tg = ex["tokens"], ex["targets"]
    need(len(toks) == 2 * n + 2 and len(tg) == len(toks), "length != 2n+2")
    need(toks[-1] == "=", "last token not =")
    pos = [0]

    def ev():
        need(pos[0] < len(toks) - 1, "prefix expression truncated")
        t = toks[pos[0]]; pos[0] += 1
        if t in ("+", "-", "*"):
            l = ev(); r = ev()
            return {"+": l + r, "-": l - r, "*": l * r}[t] % p
        return num(t, "", 0, p)
    v = ev()
    need(pos[0] == len(toks) - 1, "prefix expression does not end right before =")
    need(sum(1 for t in toks if t in "+-*") == n, "operator count != n")
    need(all(t is None for t in tg[:-1]), "scored before =")
    need(tg[-1] == str(v), "target %r, expected %d" % (tg[-1], v))


def depth_value(P):
    d = P.get("depth", "uniform")
    return None if d == "uniform" else float(d)


def chk_needle(ex, n, P):
    F, K, V, nk = (int(P.get(x, d)) for x, d in (("filler", 16), ("key_vocab", 16), ("values", 16), ("keys", 1)))
    toks, tg = ex["tokens"], ex["targets"]
    need(len(toks) == n + 2 * nk + 2 and len(tg) == len(toks), "length != n+2*keys+2")
    need(toks[-2] == "<q>", "<q> not second to last")
    qk = num(toks[-1], "k", 0, K)
    fill, keys, qpos_fill = 0, [], None
    i, body = 0, toks[:-2]
    while i < len(body):
        t = body[i]
        if t.startswith("f"):
            num(t, "f", 0, F); fill += 1; i += 1
        else:
            kv = num(t, "k", 0, K)
            need(i + 1 < len(body), "key without value")
            vv = body[i + 1]; num(vv, "v", 0, V)
            if kv == qk:
                qpos_fill, qval = fill, vv
            keys.append(kv); i += 2
    need(fill == n, "%d filler tokens, expected n" % fill)
    need(len(keys) == nk and len(set(keys)) == nk, "keys not %d distinct: %s" % (nk, keys))
    need(qpos_fill is not None, "queried key absent before <q>")
    d = depth_value(P)
    if d is not None:
        want = math.floor(d * n + 0.5)
        need(qpos_fill == want, "%d fillers before queried pair, expected floor(depth*n+1/2)=%d" % (qpos_fill, want))
    need(all(t is None for t in tg[:-1]), "scored before the final key")
    need(tg[-1] == qval, "target %r, expected %r" % (tg[-1], qval))


def chk_mqar(ex, n, P):
    K, V = int(P.get("keys", 64)), int(P.get("values", 64))
    toks, tg = ex["tokens"], ex["targets"]
    need(len(toks) == 3 * n and len(tg) == len(toks), "length != 3n")
    ks = [num(t, "k", 0, K) for t in toks[0:2 * n:2]]
    vs = [num(t, "v", 0, V) for t in toks[1:2 * n:2]]
    need(len(set(ks)) == n, "first-half keys not distinct")
    q = [num(t, "k", 0, K) for t in toks[2 * n:]]
    need(sorted(q) == sorted(ks), "queries are not the same n keys")
    m = dict(zip(ks, vs))
    need(all(t is None for t in tg[:2 * n]), "scored in the first half")
    for j, kq in enumerate(q):
        need(tg[2 * n + j] == "v%d" % m[kq], "query %d: target %r, expected v%d" % (j, tg[2 * n + j], m[kq]))


def byte_names(b):
    if 0x20 <= b <= 0x7e:
        return {chr(b)} | ({"\\x%02x" % b, "\\x%02X" % b} if b == 0x20 else set())
    return {"\\x%02x" % b, "\\x%02X" % b}


def chk_text(ex, n, P):
    data, split = TEXT_DATA[0], float(P.get("split", 0.9))
    toks, tg = ex["tokens"], ex["targets"]
    need(len(toks) == n and len(tg) == n, "length != n")
    need(tg[:-1] == toks[1:], "targets are not tokens shifted by one")
    win = toks + [tg[-1]]
    L, cut = len(data), split * len(data)
    starts = [s for s in range(L - n) if all(win[j] in byte_names(data[s + j]) for j in range(n + 1))]
    need(starts, "window is not n+1 consecutive bytes of the file")
    # the split point: accept floor or round of split*L as the boundary (tasks.md leaves it open)
    if STREAM[0] == "eval":
        need(any(s >= math.floor(cut) - 0 for s in starts) or any(s >= round(cut) for s in starts),
             "eval window starts before the split (%s, cut %.1f)" % (starts, cut))
    else:
        need(any(s + n < math.ceil(cut) + 1 for s in starts), "train window crosses the split (%s, cut %.1f)" % (starts, cut))


TEXT_DATA = [None]
STATS = {}

CHECKERS = dict(parity=chk_parity, modcount=chk_modcount, flipflop=chk_flipflop, ffl=chk_ffl, dyck=chk_dyck,
                copy=chk_copy, add=chk_add, modadd=chk_modadd, mano=chk_mano, needle=chk_needle, mqar=chk_mqar,
                permutation=chk_permutation, quaternion=chk_quaternion, gridworld=chk_gridworld, text=chk_text)


def settings(textpath):
    S = []
    streams = ["train", "train-arch", "eval"]
    lens = [1, 2, 7, 24, 64]
    c = itertools.count()

    def add(task, params, lengths=lens):
        for L in lengths:
            i = next(c)
            S.append((task, params, L, 11 + 7 * i, streams[i % 3]))
    modes = ["states", "final", "scratchpad"]
    for o in modes:
        add("parity", {"output": o}); add("parity", {"output": o, "p1": "0.9"}, [9, 40])
        add("modcount", {"output": o}, [3, 30])
        add("modcount", {"output": o, "m": "7", "actions": "[1,3]", "probs": "[0.8,0.2]"}, [5, 33])
        add("flipflop", {"output": o}, [2, 20]); add("flipflop", {"output": o, "values": "4", "p_write": "0.2"}, [6, 50])
        for lab in ("top", "depth"):
            add("dyck", {"output": o, "label": lab}, [1, 12, 40])
            add("dyck", {"output": o, "label": lab, "k": "3", "max_depth": "4", "p_open": "0.7"}, [9, 30])
            add("dyck", {"output": o, "label": lab, "k": "1", "max_depth": "1"}, [8])
        for g, d in (("S", "5"), ("A", "4"), ("A", "6"), ("S", "3")):
            add("permutation", {"output": o, "group": g, "degree": d}, [4, 25])
        add("quaternion", {"output": o}, [1, 10, 30])
        add("gridworld", {"output": o}, [5, 40]); add("gridworld", {"output": o, "cells": "5", "p_right": "0.8"}, [3, 30])
    add("dyck", {"label": "balanced"}, [2, 8, 30]); add("dyck", {"label": "balanced", "k": "3", "max_depth": "4", "p_open": "0.7"}, [6, 20])
    add("ffl", {}, [2, 3, 16, 50]); add("ffl", {"p_i": "0.1"}, [2, 20]); add("ffl", {"p_i": "0.98"}, [40])
    add("copy", {}, [1, 5, 20]); add("copy", {"reverse": "true", "alphabet": "26"}, [1, 7, 30]); add("copy", {"alphabet": "1"}, [4])
    add("add", {}, [1, 3, 12]); add("add", {"base": "2"}, [1, 5, 20]); add("add", {"little_endian": "false"}, [1, 6])
    add("add", {"mixed_lengths": "true"}, [1, 4, 15]); add("add", {"base": "7", "little_endian": "false", "mixed_lengths": "true"}, [9])
    for op in ("+", "-", "*"):
        add("modadd", {"op": op}, [1, 5]); add("modadd", {"op": op, "p": "13", "train_fraction": "0.5"}, [3])
    add("mano", {}, [1, 2, 8, 20]); add("mano", {"p": "2"}, [5]); add("mano", {"p": "97"}, [12])
    add("needle", {}, [1, 10, 60]); add("needle", {"keys": "3", "depth": "0.25"}, [1, 4, 9, 40])
    for dp in ("0", "1", "0.5", "0.33"):
        add("needle", {"depth": dp, "keys": "2"}, [5, 17])
    add("needle", {"keys": "4", "key_vocab": "4", "filler": "2", "values": "3"}, [6, 20])
    add("mqar", {}, [1, 8, 64]); add("mqar", {"keys": "5", "values": "3"}, [5]); add("mqar", {"keys": "200", "values": "7"}, [30])
    add("text", {"path": textpath}, [1, 5, 40]); add("text", {"path": textpath, "split": "0.5"}, [3, 60])
    return S


def run(srbench, task, params, n, seed, stream, count):
    cmd = [srbench, "sample", task, "-n", str(n), "--count", str(count), "--seed", str(seed),
           "--stream", stream, "--format", "jsonl"]
    for k, v in params.items():
        cmd += ["--set", "%s=%s" % (k, v)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return cmd, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--samples", type=int, default=200)
    args = ap.parse_args()

    td = tempfile.mkdtemp(prefix="srbench-jsonl-")
    textpath = os.path.join(td, "text.txt")
    body = b"".join(b"line %d of the file: \"q%d\" \\ x%c\t%c.\n" % (i, i * i % 97, 0x80 + i, i % 32)
                    for i in range(60)) + b"\x00\x7f\xff\xc3\xa9 ~{}[]<>\r\n"
    with open(textpath, "wb") as f:
        f.write(body)
    TEXT_DATA[0] = body

    rows, failures, total_fail = [], [], 0
    for (task, params, n, seed, stream) in settings(textpath):
        SEED[0], STREAM[0] = seed, stream
        cmd, r = run(args.srbench, task, params, n, seed, stream, args.samples)
        setting = " ".join("%s=%s" % kv for kv in params.items() if kv[0] != "path") + " n=%d %s" % (n, stream)
        nbad, checked = 0, 0
        if r.returncode != 0:
            nbad = 1
            failures.append((task, setting, "exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()), " ".join(cmd)))
        else:
            lines = r.stdout.decode("utf-8").splitlines()
            if len(lines) != args.samples:
                nbad += 1
                failures.append((task, setting, "%d lines, expected %d" % (len(lines), args.samples), " ".join(cmd)))
            for ln in lines:
                checked += 1
                try:
                    ex = json.loads(ln)
                    need(set(ex) == {"task", "n", "tokens", "targets", "input_length"}, "keys %s" % sorted(ex))
                    need(ex["task"] == task and ex["n"] == n, "task/n fields")
                    need(ex["input_length"] == len(ex["tokens"]),
                         "input_length %r, but a task without a tape layout has %d tokens" % (ex["input_length"], len(ex["tokens"])))
                    need(all(isinstance(t, str) for t in ex["tokens"]), "non-string token")
                    need(all(t is None or isinstance(t, str) for t in ex["targets"]), "bad target type")
                    CHECKERS[task](ex, n, params)
                except (Fail, ValueError, KeyError, IndexError, TypeError) as e:
                    nbad += 1
                    failures.append((task, setting, "%s: %s" % (type(e).__name__, e), ln))
            # determinism: identical invocation prints identical bytes (every 3rd setting)
            if len(rows) % 3 == 0:
                _, r2 = run(args.srbench, task, params, n, seed, stream, args.samples)
                if r2.stdout != r.stdout:
                    nbad += 1
                    failures.append((task, setting, "identical invocation printed different bytes", " ".join(cmd)))
                # example i does not depend on what was generated before: --index i --count 1
                i = min(7, args.samples - 1)
                c3 = cmd[:cmd.index("--count")] + ["--count", "1", "--index", str(i)] + cmd[cmd.index("--count") + 2:]
                r3 = subprocess.run(c3, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                if lines and r3.stdout.decode("utf-8").splitlines() != lines[i:i + 1]:
                    nbad += 1
                    failures.append((task, setting, "--index %d --count 1 differs from line %d" % (i, i), " ".join(c3)))
        total_fail += nbad
        rows.append((task, setting, checked, nbad))

    # cross-sample invariants
    def extra(task, setting, ok, msg):
        nonlocal total_fail
        rows.append((task, setting, 1, 0 if ok else 1))
        if not ok:
            total_fail += 1
            failures.append((task, setting, msg, ""))
    # modadd: train and eval pairs disjoint (same params and seed)
    for op in ("+", "-", "*"):
        for p, f in (("97", None), ("13", "0.5")):
            pr = {"op": op}
            if f:
                pr.update(p=p, train_fraction=f)
            sets, errors = {}, []
            for st in ("train", "eval"):
                cmd, r = run(args.srbench, "modadd", pr, 1, 5, st, 1500)
                sets[st] = set()
                lines = r.stdout.decode().splitlines()
                if r.returncode != 0 or len(lines) != 1500:
                    errors.append("%s: exit %d, %d lines of 1500: %s (%s)" % (
                        st, r.returncode, len(lines), r.stderr.decode(errors="replace").strip(), " ".join(cmd)))
                    continue
                for ln in lines:
                    ex = json.loads(ln)
                    sets[st].add((int(ex["tokens"][0]), int(ex["tokens"][2])))
            both = sets["train"] & sets["eval"]
            P2 = int(p) ** 2
            ftr = float(f or 0.4)
            ok = not errors and not both and len(sets["train"]) <= math.floor(ftr * P2) and \
                len(sets["eval"]) <= P2 - math.floor(ftr * P2)
            extra("modadd", "op=%s p=%s split disjoint (%d/%d pairs)" % (op, p, len(sets["train"]), len(sets["eval"])),
                  ok, "; ".join(errors) or "pairs in both streams: %s" % sorted(both)[:10])
    # loose distribution checks (6 sigma)
    def frac(key, want, label):
        xs = STATS.get(key, [])
        if not xs:  # the settings above were meant to gather these: nothing gathered is a failure
            extra(label, "frequency of %s" % (key,), False, "no examples gathered for %s" % (key,))
            return
        m = sum(xs) / len(xs)
        tol = 6 * math.sqrt(want * (1 - want) / len(xs)) + 1e-9
        extra(label, "mean %.3f vs %.3f over %d" % (m, want, len(xs)), abs(m - want) <= tol, "frequency off")
    frac(("parity", "0.9"), 0.9, "parity"); frac(("parity", "0.5"), 0.5, "parity")
    frac(("flipflop", "0.2"), 0.2, "flipflop"); frac(("gridworld", "0.8"), 0.8, "gridworld")
    frac(("ffl", "0.98"), 0.98, "ffl"); frac(("ffl", "0.1"), 0.1, "ffl")
    frac(("dyck-balanced",), 0.5, "dyck")
    STATS[("modcount-a1",)] = [1 if x == "a1" else 0 for x in STATS.get(("modcount", "[1,3]", "[0.8,0.2]"), [])]
    frac(("modcount-a1",), 0.8, "modcount")

    w = max(len(r[1]) for r in rows)
    print("%-12s %-*s %8s %8s" % ("task", w, "setting", "checked", "failures"))
    for t, s, c, f in rows:
        print("%-12s %-*s %8d %8d" % (t, w, s, c, f))
    print("settings: %d, examples: %d, failures: %d" % (len(rows), sum(r[2] for r in rows), total_fail))
    shown = set()
    for t, s, msg, ln in failures:  # the first failing example of each of the first 8 failing settings
        if (t, s) in shown or len(shown) >= 8:
            continue
        shown.add((t, s))
        print("\nFAIL %s [%s]: %s\n  %s" % (t, s, msg, ln))
    shutil.rmtree(td, ignore_errors=True)
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main())
