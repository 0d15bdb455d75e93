#!/usr/bin/env bash
# e2e (cuda): plugins on a GPU. The candidate's CUDA kernels as a plugin
# (plugin:h3p_cuda_candidate: gemm, attention, swiglu, residual; the rest from the provider)
# generate on CUDA at the released widths (one layer, small geometry) from the provider's
# noise, drifting from it by bf16 rounding only; resume-check passes; the step-0 ablation on
# CUDA swaps each of its groups back (all=provider bitwise the provider); bench times it
# beside the provider; the torch reference Python plugin on CUDA (DLPack, no copies) is
# bitwise the provider. H3P_PLUGIN_GEOMETRY=full runs 1344x768x124 instead. Skips without a GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
nvidia-smi -L >/dev/null 2>&1 || { echo "no CUDA device: skipped"; exit 77; }

frames=22 width=128 height=96 steps=5
if [[ ${H3P_PLUGIN_GEOMETRY:-} == full ]]; then frames=124 width=1344 height=768; fi
full_shape_contract plugcuda $frames $width $height $steps > c.json
spec=plugin:h3p_cuda_candidate:rest=provider
run=R/plugcuda/plugin@h3p_cuda_candidate@rest=provider/seed-7
for impl in provider "$spec"; do
  start=$(date +%s%N)
  "$H3P_CLI" --progress none generate --contract c.json --impl "$impl" --seed 7 --runs R \
    --device cuda || fail "generate --impl $impl --device cuda exited $?"
  echo "generate $impl: $(( ($(date +%s%N) - start) / 1000000 )) ms"
done
status=0
"$H3P_CLI" --progress none compare --candidate $run --provider R/plugcuda/provider/seed-7 \
  --json cmp.json > cmp.txt || status=$?
[[ $status == 0 || $status == 1 ]] || fail "compare exited $status: $(cat cmp.txt)"
python3 - cmp.json <<'PY'
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
for s in steps:
    print("step %d: video rel L2 %.3e, audio rel L2 %.3e" % (s["step"], s["video_rel_l2"], s["audio_rel_l2"]))
assert all(s["video_rel_l2"] < 5e-2 and s["audio_rel_l2"] < 5e-2 for s in steps), steps
assert any(s["video_rel_l2"] > 0 for s in steps), "the CUDA plugin is bitwise the provider"
PY

"$H3P_CLI" --progress none ablate --candidate $run --provider R/plugcuda/provider/seed-7 --step 0 \
  --device cuda --json abl.json || fail "ablate --device cuda exited $?"
python3 - abl.json <<'PY'
import json, sys
rows = {r["impl_spec"]: r for r in json.load(open(sys.argv[1]))["rows"]}
assert rows["provider"]["video"]["bitwise_equal"], rows["provider"]
assert rows["plugin:h3p_cuda_candidate:rest=provider,all=provider"]["video"]["bitwise_equal"]
for g in ("gemm", "attention", "swiglu", "residual"):
    assert "plugin:h3p_cuda_candidate:rest=provider,%s=provider" % g in rows, list(rows)
PY

if [[ ${H3P_PLUGIN_GEOMETRY:-} != full ]]; then
  "$H3P_CLI" --progress none resume-check --contract c.json --impl "$spec" --device cuda \
    --seed-index 0 --runs RC --preempt-every 2 > check.txt 2>log ||
    fail "resume-check of the CUDA plugin exited $?: $(cat check.txt log)"
fi
"$H3P_CLI" bench --model R/models/full-shape --device cuda --impl provider --impl "$spec" \
  --impl provider --impl "$spec" --repeats 5

# The torch reference plugin on CUDA: the same ATen ops on the device, bitwise the provider.
py=$H3P_SOURCE_DIR/kernels/plugins/python_torch/torch_plugin.py
if "$H3P_CLI" plugin-contract --impl "python:$py" >/dev/null 2>probe.txt; then
  "$H3P_CLI" --progress none generate --contract c.json --impl "python:$py" --seed 7 --runs R \
    --device cuda || fail "the Python plugin on CUDA exited $?"
  cmp R/plugcuda/provider/seed-7/latents.safetensors R/plugcuda/python@torch_plugin.py/seed-7/latents.safetensors ||
    fail "the torch reference plugin on CUDA differs from the provider"
  "$H3P_CLI" bench --model R/models/full-shape --device cuda --impl provider --impl "python:$py" --repeats 5
else
  echo "python plugin not built: $(cat probe.txt)"
fi
echo "CUDA plugins: all checks passed"
