#!/usr/bin/env bash
# The main job: installs every dependency, builds, runs the quickstart suite and prints its report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
build/harness/srbench sweep configs/quickstart.yaml --out results/quickstart.h5
build/harness/srbench report results/quickstart.h5
