#!/usr/bin/env bash
# Training throughput, ours beside PyTorch (docs/performance.md): builds Release, then runs
# bench/run_bench.py (about 10 minutes; --skip-sweep leaves out the sweep, about 4 of them).
# First, task generation from Python against C++ (bench/bench_python_tasks.py, about a minute).
#   bash scripts/bench.sh [--skip-sweep] [--repeats N] [--steps N] [--configs S,M,L] [--threads 1,2]
#                         [--archs rnn,lstm,gru] [--rnn-configs R1,R2] [--recurrent-only]
#                         [--skip-eval] [--eval-lengths 128,512,1024,2048] [--eval-archs transformer,rnn,lstm,gru] [--tiny-only]
#                         [--torch-core auto|default|NAME]
# The long-T evaluation rows (`srbench eval` beside PyTorch's forward under torch.no_grad(), the
# time and peak memory of each process) come after the step times as T grows.
# The recurrent rows (rnn, lstm, gru beside torch.nn.RNN / LSTM / GRU) follow the transformer's;
# --recurrent-only runs just them (with the GEMM rates and the FMA peak).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j2 --target bench_model bench_eigen bench_tasks srbench srbench_python > /dev/null
PYTHONPATH=build/python /usr/bin/python3 bench/bench_python_tasks.py --bench-tasks build/bench/bench_tasks
echo
exec /usr/bin/python3 bench/run_bench.py --build build "$@"
