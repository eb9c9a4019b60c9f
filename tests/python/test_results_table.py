#!/usr/bin/python3
"""scripts/results_table.py on hand-written report csvs: which row fills which cell, the interval
and count formatting, and clear errors for the wrong kind of csv.

    PYTHONPATH=build/python:tests/python /usr/bin/python3 tests/python/test_results_table.py --script scripts/results_table.py
"""
import argparse
import os
import sys
import tempfile
from checks import check, finish, run_script as run


REPORT = """task,entry,model,arch,grid,runs,ok,diverged,failed,fitted,metric,n,mean,std,min,median,max,ci_lo,ci_hi,frac_target
parity,parity,alibi,transformer,,5,5,0,0,2,id_acc,5,0.4,0.5,0,0,1,0.0,0.8,0.4
parity,parity,alibi,transformer,,5,5,0,0,2,shift_acc,5,0.25,0.1,0,0,1,0.1,0.4,0.4
parity,parity,lstm,lstm,,5,5,0,0,5,id_acc,5,1,0,1,1,1,1,1,1
S5,S5,alibi,transformer,,5,5,0,0,0,id_acc,1,0.125,nan,0.125,0.125,0.125,nan,nan,0
S5,S5,lstm,lstm,,5,5,0,0,0,id_acc,0,nan,nan,nan,nan,nan,nan,nan,0
"""
LENGTHS = """task,entry,model,arch,grid,quantity,length,n,mean,std,min,median,max,ci_lo,ci_hi
parity,parity,alibi,transformer,model.layers=2,seq_acc,32,3,0.5,0.1,0.4,0.5,0.6,0.41,0.59
parity,parity,alibi,transformer,model.layers=2,seq_acc,64,3,0.25,0.1,0.1,0.3,0.35,0.12,0.33
parity,parity,alibi,transformer,model.layers=2,ood_length_acc,,3,0.2,0.1,0.1,0.2,0.3,0.1,0.3
"""

ERRORS = """task,entry,model,arch,grid,condition,length,n,mean,std,min,median,max,ci_lo,ci_hi
parity,parity,alibi,transformer,,id,32,5,0.25,0.1,0.1,0.2,0.4,0.125,0.375
parity,parity,alibi,transformer,,p1=0.9,32,5,0.5,0.1,0.4,0.5,0.6,0.45,0.55
parity,parity,lstm,lstm,,id,64,5,0,0,0,0,0,0,0
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    a = ap.parse_args()
    d = tempfile.mkdtemp()
    rep, lens = os.path.join(d, "report.csv"), os.path.join(d, "lengths.csv")
    open(rep, "w").write(REPORT)
    open(lens, "w").write(LENGTHS)
    out = run(a.script, "--csv", rep, "--metric", "id_acc", "--count", "fitted")
    check(out.returncode == 0, f"exit 0: {out.stderr}")
    lines = out.stdout.strip().split("\n")
    check(lines[0] == "| task | alibi | lstm |", f"header: {lines[0]!r}")
    check(lines[2] == "| parity | 0.40 [0.00, 0.80] · 2/5 | 1.00 [1.00, 1.00] · 5/5 |", f"parity row: {lines[2]!r}")
    check(lines[3] == "| S5 | 0.12 · 0/5 | - · 0/5 |", f"S5 row (one seed: no interval; n 0: a dash): {lines[3]!r}")
    out = run(a.script, "--csv", rep, "--metric", "shift_acc", "--digits", "3")
    check(out.stdout.strip().split("\n") == ["| task | alibi |", "|---|---|", "| parity | 0.250 [0.100, 0.400] |"],
          f"shift_acc: only the rows that have it: {out.stdout!r}")
    out = run(a.script, "--csv", rep, "--metric", "id_acc", "--transpose", "--models", "lstm")
    check(out.stdout.strip().split("\n")[0] == "| model | parity | S5 |" and "| lstm | 1.00 [1.00, 1.00] | - |"
          in out.stdout, f"transposed, lstm only: {out.stdout!r}")
    out = run(a.script, "--csv", lens, "--length", "64")
    check("| parity | 0.25 [0.12, 0.33] |" in out.stdout and "alibi model.layers=2" in out.stdout,
          f"length 64 with the grid in the column: {out.stdout!r}")
    out = run(a.script, "--csv", lens, "--metric", "id_acc")
    check(out.returncode == 2 and "--lengths" in out.stderr, "a lengths csv without --length: refused, naming why")
    out = run(a.script, "--csv", rep, "--length", "64")
    check(out.returncode == 2 and "--lengths" in out.stderr, "--length on a plain report: refused, naming why")
    errs = os.path.join(d, "errors.csv")
    open(errs, "w").write(ERRORS)
    out = run(a.script, "--csv", errs, "--token-acc", "--length", "32")
    check(out.stdout.strip().split("\n")[2:] == ["| parity | 0.75 [0.62, 0.88] |"],
          f"token accuracy = 1 - error, the interval's ends swapped: {out.stdout!r}")
    out = run(a.script, "--csv", errs, "--token-acc", "--length", "32", "--condition", "p1=0.9")
    check("| parity | 0.50 [0.45, 0.55] |" in out.stdout, f"token accuracy under a shift: {out.stdout!r}")
    out = run(a.script, "--csv", errs, "--metric", "id_acc")
    check(out.returncode == 2 and "--token-acc" in out.stderr, "an errors csv without --token-acc: refused")
    out = run(a.script, "--csv", rep, "--token-acc", "--length", "32")
    check(out.returncode == 2 and "--errors" in out.stderr, "--token-acc on a plain report: refused, naming why")
    out = run(a.script, "--csv", rep, "--metric", "nosuch")
    check(out.returncode == 2 and "nosuch" in out.stderr, "an unknown metric: refused, naming it")
    out = run(a.script, "--csv", os.path.join(d, "nosuch.csv"))
    check(out.returncode == 2 and "nosuch.csv" in out.stderr and "Traceback" not in out.stderr,
          f"a missing --csv: exit 2 naming it: {out.stderr!r}")
    sys.exit(finish("results_table.py"))


if __name__ == "__main__":
    main()
