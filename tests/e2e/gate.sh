#!/usr/bin/env bash
# e2e: the numerical gate on the tiny model. `gate` measures every block and the full call from
# a provider run's saved step (and from a call file), writes gate.json next to the model bound to
# the model identity, exit 0 when passed and 1 when not. A contract with require_gate: generate
# refuses to start without a gate, with a failed gate, with a gate of another candidate or of
# other weights, and starts with a passed one (recorded in the manifest) or with --skip-gate
# (recorded too); `slurm generate --submit` refuses what the job would refuse.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 8/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
sed -e 's/"require_gate": false/"require_gate": true/' c.json > gated.json
gen() { "$H3P_CLI" --progress none generate "$@"; }
model=R/models/tiny

# 1. The gate from a provider run's step 0, then from a call file (a saved step with inputs).
gen --contract c.json --seed 42 --runs R >/dev/null
out=$("$H3P_CLI" --progress none gate --contract c.json --runs R --run R/demo/provider/seed-42 \
      --json figures.json "${CPU_GATE_TOLERANCE[@]}") || fail "gate exited $?: $out"
echo "$out"
[[ -f $model/gate.json ]] || fail "no gate.json next to the model"
python3 - $model/gate.json R/demo/provider/seed-42/manifest.json <<'PY'
import json, sys
g = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
for k in ("weights_digest", "config_digest", "sources_digest"):
    assert g["identity"][k] == m["identity"][k], k
assert g["passed"] is True and g["candidate"] == "candidate"
assert [b["name"] for b in g["blocks"]] == ["blocks.0", "blocks.1"], g["blocks"]
assert [c["name"] for c in g["call"]] == ["call.sample", "call.audio_sample"]
for f in g["blocks"] + g["call"]:
    assert f["passed"] and f["dtype"] == "bf16"
    assert f["candidate_vs_provider"] <= f["tolerance"]
    assert f["candidate_vs_reference"] <= f["limit"] == g["multiplier"] * max(f["noise_floor"], g["noise_floor"]["floor_min"])
    assert 0 < f["noise_floor"] < 0.1, f   # bf16 against fp32: a real, small floor
assert "definition" in g["noise_floor"] and g["noise_floor"]["variants"] == ["provider"]
PY
"$H3P_CLI" --progress none gate --model $model --inputs R/demo/provider/seed-42/steps/003.safetensors \
  --out from-call.json --variant provider:attention=math "${CPU_GATE_TOLERANCE[@]}" >/dev/null ||
  fail "gate --inputs exited $?"
grep -q '"provider:attention=math"' from-call.json || fail "variant not recorded"
# The identical implementation has no error against the provider and the floor's own error.
"$H3P_CLI" --progress none gate --model $model --run R/demo/provider/seed-42 --step 5 \
  --candidate candidate:all=provider --out same.json >/dev/null || fail "gate of the provider itself"
python3 - same.json <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
for f in g["blocks"] + g["call"]:
    assert f["candidate_vs_provider"] == 0 and f["candidate_vs_reference"] == f["noise_floor"], f
PY

# A tolerance below the floor is named in the table's notes.
status=0
"$H3P_CLI" --progress none gate --contract c.json --runs R --run R/demo/provider/seed-42 \
  --tolerance bf16=1e-9 --out low.json > low.txt || status=$?
[[ $status == 1 ]] || fail "gate with a tolerance below the floor exited $status"
grep -q "^note: blocks.0: the floor (.*) is above the bf16 tolerance (1.000e-09)" low.txt ||
  fail "no note of the tolerance below the floor: $(cat low.txt)"

# 2. A gated contract.
mkdir -p G && cp -r R/models G/
rm G/models/tiny/gate.json
expect_exit 2 gen --contract gated.json --seed 42 --runs G
grep -q "requires the gate" <<<"$LAST_ERR" || fail "no-gate refusal: $LAST_ERR"
[[ ! -e G/demo ]] || fail "a refused generate wrote a run"
# A failing gate (tolerance no implementation meets): exit 1, and generation refuses it.
expect_exit 1 "$H3P_CLI" --progress none gate --contract gated.json --runs G \
  --run R/demo/provider/seed-42 --tolerance bf16=1e-9
grep -q '"passed": false' G/models/tiny/gate.json || fail "failed gate not recorded"
expect_exit 2 gen --contract gated.json --seed 42 --runs G
grep -q "the gate failed" <<<"$LAST_ERR" || fail "failed-gate refusal: $LAST_ERR"
# slurm refuses to submit it (the refusal comes before sbatch is ever run).
expect_exit 2 "$H3P_CLI" slurm generate --contract gated.json --runs G --submit
grep -q "refusing to submit" <<<"$LAST_ERR" || fail "slurm refusal: $LAST_ERR"
"$H3P_CLI" slurm generate --contract gated.json --runs G 2>warn.txt >/dev/null \
  || fail "rendering without --submit exited $?"
grep -q "would refuse" warn.txt || fail "no warning when rendering: $(cat warn.txt)"
# --skip-gate starts anyway and says so in the manifest.
gen --contract gated.json --seed 43 --runs G --skip-gate >/dev/null || fail "--skip-gate exited $?"
grep -q '"skipped": true' G/demo/provider/seed-43/manifest.json || fail "--skip-gate not recorded"
# A passed gate: generation starts and records the gate's digest.
"$H3P_CLI" --progress none gate --contract gated.json --runs G --run R/demo/provider/seed-42 \
  "${CPU_GATE_TOLERANCE[@]}" >/dev/null
gen --contract gated.json --seed 42 --runs G >/dev/null || fail "gated generate exited $?"
python3 - G/demo/provider/seed-42/manifest.json G/models/tiny/gate.json <<'PY'
import hashlib, json, sys
m = json.load(open(sys.argv[1]))
assert m["environment"]["gate"]["digest"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert m["environment"]["gate"]["passed"] is True
PY
# The candidate run needs a gate of that very candidate spec.
expect_exit 2 gen --contract gated.json --seed 42 --runs G --impl candidate:attention=provider
grep -q "field 'candidate'" <<<"$LAST_ERR" || fail "candidate mismatch: $LAST_ERR"
# A gate bound to other weights is refused, naming the field.
sed -e 's/"weights_digest": "[0-9a-f]*"/"weights_digest": "'"$(printf '0%.0s' $(seq 64))"'"/' \
  G/models/tiny/gate.json > other.json
expect_exit 2 gen --contract gated.json --seed 44 --runs G --gate other.json
grep -q "identity.weights_digest" <<<"$LAST_ERR" || fail "identity refusal: $LAST_ERR"
echo "ok: gate figures, gate.json bound to the model, generation and slurm refuse without a passed gate"
