#!/usr/bin/python3
"""The accuracy ceiling of a causal transformer without absolute positions on a task's examples.

A causal transformer whose positions enter only through relative terms (`alibi`, `rope`, `none`,
`relative`) computes the same vector at every position of a leading run of identical tokens: the
embeddings are equal, and by induction over layers each attention output is a weighted mean of
equal values, and norms and MLPs act per position. So on `x x x ...` it must give every position
of the run the same prediction. An example whose labels differ inside that leading run (parity:
`1 1` is q1 q0; dyck depth: `( (` is d1 d2) cannot be all correct; this script counts them.

    /usr/bin/python3 scripts/repeat_ceiling.py --srbench build/harness/srbench parity -n 4 \
        --count 256 --stream eval [--set p1=0.9]

prints the number of such examples and the ceiling on seq_acc (1 - that fraction) for exactly the
examples `srbench sample` draws (the harness's evaluation set at data seed 0 for --stream eval).
"""
import argparse
import json
import subprocess
import sys


def leading_run_conflicts(tokens, targets):
    """True when the scored labels of the leading run of identical tokens are not all equal."""
    run = 1
    while run < len(tokens) and tokens[run] == tokens[0]:
        run += 1
    labels = {t for t in targets[:run] if t is not None}
    return len(labels) > 1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--srbench", required=True, help="the srbench binary")
    p.add_argument("task")
    p.add_argument("-n", type=int, required=True, help="length")
    p.add_argument("--count", type=int, default=256)
    p.add_argument("--stream", default="eval")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--set", action="append", default=[], help="task parameter KEY=VALUE")
    a = p.parse_args(argv)
    cmd = [a.srbench, "sample", a.task, "-n", str(a.n), "--count", str(a.count), "--stream", a.stream,
           "--seed", str(a.seed), "--format", "jsonl"]
    for s in a.set:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        return r.returncode
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    bad = sum(leading_run_conflicts(x["tokens"], x["targets"]) for x in rows)
    print(f"{a.task} n={a.n} {' '.join(a.set)}: {bad}/{len(rows)} examples with differing labels in their "
          f"leading run of identical tokens; seq_acc ceiling {1 - bad / len(rows):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
