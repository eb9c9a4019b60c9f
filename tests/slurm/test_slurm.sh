#!/usr/bin/env bash
# `srbench slurm --submit` against a real single-node Slurm (scripts/slurm-local.sh): a suite of 6
# tiny runs as a 3-task job array plus its merge job, held against a plain local sweep.
#
#   test_slurm.sh --srbench BIN --compare BIN --slurm-local SCRIPT --scenario plain|cancel|requeue|timelimit|searches
#
# plain:  submit, wait for the merge job; the merged file equals the local sweep (timings aside).
# cancel: longer runs; once array task 1 has finished its first run, `scancel` it mid-way through
#         its second; the merge job still runs and reports the lost run missing (none failed);
#         submitting the same command again redoes only that run; the final file equals the
#         local sweep, with no run lost or duplicated and no temporary file left.
# requeue: as cancel, but `scontrol requeue` the task (Slurm sends SIGTERM to all its processes,
#         as on preemption): the task is requeued, resumes its shard (skipping its finished run)
#         and completes; the merge job reports nothing missing and nothing failed.
# timelimit: one array task with a 1-minute time limit (--sbatch-arg=--time=1, --signal-grace 10)
#         and a shard of about 120 s of short runs (their number measured from one run here): the
#         warning (USR1 at 20-50 s: slurmctld checks time limits every 30 s) stops the sweep and the
#         task requeues itself, resumes its shard, and so on until it completes; the task is never
#         killed by the limit, nothing is recorded failed, the merged file equals the local sweep.
#         Slurm holds a requeued job for 2 minutes (Reason=BeginTime); the test releases it after 5 s
#         (scontrol update StartTime=now) to keep its run time near 2 minutes.
# searches: a suite with one tiny spline search (population 2) and its stage-2 runs: the searches
#         array runs first (one task), the sweep array after it finds the search finished and
#         does not redo it; the merged file (runs, /splines) equals the local sweep.
#
# Exit codes: 0 pass, 1 fail, 77 skipped — only when Slurm itself cannot start here (why is
# printed), and never in CI (CI=true, as .ci/run runs): there that fails. The cluster's daemons are stopped by PID on every exit (trap); the temporary folder is
# removed after a pass and kept, with its path printed, after a failure.
set -euo pipefail

srbench="" compare="" slurm_local="" scenario=""
while [ $# -gt 0 ]; do
  case $1 in
    --srbench) srbench=$2; shift 2 ;;
    --compare) compare=$2; shift 2 ;;
    --slurm-local) slurm_local=$2; shift 2 ;;
    --scenario) scenario=$2; shift 2 ;;
    *) echo "test_slurm: unknown argument $1" >&2; exit 1 ;;
  esac
done
[ -x "$srbench" ] && [ -x "$compare" ] && [ -f "$slurm_local" ] && [[ $scenario =~ ^(plain|cancel|requeue|timelimit|searches)$ ]] || {
  echo "usage: $0 --srbench BIN --compare BIN --slurm-local SCRIPT --scenario plain|cancel|requeue|timelimit|searches" >&2
  exit 1
}

T=$(mktemp -d "${TMPDIR:-/tmp}/srbench-slurm-test-XXXXXX")
finish() {
  local rc=$?
  trap - EXIT
  bash "$slurm_local" stop "$T/cluster" >/dev/null 2>&1 || true
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
    rm -rf "$T"
  else
    echo "test_slurm: FAILED; kept $T (cluster logs in $T/cluster/log, job logs in $T/*/res/tiny/logs)"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 143' TERM INT

fail() {
  echo "test_slurm: FAIL: $*"
  exit 1
}

# ---- the cluster: skip only if it cannot start, and outside CI
set +e
bash "$slurm_local" start "$T/cluster" >"$T/start.log" 2>&1
rc=$?
set -e
if [ "$rc" -eq 3 ]; then
  why=$(grep 'cannot start' "$T/start.log" | head -n 1)
  [ "${CI:-}" != true ] || { cat "$T/start.log"; fail "CI=true and Slurm cannot start: $why"; }
  echo "test_slurm: SKIPPED: $why"
  exit 77
fi
[ "$rc" -eq 0 ] || { cat "$T/start.log"; fail "scripts/slurm-local.sh start exited with $rc"; }
cat "$T/start.log"
# shellcheck disable=SC1091
source "$T/cluster/env"

cat >"$T/tiny.yaml" <<'EOF'
name: tiny
seeds: [0, 1, 2]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 60, batch: 8, eval_every: 20, lr: 0.003, warmup: 5}
  eval: {examples: 32, val_examples: 16}
tasks:
  - task: parity
    train: {length: [1, 4]}
    eval: {lengths: [4, 8], shifts: [{p1: 0.9}]}
  - task: flipflop
    train: {length: [1, 6]}
    eval: {lengths: [6, 12]}
EOF
if [ "$scenario" = searches ]; then
  cat >"$T/tiny.yaml" <<'EOF'
name: tiny
seeds: [0, 1, 2]
defaults:
  model: {layers: 1, d_model: 16, heads: 2, max_len: 32}
  train: {steps: 60, batch: 8, eval_every: 20, lr: 0.003, warmup: 5}
  eval: {examples: 32, val_examples: 16}
searches:
  - name: par
    task: parity
    train: {length: [1, 4], steps: 20}
    model: {activation: spline, mlp_spline: {keypoints: 8}}
    population: 2
tasks:
  - task: parity
    train: {length: [1, 4]}
    eval: {lengths: [4, 8]}
models:
  - name: base
  - name: searched
    model: {activation: spline, mlp_spline: {keypoints: 8}, splines_from: par, freeze_splines: true}
EOF
fi
# cancel: runs of several seconds each (about 1 s per 8000 steps here), so that a task can be
# cancelled in the middle of one
sets=()
[[ $scenario == cancel || $scenario == requeue ]] && sets=(--set train.steps=40000)
nruns=6 tasks=3 slurm_args=()
if [ "$scenario" = timelimit ]; then
  # Runs of a few seconds (every start of the task, 20 s or more before its warning, finishes
  # some), as many as make about 120 s here (more than twice the 50 s the first warning may take:
  # beside other work the calibration and the task can run at speeds 1.5 times apart, and a 75 s
  # shard once finished before the warning), timed from the two runs of one seed with one thread,
  # as a task has it. 50,000 steps: about 3 s a
  # run with the AVX-512 kernel (20,000 steps took 1.2 s there, too short for the bound below),
  # and still under 15 s on the slower AVX2 machines.
  sets=(--set train.steps=50000 --set train.eval_every=5000)
  sed -i 's/^seeds: \[0, 1, 2\]$/seeds: [0]/' "$T/tiny.yaml"
  t_start=$(date +%s%N)
  "$srbench" sweep "$T/tiny.yaml" --out "$T/calibrate/tiny.h5" --jobs 1 --threads 1 "${sets[@]}" >"$T/calibrate.out" 2>&1 ||
    { cat "$T/calibrate.out"; fail "the calibration runs failed"; }
  ms=$((($(date +%s%N) - t_start) / 2000000))
  seeds=$(((120000 + 2 * ms - 1) / (2 * ms)))
  nruns=$((2 * seeds))
  [ "$nruns" -ge 6 ] && [ "$nruns" -le 90 ] || fail "one run took $ms ms: $nruns runs would be needed for 120 s (6 to 90 expected)"
  echo "test_slurm: one run takes $ms ms here: $nruns runs ($seeds seeds) in the task's shard"
  sed -i "s/^seeds: \[0\]$/seeds: [$(seq -s ', ' 0 $((seeds - 1)))]/" "$T/tiny.yaml"
  tasks=1 slurm_args=(--signal-grace 10 --sbatch-arg=--time=1)
fi

# Seconds since the test started, for the log.
t0=$SECONDS
say() { echo "[$((SECONDS - t0))s] $*"; }

# The state of a job (or array task "A_I"): PENDING, RUNNING, COMPLETED, CANCELLED, ...
job_state() { scontrol show job -o "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1 | cut -d= -f2; }

# Waits up to $2 seconds for job $1 to end; prints its final state.
wait_job() {
  local id=$1 secs=$2 state i
  for ((i = 0; i < secs * 5; i++)); do
    state=$(job_state "$id")
    case $state in
      PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED | REQUEUED | "") sleep 0.2 ;;
      *) echo "$state"; return 0 ;;
    esac
  done
  squeue >&2 || true
  fail "job $id has not ended after $secs s (state ${state:-unknown})"
}

# `srbench slurm ... --submit` from folder $1; sets ARRAY and MERGE to the job ids it prints.
submit() {
  local dir=$1
  mkdir -p "$dir"
  (cd "$dir" && "$srbench" slurm ../tiny.yaml --array "$tasks" --out res/tiny.h5 "${sets[@]}" "${slurm_args[@]}" \
    --submit) >"$dir/submit.out" 2>&1 ||
    { cat "$dir/submit.out"; fail "srbench slurm --submit exited with $?"; }
  cat "$dir/submit.out"
  ARRAY=$(sed -n "s/.*array job \\([0-9]*\\) (tasks 0-$((tasks - 1))).*/\\1/p" "$dir/submit.out")
  SEARCHES=$(sed -n 's/^submitted searches array job \([0-9]*\) .*/\1/p' "$dir/submit.out")
  MERGE=$(sed -n 's/.* and merge job \([0-9]*\) .*/\1/p' "$dir/submit.out")
  [ -n "$ARRAY" ] && [ -n "$MERGE" ] || fail "no job ids in the output of srbench slurm --submit"
}

# Every task of array $1 ended in state $2 (task list: $3, e.g. "0 2").
check_tasks() {
  local array=$1 want=$2 task state
  for task in $3; do
    state=$(job_state "${array}_${task}")
    [ "$state" = "$want" ] || fail "array task ${array}_${task} ended $state, not $want (log: $(cat "$logs/${array}_${task}.out" 2>/dev/null | tail -n 3))"
  done
}

# The reference: the same suite swept locally (timelimit: one run at a time, beside the task).
local_sweep() {
  "$srbench" sweep "$T/tiny.yaml" --out "$T/local/tiny.h5" "$@" "${sets[@]}" >"$T/local.out" 2>&1 ||
    { cat "$T/local.out"; fail "local sweep failed"; }
}
if [ "$scenario" != timelimit ]; then
  say "local sweep"
  local_sweep --jobs 2
fi

res=$T/cluster-run/res
logs=$res/tiny/logs
say "submit"
submit "$T/cluster-run"
grep -q "^'$srbench' sweep " "$res/tiny/slurm/sweep.sbatch" || fail "sweep.sbatch does not run $srbench by absolute path"
grep -q -- '--jobs 1 --threads "${SLURM_CPUS_PER_TASK:-1}"' "$res/tiny/slurm/sweep.sbatch" ||
  fail "sweep.sbatch does not give one thread per allotted CPU"

if [[ $scenario == cancel || $scenario == requeue ]]; then
  # Task 1 runs runs 1 and 4: cancel it once the first is written, while the second trains.
  for ((i = 0; i < 600; i++)); do
    grep -q '^\[1/2\]' "$logs/${ARRAY}_1.out" 2>/dev/null && break
    sleep 0.2
  done
  grep -q '^\[1/2\]' "$logs/${ARRAY}_1.out" || fail "array task ${ARRAY}_1 did not finish a first run within 120 s"
  [ "$(job_state "${ARRAY}_1")" = RUNNING ] || fail "array task ${ARRAY}_1 is $(job_state "${ARRAY}_1"), not RUNNING, before scancel"
  if [ "$scenario" = cancel ]; then
    say "scancel ${ARRAY}_1 (one run finished, one in progress)"
    scancel "${ARRAY}_1"
  else
    say "scontrol requeue ${ARRAY}_1 (one run finished, one in progress)"
    scontrol requeue "${ARRAY}_1"
  fi
fi

if [ "$scenario" = timelimit ]; then
  say "local sweep (beside the task)"
  local_sweep --jobs 1 &
  local_pid=$!
  # Each time the task is requeued, release it from Slurm's 2-minute hold once it has been
  # pending for 5 s (slurmd refuses to launch a job it is still cleaning up after: "already killed").
  task=${ARRAY}_0 pending_since=""
  for ((i = 0; i < 1500; i++)); do
    info=$(scontrol show job -o "$task" 2>/dev/null || true)
    case $info in
      *JobState=PENDING*Reason=BeginTime*)
        if [ -z "$pending_since" ]; then
          pending_since=$SECONDS
        elif [ $((SECONDS - pending_since)) -ge 5 ]; then
          say "$task requeued ($(grep -o 'Restarts=[0-9]*' <<<"$info")): released"
          scontrol update JobId="$task" StartTime=now
          pending_since=""
        fi ;;
      *JobState=COMPLETED* | *JobState=FAILED* | *JobState=TIMEOUT* | *JobState=CANCELLED*) break ;;
      *) pending_since="" ;;
    esac
    sleep 0.2
  done
  wait "$local_pid" || fail "local sweep failed"
fi

state=$(wait_job "$MERGE" 180)
say "merge job $MERGE: $state"
[ "$state" = COMPLETED ] || fail "merge job $MERGE ended $state (log: $(cat "$logs/merge-$MERGE.out"))"
cat "$logs/merge-$MERGE.out"

if [ "$scenario" = searches ]; then
  [ -n "$SEARCHES" ] || fail "srbench slurm did not submit a searches array for a suite with a search"
  grep -q -- "--searches-only --shard" "$res/tiny/slurm/searches.sbatch" || fail "searches.sbatch does not run sweep --searches-only"
  check_tasks "$SEARCHES" COMPLETED "0"
  grep -q "searches: 1 to run" "$logs/searches-${SEARCHES}_0.out" || fail "the searches task did not run the search"
  check_tasks "$ARRAY" COMPLETED "0 1 2"
  for task in 0 1 2; do
    ! grep -q "searches: 1 to run" "$logs/${ARRAY}_${task}.out" || fail "array task $task redid the finished search"
  done
  [ -f "$res/tiny/splines/par.h5" ] || fail "no splines file $res/tiny/splines/par.h5"
  grep -q "missing: 0 of 6" "$logs/merge-$MERGE.out" || fail "the merge job does not report 0 of 6 runs missing"
elif [ "$scenario" = requeue ]; then
  check_tasks "$ARRAY" COMPLETED "0 1 2"
  grep -q "interrupted by SIGTERM" "$logs/${ARRAY}_1.out" || fail "requeued task 1 was not stopped by SIGTERM"
  grep -q "1 already finished, 1 to run" "$logs/${ARRAY}_1.out" || fail "requeued task 1 did not resume its shard"
  grep -q "missing: 0 of 6" "$logs/merge-$MERGE.out" || fail "after the requeue the merge job does not report 0 of 6 runs missing"
  ! grep -q "^failed:" "$logs/merge-$MERGE.out" || fail "the run stopped by the requeue was recorded as failed"
  leftovers=$(find "$res/tiny/runs" -name '*.tmp*' -o -name '*.claim' | wc -l)
  [ "$leftovers" -eq 0 ] || fail "$leftovers temporary or claim file(s) left in $res/tiny/runs"
elif [ "$scenario" = timelimit ]; then
  check_tasks "$ARRAY" COMPLETED "0"
  log=$logs/${ARRAY}_0.out
  restarts=$(scontrol show job -o "${ARRAY}_0" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
  warned=$(grep -c "the time limit is near: requeueing ${ARRAY}_0" "$log" || true)
  resumed=$(grep -cE ", [1-9][0-9]* already finished, [0-9]+ to run" "$log" || true)
  say "task ${ARRAY}_0: $restarts restart(s), $warned warning(s), $resumed resumption(s)"
  [ "${restarts:-0}" -ge 1 ] || fail "task ${ARRAY}_0 was never requeued: its shard finished before the time-limit warning"
  [ "$warned" -eq "$restarts" ] || fail "task ${ARRAY}_0 restarted $restarts time(s) but was warned $warned time(s)"
  [ "$resumed" -eq "$restarts" ] || fail "task ${ARRAY}_0 restarted $restarts time(s) but resumed its shard $resumed time(s)"
  ! grep -q "DUE TO TIME LIMIT" "$log" || fail "task ${ARRAY}_0 was killed by its time limit"
  grep -q "interrupted by SIGTERM" "$log" || fail "the warned task did not stop its sweep"
  grep -q "missing: 0 of $nruns" "$logs/merge-$MERGE.out" || fail "the merge job does not report 0 of $nruns runs missing"
  ! grep -q "^failed:" "$logs/merge-$MERGE.out" || fail "a run stopped at the time limit was recorded as failed"
  leftovers=$(find "$res/tiny/runs" -name '*.tmp*' -o -name '*.claim' | wc -l)
  [ "$leftovers" -eq 0 ] || fail "$leftovers temporary or claim file(s) left in $res/tiny/runs"
elif [ "$scenario" = plain ]; then
  check_tasks "$ARRAY" COMPLETED "0 1 2"
  grep -q "missing: 0 of 6" "$logs/merge-$MERGE.out" || fail "the merge job does not report 0 of 6 runs missing"
else
  check_tasks "$ARRAY" COMPLETED "0 2"
  check_tasks "$ARRAY" CANCELLED "1"
  grep -q "missing: 1 of 6" "$logs/merge-$MERGE.out" ||
    fail "after cancelling task 1 mid-run the merge job should report exactly its run in progress missing"
  ! grep -q "^failed:" "$logs/merge-$MERGE.out" || fail "the run killed by scancel was recorded as failed"

  say "re-submit"
  submit "$T/cluster-run"
  state=$(wait_job "$MERGE" 180)
  say "merge job $MERGE: $state"
  [ "$state" = COMPLETED ] || fail "merge job $MERGE of the re-submission ended $state"
  cat "$logs/merge-$MERGE.out"
  check_tasks "$ARRAY" COMPLETED "0 1 2"
  grep -q "2 already finished, 0 to run" "$logs/${ARRAY}_0.out" || fail "re-submitted task 0 did not skip its 2 finished runs"
  grep -q "1 already finished, 1 to run" "$logs/${ARRAY}_1.out" || fail "re-submitted task 1 did not redo only its lost run"
  grep -q "2 already finished, 0 to run" "$logs/${ARRAY}_2.out" || fail "re-submitted task 2 did not skip its 2 finished runs"
  grep -q "missing: 0 of 6" "$logs/merge-$MERGE.out" || fail "the re-submission's merge job does not report 0 of 6 runs missing"
  leftovers=$(find "$res/tiny/runs" -name '*.tmp*' | wc -l)
  [ "$leftovers" -eq 0 ] || fail "$leftovers temporary run file(s) left in $res/tiny/runs"
fi

files=$(find "$res/tiny/runs" -name '*.h5' | wc -l)
[ "$files" -eq "$nruns" ] || fail "$files run files in $res/tiny/runs, expected $nruns"
"$compare" "$T/local/tiny.h5" "$res/tiny.h5" || fail "the merged file differs from the local sweep"
say "PASS ($scenario)"
