#!/usr/bin/env bash
# The golden test (CTest "golden: ..."): sweeps tests/cross_isa/suite.yaml with the given srbench
# and compares every number of its runs with tests/golden/cross-isa.txt, written once by
# `scripts/golden.py write` (docs/harness.md, "The same numbers on every machine"). Sessions and
# CI land on different machines, so this checks that every machine computes the same bits.
#   tests/golden/check.sh build/harness/srbench
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
srbench=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$srbench" sweep "$root/tests/cross_isa/suite.yaml" --jobs 2 --out "$out/cross-isa.h5" > "$out/sweep.log" 2>&1 ||
  { cat "$out/sweep.log"; echo "golden: the sweep failed"; exit 1; }
"$srbench" --version | sed -n 's/^build: /golden: build /p'
/usr/bin/python3 "$root/scripts/golden.py" check "$out/cross-isa.h5" "$root/tests/golden/cross-isa.txt"
