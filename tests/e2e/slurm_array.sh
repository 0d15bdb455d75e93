#!/usr/bin/env bash
# e2e (slow, cluster): the demo contract (fewer grid points) as a three-seed Slurm array on a
# one-node cluster. Task 0 is requeued mid-run with `scontrol requeue` (SIGTERM to the batch
# script, forwarded to h3parity, which stops at a safe point; Slurm re-runs the task), task 1 is
# signalled with `scancel -b --signal=USR1` (forwarded; h3parity exits 3; the script requeues
# itself), task 2 runs undisturbed. Every task must complete, the interrupted ones after one
# restart that resumed from disk, every start must have logged its numerics environment, and
# every file of every seed must be byte-identical to a local uninterrupted run with the same
# runs layout. Prints the timeline of job events. Before that, sbatch must refuse scripts pinned
# (--constraint, --gpu-type) to a node feature and a GPU model the cluster lacks.
# Uses the cluster of H3P_SLURM_DIR when one runs there (scripts/test.sh starts one); otherwise
# starts its own through scripts/slurm-cluster.sh and stops it by PID. Skips (77) when the
# daemons are not installed or the test cannot run them (not root, no sudo).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cluster=$H3P_SOURCE_DIR/scripts/slurm-cluster.sh

# 1. A cluster.
own=0
if [[ -n ${H3P_SLURM_DIR:-} ]] && "$cluster" status "$H3P_SLURM_DIR" 2>/dev/null; then
  slurm_dir=$H3P_SLURM_DIR
else
  if [[ $(id -u) != 0 ]] && ! sudo -n true 2>/dev/null; then
    echo "skip: the Slurm daemons need root (or passwordless sudo)"; exit 77
  fi
  slurm_dir=$H3P_TMP_DIR/slurm
  status=0
  H3P_SLURM_PORT=${H3P_SLURM_PORT:-$((20000 + RANDOM % 20000))} "$cluster" start "$slurm_dir" || status=$?
  [[ $status == 77 ]] && { echo "skip: Slurm daemons not installed"; exit 77; }
  [[ $status == 0 ]] || fail "cannot start the cluster (exit $status)"
  own=1
fi
# shellcheck disable=SC1091
source "$slurm_dir/env"
array=""
cleanup() {
  [[ -n $array ]] && scancel "$array" 2>/dev/null || true
  if [[ $own == 1 ]]; then "$cluster" stop "$slurm_dir" >/dev/null || true; fi
}
trap cleanup EXIT

sed -e 's/"sampling_steps": 50/"sampling_steps": 80/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json

# 2. sbatch reads the pin of a script: a feature or GPU model the cluster lacks is refused
# (sbatch --test-only: nothing is queued), never started on some other node.
pin_refused() {  # pin_refused WHAT_SBATCH_SAYS SLURM_GENERATE_ARGS...
  local want=$1; shift
  rm -rf P
  "$H3P_CLI" slurm generate --contract c.json --runs R --out P "$@" >/dev/null \
    || fail "slurm generate $* exited $?"
  local said status=0
  said=$(sbatch --test-only P/*.sbatch 2>&1) || status=$?
  [[ $status != 0 ]] && grep -q "$want" <<<"$said" \
    || fail "sbatch --test-only with $* (exit $status): $said"
  rm -rf P
}
pin_refused "Invalid feature specification" --constraint h3p_no_such_feature
pin_refused "Invalid generic resource" --gpus 1 --gpu-type h3p_no_such_gpu

# 3. Submit the array.
t0=$(date +%s.%N)
out=$("$H3P_CLI" slurm generate --contract c.json --runs R --time 00:15:00 --signal-lead 60 --submit) \
  || fail "slurm generate --submit exited $?"
echo "$out"
array=$(sed -n 's/^submitted generate array job \([0-9]*\).*/\1/p' <<<"$out")
[[ -n $array ]] || fail "no job id in: $out"

: > timeline
event() { printf '%s %s\n' "$(date +%s.%N)" "$*" >> timeline; }
event "submitted array job $array (tasks 0-2, one seed each)"
declare -A seen
poll() {  # records every change of a task's state or restart count
  local line task state restarts key
  while read -r line; do
    task=$(sed -n 's/.*ArrayTaskId=\([0-9]*\).*/\1/p' <<<"$line")
    [[ -n $task ]] || continue
    state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$line")
    restarts=$(sed -n 's/.*Restarts=\([0-9]*\).*/\1/p' <<<"$line")
    key="$state restarts=$restarts"
    if [[ ${seen[$task]:-} != "$key" ]]; then
      seen[$task]=$key
      event "task $task: $key"
    fi
  done < <(scontrol -o show job "$array" 2>/dev/null || true)
}
saved() { ls R/demo/provider/seed-$1/steps/*.json 2>/dev/null | wc -l; }
running() { [[ ${seen[$1]:-} == RUNNING* ]]; }
deadline=$(( $(date +%s) + 600 ))

# 4. Requeue task 0 and signal task 1, each mid-run.
requeued=0 signalled=0
while (( requeued == 0 || signalled == 0 )); do
  (( $(date +%s) < deadline )) || fail "tasks did not reach mid-run"
  poll
  if (( requeued == 0 )) && running 0 && (( $(saved 42) >= 5 )); then
    scontrol requeue "${array}_0"
    event "test: scontrol requeue ${array}_0 (seed 42 at $(saved 42) saved steps)"
    requeued=1
  fi
  if (( signalled == 0 )) && running 1 && (( $(saved 43) >= 5 )); then
    scancel -b --signal=USR1 "${array}_1"
    event "test: scancel -b --signal=USR1 ${array}_1 (seed 43 at $(saved 43) saved steps)"
    signalled=1
  fi
  sleep 0.1
done

# 5. Wait for every task to complete.
while :; do
  poll
  done_count=0
  for t in 0 1 2; do [[ ${seen[$t]:-} == COMPLETED* ]] && done_count=$((done_count + 1)); done
  (( done_count == 3 )) && break
  for t in 0 1 2; do
    case ${seen[$t]:-} in FAILED*|CANCELLED*|TIMEOUT*|NODE_FAIL*|OUT_OF_MEMORY*)
      cat R/slurm/logs/* >&2; fail "task $t: ${seen[$t]}" ;;
    esac
  done
  (( $(date +%s) < deadline )) || { cat R/slurm/logs/* >&2; fail "array did not complete"; }
  sleep 0.2
done
event "all three tasks completed"

echo "timeline (seconds since submission):"
sort -n timeline | awk -v t0="$t0" '{ $1 = sprintf("%7.2f s ", $1 - t0); print }'
echo "job logs:"
cat R/slurm/logs/*

# 6. What happened is what was meant to happen.
for t in 0 1; do
  [[ ${seen[$t]} == "COMPLETED restarts=1" ]] || fail "task $t: ${seen[$t]} (want one restart)"
done
[[ ${seen[2]} == "COMPLETED restarts=0" ]] || fail "task 2: ${seen[2]}"
logs=$(cat R/slurm/logs/*)
grep -q "_0, restart 0): received SIGTERM" <<<"$logs" || fail "task 0 did not get SIGTERM"
grep -q "_1, restart 0): received SIGUSR1" <<<"$logs" || fail "task 1 did not get SIGUSR1"
grep -q "_1, restart 0): requeueing" <<<"$logs" || fail "task 1 did not requeue itself"
for s in 42 43; do
  grep -Eq "seed-$s: [0-9]+ calls, [1-9][0-9]* replayed from disk" <<<"$logs" \
    || fail "seed $s was not resumed from disk"
done
# Every start of a task (the script logs "start on") printed its numerics environment once,
# before the next start: two in the logs of the requeued tasks, one in the undisturbed one's.
for t in 0 1 2; do
  log=$(ls R/slurm/logs/*-"${array}_$t".out) || fail "task $t: no job log"
  read -r starts misplaced < <(awk '
    /\): start on / { if (starts > 0 && lines != 1) misplaced++; starts++; lines = 0; next }
    /^numerics environment: / { if (starts == 0) misplaced++; lines++ }
    END { if (starts > 0 && lines != 1) misplaced++; print starts + 0, misplaced + 0 }' "$log")
  want=$(( ${seen[$t]##*restarts=} + 1 ))
  [[ $starts == "$want" ]] || fail "task $t: $starts starts in $log, want $want"
  [[ $misplaced == 0 ]] \
    || fail "task $t: not one 'numerics environment: ' line per start in $log:"$'\n'"$(cat "$log")"
done

# 7. Byte identity with a local uninterrupted run of each seed.
for i in 0 1 2; do
  "$H3P_CLI" --progress none generate --contract c.json --seed-index $i --runs L >/dev/null \
    || fail "local generate of seed index $i exited $?"
done
for s in 42 43 44; do
  diff <(tree_digest R/demo/provider/seed-$s) <(tree_digest L/demo/provider/seed-$s) \
    || fail "seed $s: the cluster run differs from the local uninterrupted run"
  echo "seed $s: $(tree_digest R/demo/provider/seed-$s | wc -l) files byte-identical to the local run"
done
echo "ok: Slurm array with a requeued and a signalled task completed; every seed byte-identical"
