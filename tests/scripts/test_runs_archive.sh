#!/usr/bin/env bash
# scripts/runs_archive.sh: a suite swept in two shards in two "sessions" whose results/ folder is
# lost in between, kept by save and brought back by restore, joins into the same numbers as the
# suite swept at once (scripts/compare_h5.py); a second save of the same runs leaves the archive
# byte for byte; restore leaves a run file already there untouched; bad input exits 2.
#   bash tests/scripts/test_runs_archive.sh build/harness/srbench
set -uo pipefail
srbench=$(realpath "$1")
here="$(cd "$(dirname "$0")/../.." && pwd)"
script="$here/scripts/runs_archive.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { if ! eval "$1"; then echo "FAIL: $2"; fails=$((fails + 1)); fi; }
has() { grep -qF -- "$2" <<< "$1"; }  # has TEXT NEEDLE
cd "$tmp"
cat > s.yaml <<'YAML'
name: arch
seeds: [0, 1]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 16}
  train: {steps: 3, batch: 4, lr: 1e-3, warmup: 1, eval_every: 3, length: [1, 6]}
  eval: {lengths: [6], examples: 8, val_examples: 8}
tasks:
  - task: parity
  - task: flipflop
models:
  - name: t
YAML
count() { find "$1" -maxdepth 1 -name '*.h5' 2>/dev/null | wc -l; }
# session 1: shard 0 of 2, saved
"$srbench" sweep s.yaml --shard 0/2 --out r/arch.h5 > /dev/null 2>&1; check "[ $? -eq 0 ]" "shard 0/2 exited non-zero"
check "[ $(count r/arch/runs) -eq 2 ]" "shard 0/2 wrote $(count r/arch/runs) runs, expected 2"
out=$(bash "$script" save arch r a)
check "has \"\$out\" 'holds 2 runs (2 added)'" "first save: '$out'"
cp a/arch.tar.xz first.tar.xz
out=$(bash "$script" save arch r a)
check "has \"\$out\" 'holds 2 runs (0 added)'" "second save: '$out'"
check "cmp -s a/arch.tar.xz first.tar.xz" "a second save of the same runs changed the archive"
# session 2: results lost, restored, shard 1 of 2, saved
rm -rf r
out=$(bash "$script" restore arch r a)
check "has \"\$out\" 'holds 2 runs (2 restored'" "restore: '$out'"
"$srbench" sweep s.yaml --shard 1/2 --out r/arch.h5 > shard2.log 2>&1; check "[ $? -eq 0 ]" "shard 1/2 exited non-zero"
check "[ $(count r/arch/runs) -eq 4 ]" "after shard 1/2: $(count r/arch/runs) runs, expected 4"
out=$(bash "$script" save arch r a)
check "has \"\$out\" 'holds 4 runs (2 added)'" "save after shard 1: '$out'"
# session 3: results lost, restored; the whole suite has nothing left to run and joins
rm -rf r
bash "$script" restore arch r a > /dev/null
out=$("$srbench" sweep s.yaml --out r/arch.h5 2>&1)
check "has \"\$out\" '4 already finished, 0 to run'" "the restored runs were not counted as finished: $(echo "$out" | head -1)"
"$srbench" sweep s.yaml --out whole/arch.h5 > /dev/null 2>&1; check "[ $? -eq 0 ]" "the suite at once exited non-zero"
cmp=$(/usr/bin/python3 "$here/scripts/compare_h5.py" r/arch.h5 whole/arch.h5 2>&1)
check "[ $? -eq 0 ]" "joined and whole differ: $(echo "$cmp" | head -5)"
# restore leaves a file already there alone
f=$(ls r/arch/runs/*.h5 | head -1)
echo junk > "$f"
bash "$script" restore arch r a > /dev/null
check "[ \"\$(cat $f)\" = junk ]" "restore overwrote a run file already there"
# bad input
bash "$script" save > /dev/null 2>&1; check "[ $? -eq 2 ]" "no arguments: exit not 2"
bash "$script" restore nosuch r a > /dev/null 2>&1; check "[ $? -eq 2 ]" "a missing archive: exit not 2"
bash "$script" save nosuch r a > /dev/null 2>&1; check "[ $? -eq 2 ]" "no run files: exit not 2"
bash "$script" save ../x r a > /dev/null 2>&1; check "[ $? -eq 2 ]" "a path as suite name: exit not 2"
if [ $fails -ne 0 ]; then echo "FAIL: $fails check(s)"; exit 1; fi
echo "ok: runs_archive.sh keeps, restores and joins a suite swept in two shards"
