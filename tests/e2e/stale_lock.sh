#!/usr/bin/env bash
# e2e: two processes on one run, and stale locks. A generate killed with SIGKILL leaves
# RUN/.lock behind, still naming its dead pid; the next generate takes the lock over, resumes
# from the saved steps, refuses a concurrent writer while it holds the lock (naming its own pid),
# and finishes byte-identical to an uninterrupted run. A lock file that names a live but
# unrelated pid (a recycled pid) and is held by nobody does not block a run either.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 60/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
# An array, not a function: a background job must be the CLI process itself, so that $! is
# the pid the lock records.
gen=("$H3P_CLI" --progress none generate --contract c.json --impl provider --seed 42)
run=demo/provider/seed-42

# The reference: one uninterrupted run.
"${gen[@]}" --runs full >/dev/null || fail "reference generate exited $?"

# Step 1: a writer killed while it holds the lock leaves a stale lock file naming it.
"${gen[@]}" --runs R >/dev/null 2>&1 &
dead=$!
until [[ -f R/$run/steps/003.json ]] || ! kill -0 $dead 2>/dev/null; do sleep 0.005; done
kill -9 $dead 2>/dev/null || fail "the first writer finished before it could be killed"
wait $dead 2>/dev/null || true
[[ -f R/$run/.lock ]] || fail "no lock file left behind by the killed writer"
grep -qx "pid $dead" R/$run/.lock || fail "lock file does not name the killed pid: $(cat R/$run/.lock)"
saved=$(ls R/$run/steps/*.json | wc -l)
echo "killed pid $dead after $saved saved steps; its lock file remains"

# Step 2: the next writer recovers the stale lock and resumes.
"${gen[@]}" --runs R >resume.out 2>resume.err &
resumer=$!
until grep -qx "pid $resumer" R/$run/.lock 2>/dev/null || ! kill -0 $resumer 2>/dev/null; do
  sleep 0.005
done
# Step 3: while it holds the lock, a concurrent writer is refused and told who holds it. The
# holder is stopped (SIGSTOP keeps its lock) so that the refusal is tested on every run, however
# fast the machine, and continued afterwards.
kill -STOP $resumer 2>/dev/null || fail "the resumer finished before a concurrent writer could try"
grep -qx "pid $resumer" R/$run/.lock || fail "the resumer does not hold the lock: $(cat R/$run/.lock)"
refused=0; LAST_ERR=$("${gen[@]}" --runs R 2>&1 >/dev/null) || refused=$?
kill -CONT $resumer
[[ $refused == 2 ]] || fail "a concurrent writer exited $refused, want 2: $LAST_ERR"
grep -q "locked by pid $resumer on host" <<<"$LAST_ERR" || fail "lock message: $LAST_ERR"
grep -q "$run" <<<"$LAST_ERR" || fail "lock message does not name the run: $LAST_ERR"
status=0; wait $resumer || status=$?
[[ $status == 0 ]] || fail "generate after the kill exited $status: $(cat resume.err)"
grep -Eq "[1-9][0-9]* replayed from disk" resume.out || fail "did not resume: $(cat resume.out)"
diff <(tree_digest full/$run) <(tree_digest R/$run) || fail "recovered run differs from the reference"
[[ ! -s R/$run/.lock ]] || fail "lock record not cleared on exit: $(cat R/$run/.lock)"

# Step 4: a lock file naming a live, unrelated process (this shell) but held by nobody.
mkdir -p P/$run
printf 'pid %s\nhost %s\n' $$ "$(hostname)" > P/$run/.lock
"${gen[@]}" --runs P >/dev/null || fail "a lock file held by nobody blocked generate (exit $?)"
diff <(tree_digest full/$run) <(tree_digest P/$run) || fail "run after a recycled-pid lock differs"

echo "ok: stale lock of a killed writer recovered ($saved steps kept), concurrent writer refused"
