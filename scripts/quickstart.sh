#!/usr/bin/env bash
# The main job: installs every dependency, builds, installs the Python module, runs the quickstart
# suite and prints its report, then the README's claims about it checked on these runs (the
# suite's `expect:` list, `srbench report --check`). A claim that does not hold on this machine
# is printed as FAILS without failing the job; a malformed claim (exit 2) fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
bash scripts/install-python.sh   # `import srbench` for /usr/bin/python3 (docs/python.md)
build/harness/srbench sweep configs/quickstart.yaml --out results/quickstart.h5
build/harness/srbench report results/quickstart.h5
check=0
build/harness/srbench report results/quickstart.h5 --check || check=$?
[ "$check" -le 1 ]
