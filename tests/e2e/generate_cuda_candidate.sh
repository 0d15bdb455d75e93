#!/usr/bin/env bash
# e2e (cuda): the candidate generates on a GPU through the fused CUDA blocks. A one-layer model
# at the released widths (preset full-shape) over a small geometry: provider and candidate from
# the same noise on CUDA; the candidate's manifest names the fused call; its per-step velocities
# differ from the provider's (another implementation ran) by no more than bf16 rounding; its
# resume-check passes (preempted and resumed runs byte-identical); `call` replays a saved step
# bit for bit; `bench` times provider and candidate calls in one run; the gate qualifies the
# fused candidate on CUDA for a gated contract; resuming the CUDA run on CPU, a CUDA gate for a
# CPU candidate are refused with exit 2; a per-group swap inside the blocks runs the candidate's
# CUDA kernels group by group. Skips without a GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
nvidia-smi -L >/dev/null 2>&1 || { echo "no CUDA device: skipped"; exit 77; }

sed -e 's/"preset:tiny"/"preset:full-shape"/' -e 's/"frames": 124/"frames": 22/' \
    -e 's/"sampling_steps": 50/"sampling_steps": 7/' -e 's/"seeds": \[42, 43, 44\]/"seeds": [7]/' \
    -e 's/"name": "demo"/"name": "fused"/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
for impl in provider candidate; do
  "$H3P_CLI" --progress none generate --contract c.json --impl $impl --seed 7 --runs R \
    --device cuda || fail "generate --impl $impl --device cuda exited $?"
done
python3 - R/fused/candidate/seed-7/manifest.json R/fused/provider/seed-7/manifest.json <<'PY'
import json, sys
cand, prov = (json.load(open(f))["environment"] for f in sys.argv[1:])
assert "fused CUDA blocks" in cand.get("fused_call", ""), cand
assert "fused_call" not in prov, prov
print("fused call:", cand["fused_call"])
PY

status=0
"$H3P_CLI" --progress none compare --candidate R/fused/candidate/seed-7 \
  --provider R/fused/provider/seed-7 --json cmp.json > cmp.txt || status=$?
[[ $status == 0 || $status == 1 ]] || fail "compare exited $status: $(cat cmp.txt)"
python3 - cmp.json <<'PY'
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
assert len(steps) == 6, len(steps)
for s in steps:
    print("step %d: video rel L2 %.3e, audio rel L2 %.3e" % (s["step"], s["video_rel_l2"], s["audio_rel_l2"]))
# bf16 blocks at the provider's rounding points: drift of a few 1e-3 per call, far below 5e-2.
assert all(s["video_rel_l2"] < 5e-2 and s["audio_rel_l2"] < 5e-2 for s in steps), steps
assert any(s["video_rel_l2"] > 0 for s in steps), "candidate bitwise equal to the provider"
PY

"$H3P_CLI" --progress none resume-check --contract c.json --impl candidate --device cuda \
  --seed-index 0 --runs R --preempt-every 2 --json check.json > check.txt 2>log ||
  fail "resume-check on CUDA exited $?: $(cat check.txt log)"
python3 -c "import json; r = json.load(open('check.json')); assert r['passed'], r"
tail -7 check.txt

step=$(ls R/fused/candidate/seed-7/steps/*.safetensors | sed -n 3p)
"$H3P_CLI" call --model R/models/full-shape --inputs "$step" --impl candidate --device cuda \
  --out replay.safetensors --require-bitwise || fail "call replay of $step exited $?"
expect_exit 2 "$H3P_CLI" call --model R/models/full-shape --inputs "$step" --impl candidate \
  --device cuda --out traced.safetensors --trace trace.safetensors
grep -q "no per-stage trace" <<<"$LAST_ERR" || fail "unclear trace refusal: $LAST_ERR"

"$H3P_CLI" bench --model R/models/full-shape --device cuda --impl provider --impl candidate \
  --repeats 3 --json bench.json
python3 -c "import json; r = json.load(open('bench.json'))['rows']; assert 'fused_call' in r[1] and 'fused_call' not in r[0], r"

# The gate of the candidate on CUDA (its blocks and call through the fused blocks, from the
# provider run's step 0), and a gated contract generating under it; the CUDA gate does not
# qualify the candidate on CPU.
sed -e 's/"require_gate": false/"require_gate": true/' -e 's/"name": "fused"/"name": "gated"/' \
  c.json > gated.json
"$H3P_CLI" --progress none gate --contract gated.json --runs R --run R/fused/provider/seed-7 \
  --device cuda > gate.txt || fail "gate on CUDA exited $?: $(cat gate.txt)"
cat gate.txt
python3 - R/models/full-shape/gate.json <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
assert g["passed"] and g["device"] == "cuda" and "fused CUDA blocks" in g["fused_call"], g["fused_call"]
PY
"$H3P_CLI" --progress none generate --contract gated.json --impl candidate --seed 7 --runs R \
  --device cuda || fail "gated generation on CUDA exited $?"
expect_exit 2 "$H3P_CLI" --progress none generate --contract gated.json --impl candidate \
  --seed 7 --runs R --device cpu
grep -q "field 'device'" <<<"$LAST_ERR" || fail "CUDA gate accepted for CPU: $LAST_ERR"

# The finished CUDA run is not continued on another kind of device.
expect_exit 2 "$H3P_CLI" --progress none generate --contract c.json --impl candidate --seed 7 \
  --runs R --device cpu
grep -q "environment.device" <<<"$LAST_ERR" || fail "device change not named: $LAST_ERR"

# A per-group swap runs the candidate's CUDA kernels group by group (no fused call recorded).
"$H3P_CLI" --progress none generate --contract c.json --seed 7 --runs R --device cuda \
  --impl candidate:attention=provider || fail "per-group candidate on CUDA exited $?"
python3 - R/fused/candidate@attention=provider/seed-7/manifest.json <<'PY'
import json, sys
env = json.load(open(sys.argv[1]))["environment"]
assert "fused_call" not in env, env
assert "kernels/cuda per group" in json.dumps(env), env
PY
echo "generate_cuda_candidate: passed"
