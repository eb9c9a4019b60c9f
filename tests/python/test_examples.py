#!/usr/bin/python3
"""The examples run (docs/python.md, "Examples"): examples/tutorial.ipynb, made from
examples/train_gru.py (checked up to date), executed by Debian's nbconvert and ipykernel — or the
script itself with --script — into a temporary results folder. Afterwards the suite file must hold
the suite's built-in runs and the GRU's two runs, all ok, with curves, and the figures must exist;
a cell that raises fails the execution.

  PYTHONPATH=build/python /usr/bin/python3 tests/python/test_examples.py [--script]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import srbench
from checks import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", action="store_true", help="run examples/train_gru.py instead of the notebook")
    args = ap.parse_args()
    out = tempfile.mkdtemp(prefix="srbench-examples-")
    env = dict(os.environ, SRBENCH_TUTORIAL_OUT=out, SRBENCH_ROOT=ROOT)
    if args.script:
        p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples", "train_gru.py")], env=env, cwd=out,
                           capture_output=True, text=True)
    else:
        p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples", "make_notebook.py"), "--check"],
                           capture_output=True, text=True)
        check(p.returncode == 0, p.stdout.strip())
        p = subprocess.run(["/usr/bin/python3", "-m", "nbconvert", "--to", "notebook", "--execute",
                            "--ExecutePreprocessor.timeout=600", "--output-dir", out, "--output", "executed",
                            os.path.join(ROOT, "examples", "tutorial.ipynb")],
                           env=env, cwd=os.path.join(ROOT, "examples"), capture_output=True, text=True)
    if check(p.returncode == 0, f"exit {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"):
        r = srbench.read_results(os.path.join(out, "tutorial.h5"))
        models = r.summary.groupby("model").size().to_dict()
        check(models == {"learned": 2, "alibi": 2, "gru": 2}, f"runs per model {models}, expected learned 2, alibi 2, gru 2")
        check((r.summary.status == "ok").all(), f"status {list(r.summary.status)}")
        gru = r.summary[r.summary.model == "gru"]
        check(len(r.curves[r.curves.run_id.isin(gru.run_id)]) == 2 * 3, "the GRU runs' curves do not have 3 points each")
        check((gru.id_acc > 0.5).all(), f"the GRU did not learn flip-flop in distribution: id_acc {list(gru.id_acc)}")
        fig = os.path.join(out, "tutorial-figures", "acc_vs_length_flipflop.png")
        check(os.path.exists(fig), f"no figure {fig}")
        print(r.summary[["model", "seed", "id_acc", "ood_length_acc", "shift_acc"]].to_string(index=False))
    return finish(("examples/train_gru.py" if args.script else "examples/tutorial.ipynb") + " ran; "
                  "built-in and GRU runs merged, reported and plotted")


if __name__ == "__main__":
    sys.exit(main())
