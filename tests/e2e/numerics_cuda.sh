#!/usr/bin/env bash
# e2e (cuda): the numerics environment of a GPU run. A provider run of the demo contract on
# CUDA records the GPU fields (name and compute capability as nvidia-smi reports them, SM count,
# memory, driver, CUDA runtime, cuBLAS, cuBLASLt, cuDNN) and the SDPA backend LibTorch selects
# for the run's attention shape; a named backend is recorded as selected; a resume in the same
# environment checks nothing; a resume under a changed cuBLAS setting spot-checks two steps and
# records the outcome as segment 1. Skips without a GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
nvidia-smi -L >/dev/null 2>&1 || { echo "no CUDA device: skipped"; exit 77; }

sed -e 's/"sampling_steps": 50/"sampling_steps": 8/' -e 's/"name": "demo"/"name": "numcuda"/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
gen() { "$H3P_CLI" --progress none generate --contract c.json --seed 42 --device cuda "$@"; }

out=$(gen --runs R) || fail "generate --device cuda exited $?"
run=R/numcuda/provider/seed-42
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0)
gpu_cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null || echo "")
/usr/bin/env python3 - "$run/manifest.json" "$gpu_name" "$gpu_cc" <<'PY' || fail "GPU fields"
import json, re, sys
n = json.load(open(sys.argv[1]))["environment"]["numerics"]
assert n["device"] == "cuda", n["device"]
c = n["cuda"]
print("numerics.cuda:", json.dumps(c))
print("numerics.attention:", json.dumps(n["attention"]))
assert c["name"] == sys.argv[2].strip(), (c["name"], sys.argv[2])
if sys.argv[3].strip():
    assert c["compute_capability"] == sys.argv[3].strip(), (c["compute_capability"], sys.argv[3])
assert re.fullmatch(r"\d+\.\d+", c["compute_capability"]), c
assert c["sm_count"] > 0 and c["memory_bytes"] > 0, c
for key in ("driver", "runtime", "cublas", "cublaslt"):
    assert c[key] not in ("", "unknown"), (key, c[key])
assert re.fullmatch(r"\d+\.\d+", c["driver"]) and re.fullmatch(r"\d+\.\d+", c["runtime"]), c
assert re.fullmatch(r"\d+\.\d+\.\d+", c["cublas"]), c["cublas"]
assert c["cudnn"] != "", c
assert c["bf16_reduced_precision_reduction"].startswith(("allowed", "disallowed")), c
a = n["attention"]
assert a["requested"] == "default" and a["selected"] in ("flash", "efficient", "cudnn", "math"), a
PY

# The default backend recorded is the one whose kernels run for the provider's layout (the demo
# model: 2 heads of 32; the choice depends on the strides, head size and dtype, not the length),
# checked against torch's profiler where Python has a CUDA torch.
if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  python3 "$H3P_SOURCE_DIR/tools/golden/sdpa_probe_check.py" --heads 2 --head-dim 32 \
    --sequence 4096 "$run/manifest.json" || fail "the recorded SDPA backend is not the one that ran"
else
  echo "no CUDA torch in Python: the recorded backend is not profiled"
fi

# A backend named in the spec is the one recorded.
gen --runs R --impl provider:attention=math >/dev/null || fail "provider:attention=math exited $?"
grep -q '"selected": "math"' "R/numcuda/provider@attention=math/seed-42/manifest.json" ||
  fail "provider:attention=math not recorded as selected"

# Same environment: nothing to check.
out=$(gen --runs R) || fail "replay exited $?"
grep -q "0 computed" <<<"$out" || fail "replay recomputed: $out"
! grep -q "^numerics: segment" <<<"$out" || fail "an unchanged environment made a segment: $out"

# A changed cuBLAS setting: two steps recomputed; the outcome is recorded as segment 1.
cp -r R cut
for i in 4 5 6 7; do rm -f cut/numcuda/provider/seed-42/steps/00$i.*; done
rm -rf cut/numcuda/provider/seed-42/latents.safetensors cut/numcuda/provider/seed-42/decoded
out=$(CUBLAS_WORKSPACE_CONFIG=:4096:8 gen --runs cut --accept-new-numerics) ||
  fail "resume under a changed cuBLAS setting exited $?"
echo "$out" | grep -v '^numerics environment'
grep -qE "segment 1 \((verified|accepted)\)" <<<"$out" || fail "no segment recorded: $out"
grep -q '"CUBLAS_WORKSPACE_CONFIG": ":4096:8"' cut/numcuda/provider/seed-42/segments.json ||
  fail "segments.json lacks the changed variable"
echo "numerics cuda: GPU fields recorded ($gpu_name), backend recorded, resume checked"
