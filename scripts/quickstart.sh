#!/usr/bin/env bash
# The main job: installs every dependency, builds, installs the Python module, runs the quickstart
# suite and prints its report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
bash scripts/install-python.sh   # `import srbench` for /usr/bin/python3 (docs/python.md)
build/harness/srbench sweep configs/quickstart.yaml --out results/quickstart.h5
build/harness/srbench report results/quickstart.h5
