#!/usr/bin/env bash
# e2e: generate's options: --seed-index picks the contract's seed, --save-inputs first|none keep
# outputs only (and still resume bit-exactly after SIGKILL), --verify-last-step recomputes the
# last saved call and requires a bitwise match, a second writer on the same run is refused while
# the first holds the lock, and bad arguments are exit 2.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 12/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
gen() { "$H3P_CLI" --progress none generate --contract c.json --impl provider "$@"; }

# --seed-index 1 is seed 43.
gen --seed-index 1 --runs A >/dev/null || fail "seed-index generate exited $?"
[[ -f A/demo/provider/seed-43/latents.safetensors ]] || fail "--seed-index 1 did not run seed 43"
expect_exit 2 gen --seed-index 3 --runs A
expect_exit 2 gen --seed 7 --runs A
grep -q "not among the seeds" <<<"$LAST_ERR" || fail "unexpected message: $LAST_ERR"
expect_exit 2 gen --seed 42 --runs A --save-inputs some
expect_exit 2 gen --seed 42 --runs A --impl provider:attention=fastest

# --save-inputs: inputs kept in the first call only / in none; resume after a kill is exact.
for policy in first none; do
  gen --seed 42 --runs full-$policy --save-inputs $policy >/dev/null
  has_inputs=$(python3 - full-$policy/demo/provider/seed-42/steps <<'PY'
import json, struct, sys, os
d = sys.argv[1]
out = []
for name in sorted(os.listdir(d)):
    if name.endswith(".safetensors"):
        with open(os.path.join(d, name), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            out.append("1" if "hidden_states" in json.loads(f.read(n)) else "0")
print("".join(out))
PY
)
  case $policy in
    first) [[ $has_inputs == 1${has_inputs:1} && ${has_inputs:1} == $(printf '0%.0s' $(seq 1 10)) ]] ;;
    none) [[ $has_inputs == $(printf '0%.0s' $(seq 1 11)) ]] ;;
  esac || fail "--save-inputs $policy kept inputs in calls: $has_inputs"
  # Started directly (not through gen) so that $! is h3parity itself.
  "$H3P_CLI" --progress none generate --contract c.json --impl provider --seed 42 \
    --runs part-$policy --save-inputs $policy >/dev/null &
  pid=$!
  until [[ -f part-$policy/demo/provider/seed-42/steps/004.json ]] || ! kill -0 $pid 2>/dev/null; do sleep 0.002; done
  kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
  gen --seed 42 --runs part-$policy --save-inputs $policy >/dev/null
  diff <(tree_digest full-$policy/demo/provider/seed-42) <(tree_digest part-$policy/demo/provider/seed-42) \
    || fail "--save-inputs $policy: resumed run differs"
  # The policy is part of what the run is bound to.
  expect_exit 2 gen --seed 42 --runs full-$policy --save-inputs every
done

# --verify-last-step on a finished run and on a partial one.
out=$(gen --seed 42 --runs full-first --save-inputs first --verify-last-step) || fail "verify exited $?"
grep -q "last saved step verified bitwise" <<<"$out" || fail "verify did not run: $out"

# The lock: a second writer is refused while the first runs.
sed -e 's/"sampling_steps": 12/"sampling_steps": 400/' c.json > long.json
"$H3P_CLI" --progress none generate --contract long.json --seed 44 --runs L >/dev/null 2>&1 &
pid=$!
until [[ -f L/demo/provider/seed-44/steps/001.json ]]; do sleep 0.01; done
expect_exit 2 "$H3P_CLI" generate --contract long.json --seed 44 --runs L
grep -q "locked by pid $pid" <<<"$LAST_ERR" || fail "lock message: $LAST_ERR"
# SIGTERM stops it at a safe point with exit 3; the run then resumes.
kill -TERM $pid
status=0; wait $pid || status=$?
[[ $status == 3 ]] || fail "SIGTERM exit $status, want 3"
n=$(ls L/demo/provider/seed-44/steps/*.json | wc -l)
[[ $n == $(ls L/demo/provider/seed-44/steps/*.safetensors | wc -l) ]] || fail "half-written step after SIGTERM"
echo "stopped by SIGTERM after $n steps"
# A contract with a conditioning file (as a provider pipeline writes it) instead of a prompt.
python3 - c.json "$H3P_SOURCE_DIR/tests/data/golden/conditioning/demo-conditioning.safetensors" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
del c["prompt"]; del c["text_tokens"]
c["conditioning_file"] = sys.argv[2]
json.dump(c, open("cond.json", "w"))
PY
"$H3P_CLI" --progress none generate --contract cond.json --seed 42 --runs K >/dev/null \
  || fail "generate with a conditioning file exited $?"
[[ -f K/demo/provider/seed-42/latents.safetensors ]] || fail "conditioning-file run has no latents"

echo "ok: seed-index, save-inputs, verify-last-step, lock and SIGTERM behave"
