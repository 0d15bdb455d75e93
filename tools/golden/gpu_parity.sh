#!/usr/bin/env bash
# Provider parity on a GPU node with the same torch build as diffusers: builds h3parity headless
# against the node's LibTorch, replays the golden call files on CPU and CUDA, and traces each
# call stage by stage through both h3parity and diffusers to name the first stage that differs.
# usage: PYTHONPATH=<abs diffusers>/src tools/golden/gpu_parity.sh OUT_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: gpu_parity.sh OUT_DIR}
mkdir -p "$out"
golden=$root/tests/data/golden
cli=$root/build/gpu/app/cli/h3parity

"$root/scripts/gpu-node-build.sh" "$root/build/gpu" > "$out/build.log" 2>&1 \
  || { tail -50 "$out/build.log"; exit 2; }
echo "build ok"
python3 -c 'import torch; print("torch", torch.__version__, "threads", torch.get_num_threads())'

for model_call in tiny-fp32:fp32-A-step0 tiny-mixed:mixed-A-step0 tiny-mixed:mixed-B-step30; do
  model=${model_call%%:*}
  call=${model_call#*:}
  for device in cpu cuda; do
    ref=$golden/calls/$call.safetensors
    [[ $device == cuda && -f $golden/calls/$call-cuda.safetensors ]] && ref=$golden/calls/$call-cuda.safetensors
    echo "=== $call on $device: h3parity vs the diffusers call file $(basename "$ref")"
    "$cli" call --model "$golden/$model" --inputs "$ref" --device $device \
      --out "$out/$call-$device.safetensors" --trace "$out/$call-$device.h3p-trace.safetensors"
    python3 "$root/tools/golden/trace_diffusers.py" --model "$golden/$model" --call "$ref" \
      --device $device --out "$out/$call-$device.diffusers-trace.safetensors" >/dev/null
    python3 "$root/tools/golden/compare_traces.py" "$out/$call-$device.h3p-trace.safetensors" \
      "$out/$call-$device.diffusers-trace.safetensors" --label "$call on $device: h3parity vs diffusers"
  done
done
