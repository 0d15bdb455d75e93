#!/usr/bin/env bash
# A one-node Slurm cluster for tests: munged, slurmctld and slurmd started by hand, all state in
# one directory, stopped by recorded PID. Runs as root (or through sudo).
# usage: scripts/slurm-cluster.sh start DIR   write DIR/slurm.conf and a munge key, start the
#                                             daemons, wait until the node is idle, and write
#                                             DIR/env (source it: SLURM_CONF=DIR/slurm.conf)
#        scripts/slurm-cluster.sh stop DIR    stop the daemons by the PIDs in DIR/pids (TERM,
#                                             then KILL), and job processes left behind
#        scripts/slurm-cluster.sh status DIR  0 when every recorded daemon runs
# Two partitions: `batch` (default, preemptible: PreemptMode=REQUEUE) and `urgent` (higher
# PriorityTier), so a test can preempt. Ports: H3P_SLURM_PORT (slurmctld, default 6817) and
# the next one (slurmd). Exit 77 when the daemons are not installed, 2 on failure.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [[ -z $cmd || -z $dir ]]; then
  echo "usage: $0 start|stop|status DIR" >&2
  exit 2
fi

sudo_cmd=()
if [[ $(id -u) != 0 ]]; then sudo_cmd=(sudo); fi

daemons_installed() {
  local b
  for b in munged mungekey slurmctld slurmd sbatch scontrol squeue; do
    command -v "$b" >/dev/null 2>&1 || [[ -x /usr/sbin/$b ]] || return 1
  done
}

node_state() {
  { scontrol show node "$1" 2>/dev/null || true; } | sed -n 's/.*State=\([A-Z+_]*\).*/\1/p' | head -1
}

pid_alive() { kill -0 "$1" 2>/dev/null || "${sudo_cmd[@]}" kill -0 "$1" 2>/dev/null; }

start() {
  if ! daemons_installed; then
    echo "slurm-cluster: slurmctld, slurmd, munge or the Slurm clients are not installed" \
         "(scripts/install-deps.sh --cluster)" >&2
    exit 77
  fi
  PATH=$PATH:/usr/sbin
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [[ -f $dir/pids ]]; then
    echo "slurm-cluster: $dir/pids exists; stop that cluster first" >&2
    exit 2
  fi
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  chmod 0755 "$dir" "$dir/munge"
  local port=${H3P_SLURM_PORT:-6817}
  local host
  host=$(hostname -s)

  # 1. munge: a fresh key, its own socket.
  "${sudo_cmd[@]}" mungekey -c -f -k "$dir/munge/munge.key"
  "${sudo_cmd[@]}" chmod 0600 "$dir/munge/munge.key"
  "${sudo_cmd[@]}" munged -F -f --key-file="$dir/munge/munge.key" \
    --socket="$dir/munge/munge.socket.2" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
    >"$dir/log/munged.out" 2>&1 &
  echo "munged $!" >"$dir/pids"
  for _ in $(seq 1 100); do [[ -S $dir/munge/munge.socket.2 ]] && break; sleep 0.05; done
  [[ -S $dir/munge/munge.socket.2 ]] || { echo "slurm-cluster: munged did not start" >&2; cat "$dir/log/munged.out" >&2; exit 2; }

  # 2. slurm.conf: this machine as controller and only node (line from slurmd -C).
  local node
  node=$(slurmd -C | head -1)
  cat >"$dir/slurm.conf" <<EOF
ClusterName=h3p
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${port}
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${dir}/munge/munge.socket.2,cred_expire=10
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool
SlurmctldPidFile=${dir}/slurmctld.pid
SlurmdPidFile=${dir}/slurmd.pid
SlurmctldLogFile=${dir}/log/slurmctld.log
SlurmdLogFile=${dir}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=${dir}/log/jobcomp.log
MinJobAge=3600
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=bf_interval=5,sched_interval=5
ReturnToService=2
MpiDefault=none
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
SlurmctldParameters=preempt_send_user_signal
${node} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=REQUEUE
PartitionName=urgent Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF
EOF
  echo "export SLURM_CONF=$dir/slurm.conf" >"$dir/env"

  # 3. The daemons, in the foreground of background jobs so that their PIDs are theirs.
  "${sudo_cmd[@]}" slurmctld -D -i -f "$dir/slurm.conf" >"$dir/log/slurmctld.out" 2>&1 &
  echo "slurmctld $!" >>"$dir/pids"
  "${sudo_cmd[@]}" slurmd -D -f "$dir/slurm.conf" >"$dir/log/slurmd.out" 2>&1 &
  echo "slurmd $!" >>"$dir/pids"

  # 4. Idle node (scontrol show node, not sinfo -N).
  export SLURM_CONF=$dir/slurm.conf
  node=${node#NodeName=}
  node=${node%% *}
  local state=""
  for _ in $(seq 1 200); do
    state=$(node_state "$node")
    [[ $state == IDLE* ]] && break
    sleep 0.1
  done
  if [[ $state != IDLE* ]]; then
    echo "slurm-cluster: node $node not idle (state '${state:-unknown}'); logs in $dir/log" >&2
    tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 2>/dev/null || true
    stop
    exit 2
  fi
  echo "slurm-cluster: node $node idle; daemons $(cut -d' ' -f2 "$dir/pids" | tr '\n' ' ')(source $dir/env)"
}

descendants() {  # every descendant PID of $1, deepest last
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

stop() {
  [[ -f $dir/pids ]] || { echo "slurm-cluster: nothing recorded in $dir/pids"; return 0; }
  # Job processes still running under slurmd (batch shells, their children): every descendant
  # of slurmd's slurmstepd children, found by parent PID, never by name.
  local name pid
  while read -r name pid; do
    [[ $name == slurmd ]] || continue
    for child in $(descendants "$pid"); do
      "${sudo_cmd[@]}" kill -TERM "$child" 2>/dev/null || true
    done
  done <"$dir/pids"
  # Reverse order: slurmd, slurmctld, munged.
  tac "$dir/pids" | while read -r name pid; do
    pid_alive "$pid" || continue
    "${sudo_cmd[@]}" kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do pid_alive "$pid" || break; sleep 0.1; done
    if pid_alive "$pid"; then
      echo "slurm-cluster: $name ($pid) ignored SIGTERM; killing it" >&2
      "${sudo_cmd[@]}" kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  mv "$dir/pids" "$dir/pids.stopped"
  echo "slurm-cluster: stopped"
}

status() {
  [[ -f $dir/pids ]] || exit 1
  local name pid
  while read -r name pid; do pid_alive "$pid" || exit 1; done <"$dir/pids"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status DIR" >&2; exit 2 ;;
esac
