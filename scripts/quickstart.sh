#!/usr/bin/env bash
# The main job: installs every dependency, builds, and runs the quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
srbench=build/harness/srbench
$srbench tasks
echo
echo "=== one example of each task family (srbench sample TASK -n 8) ==="
for task in $($srbench tasks | grep -E '^[a-z]+ — ' | cut -d' ' -f1); do
  case "$task" in
    text) $srbench sample text -n 24 --set path=LICENSE ;;
    *) $srbench sample "$task" -n 8 ;;
  esac
done
