#!/usr/bin/env bash
# bench_model --run's arguments: a recurrent arch runs without --heads (its parameter count the
# hand count below); the transformer without --heads, and an unknown --arch, exit 2 with a message
# naming what was wrong, never an abort.
#   bash tests/scripts/test_bench_model_cli.sh build/bench/bench_model
set -uo pipefail
bench=$1
fails=0
check() { if ! eval "$1"; then echo "FAIL: $2"; fails=$((fails + 1)); fi; }
run=(--run --d 32 --layers 1 --T 8 --batch 4 --steps 2)

out=$("$bench" "${run[@]}" --arch lstm 2>&1); rc=$?
# vocab 32, d 32, one LSTM layer with PyTorch's two bias vectors: embedding 32·32, gates
# 4·(32·32 + 32·32 + 32 + 32), head 32·32 + 32 = 1,024 + 8,448 + 1,056
check '[ $rc -eq 0 ]' "lstm without --heads exited $rc: $out"
check 'grep -q "params=10528$" <<< "$out"' "lstm's parameter count is not 10,528: $out"

out=$("$bench" "${run[@]}" 2>&1); rc=$?
check '[ $rc -eq 2 ]' "the transformer without --heads exited $rc (expected 2): $out"
check 'grep -q -- "--arch transformer needs --heads" <<< "$out"' "no message naming --heads: $out"

out=$("$bench" "${run[@]}" --heads 4 --arch nope 2>&1); rc=$?
check '[ $rc -eq 2 ]' "--arch nope exited $rc (expected 2): $out"
check 'grep -q "unknown value '"'"'nope'"'"'" <<< "$out"' "no message naming the arch: $out"

out=$("$bench" "${run[@]}" --heads 4 2>&1); rc=$?
check '[ $rc -eq 0 ] && grep -q "^tok_s=" <<< "$out"' "the transformer with --heads 4 did not run: $out"

[ $fails -eq 0 ] && echo "test_bench_model_cli: all passed" || { echo "test_bench_model_cli: $fails failed"; exit 1; }
