#!/usr/bin/python3
"""scripts/repeat_ceiling.py: hand-worked leading runs, and its count on parity against a count
made here from the same `srbench sample` examples.

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_repeat_ceiling.py --srbench build/harness/srbench \
        --script scripts/repeat_ceiling.py
"""
import argparse
import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from checks import check, finish, load_script


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srbench", required=True)
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    mod = load_script(a.script)
    f = mod.leading_run_conflicts
    check(f(["1", "1", "0"], ["q1", "q0", "q0"]), "parity 1 1 0: q1 q0 inside the run of 1s")
    check(not f(["0", "0", "1"], ["q0", "q0", "q1"]), "parity 0 0 1: the run of 0s keeps q0")
    check(f(["(", "(", ")"], ["d1", "d2", "d1"]), "dyck ( ( ): d1 d2")
    check(not f(["(", "[", "["], ["d1", "d2", "d3"]), "dyck ( [ [: a run of one")
    check(not f(["1", "1"], [None, "q0"]), "unscored positions do not count")
    # parity at length 6, p1 = 0.5: an example conflicts exactly when it starts with 1 1
    out = subprocess.run([a.srbench, "sample", "parity", "-n", "6", "--count", "300", "--stream", "eval",
                          "--format", "jsonl"], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(x) for x in out.splitlines()]
    expected = sum(r["tokens"][:2] == ["1", "1"] for r in rows)
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = mod.main(["--srbench", a.srbench, "parity", "-n", "6", "--count", "300"])
    check(rc == 0 and f"{expected}/300 examples" in buf.getvalue(), f"parity count {expected}: {buf.getvalue()}")
    check(f"ceiling {1 - expected / 300:.4f}" in buf.getvalue(), "ceiling printed")
    rc = subprocess.run([sys.executable, a.script, "--srbench", a.srbench, "parity", "-n", "4", "--set", "p1=2"],
                        capture_output=True, text=True)
    check(rc.returncode == 2 and "p1" in rc.stderr, f"a bad parameter: exit {rc.returncode} {rc.stderr}")
    return finish("repeat_ceiling.py")


if __name__ == "__main__":
    sys.exit(main())
