#!/usr/bin/env bash
# A real single-node Slurm cluster in one folder, for tests and for trying `srbench slurm`:
# Debian's slurm-wlm and munge (scripts/install-deps.sh), loopback only, free high ports, every
# file (config, keys, sockets, state, logs, pid files) inside the folder. Needs root.
#
#   scripts/slurm-local.sh start [DIR]   start munged, slurmctld and slurmd (DIR: a new temporary
#                                        folder if not given); prints DIR and the SLURM_CONF line
#                                        (also written to DIR/env) to use sbatch, squeue, ... on it
#   scripts/slurm-local.sh stop DIR      cancel this cluster's jobs, stop its daemons by the PIDs
#                                        in DIR's pid files; the folder is left in place
#
# Exit codes of `start`: 0 the node is idle and takes jobs; 3 Slurm could not start here (what
# failed is printed; anything already started is stopped again); 2 bad usage.
# Nothing but the processes started here is ever signalled: no pkill, no killall.
set -euo pipefail

usage() {
  echo "usage: $0 start [DIR] | stop DIR" >&2
  exit 2
}

# Two free TCP ports on the loopback interface (bound once, released, then handed to Slurm).
free_ports() {
  /usr/bin/python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# Waits up to $2 seconds for the process in pid file $1 to exit.
wait_gone() {
  local pid=$1 secs=$2 i
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

# Stops the daemon whose pid file is $1 (SIGTERM, then SIGKILL after 10 s).
stop_pidfile() {
  local file=$1 name=$2 pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" 10; then
      echo "slurm-local: $name (pid $pid) ignored SIGTERM; sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" 5 || true
    fi
  fi
  rm -f "$file"
}

stop() {
  local dir=$1
  [ -d "$dir" ] || { echo "slurm-local: $dir: no such folder" >&2; exit 2; }
  dir=$(cd "$dir" && pwd)
  # Jobs first, through this cluster's own controller, so no job process outlives the daemons.
  if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    export SLURM_CONF="$dir/slurm.conf"
    if [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
      scancel --user="$(id -un)" 2>/dev/null || true
      for ((i = 0; i < 150; i++)); do
        [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
        sleep 0.1
      done
    fi
  fi
  stop_pidfile "$dir/slurmd.pid" slurmd
  stop_pidfile "$dir/slurmctld.pid" slurmctld
  stop_pidfile "$dir/munge/munged.pid" munged
  echo "slurm-local: stopped the cluster in $dir"
}

# Prints why Slurm cannot start, stops what was started, exits 3.
cannot_start() {
  echo "slurm-local: Slurm cannot start here: $*" >&2
  [ -n "${DIR:-}" ] && [ -d "$DIR" ] && stop "$DIR" >/dev/null 2>&1 || true
  exit 3
}

start() {
  [ "$(id -u)" -eq 0 ] || cannot_start "needs root (slurmd runs jobs as their user; SlurmUser=root)"
  local tool
  for tool in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
    command -v "$tool" >/dev/null || cannot_start "'$tool' is not installed (Debian packages slurm-wlm munge; scripts/install-deps.sh)"
  done
  DIR=${1:-$(mktemp -d "${TMPDIR:-/tmp}/slurm-local-XXXXXX")}
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  [ ! -s "$DIR/slurmctld.pid" ] || cannot_start "$DIR already holds a cluster (stop it first: $0 stop $DIR)"
  mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log"
  chmod 700 "$DIR/munge"

  # munge: its own key, socket, pid and log in the folder (no system munged is used or touched)
  local socket="$DIR/munge/munge.socket"
  mungekey --create --keyfile="$DIR/munge/munge.key" --force >/dev/null 2>&1 ||
    cannot_start "mungekey could not create a key in $DIR/munge"
  munged --force --socket="$socket" --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munge/munged.pid" \
    --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed" 2>"$DIR/log/munged.err" ||
    cannot_start "munged failed: $(tail -n 3 "$DIR/log/munged.err" "$DIR/munge/munged.log" 2>/dev/null)"
  munge -n --socket="$socket" | unmunge --socket="$socket" >/dev/null 2>&1 ||
    cannot_start "munge credentials do not round-trip through munged ($DIR/munge/munged.log)"

  local host ports ctld_port slurmd_port cpus
  host=$(hostname -s)
  ports=$(free_ports) || cannot_start "no free TCP ports on 127.0.0.1"
  read -r ctld_port slurmd_port <<<"$ports"
  cpus=$(nproc)
  cat >"$DIR/slurm.conf" <<EOF
# A single-node cluster for tests (scripts/slurm-local.sh); everything lives in $DIR.
ClusterName=srbench-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# finished jobs stay visible to scontrol for 10 minutes; cancelled tasks are killed within 5 s
MinJobAge=600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  echo "export SLURM_CONF=$DIR/slurm.conf" >"$DIR/env"
  export SLURM_CONF="$DIR/slurm.conf"

  slurmctld -f "$SLURM_CONF" 2>"$DIR/log/slurmctld.err" ||
    cannot_start "slurmctld failed: $(tail -n 5 "$DIR/log/slurmctld.err" "$DIR/log/slurmctld.log" 2>/dev/null)"
  slurmd -f "$SLURM_CONF" 2>"$DIR/log/slurmd.err" ||
    cannot_start "slurmd failed: $(tail -n 5 "$DIR/log/slurmd.err" "$DIR/log/slurmd.log" 2>/dev/null)"
  local i state=""
  for ((i = 0; i < 300; i++)); do
    state=$(sinfo -h -N -n "$host" -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.1
  done
  [ "$state" = idle ] || cannot_start "the node is '${state:-not known}' instead of idle after 30 s: $(tail -n 5 "$DIR/log/slurmd.log" "$DIR/log/slurmctld.log" 2>/dev/null)"
  echo "slurm-local: node $host ($cpus CPUs) idle; ports $ctld_port/$slurmd_port; folder $DIR"
  echo "export SLURM_CONF=$DIR/slurm.conf"
}

[ $# -ge 1 ] || usage
case $1 in
  start) [ $# -le 2 ] || usage; start "${2:-}" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
