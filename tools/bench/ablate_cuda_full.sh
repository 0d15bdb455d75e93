#!/usr/bin/env bash
# Evidence at the released widths on one GPU: a full-shape model of LAYERS blocks (random
# weights, init-model), 1344x768x124 with 32 kHz audio, STEPS sigma grid points; the provider
# and the candidate generate on CUDA from the same noise; then the step-0 ablation table (every
# group swapped back, interim, all, and the device's provider variants) and the teacher-forced
# drift of every step beside VARIANTS (comma-separated specs), each timed. Writes the tables
# (Markdown and JSON) and a timing log to OUT.
# usage: tools/bench/ablate_cuda_full.sh H3PARITY OUT [LAYERS] [STEPS] [VARIANTS]
#   e.g. tools/bench/ablate_cuda_full.sh build/gpu/app/cli/h3parity out 8 13
set -euo pipefail
cli=${1:?usage: ablate_cuda_full.sh H3PARITY OUT [LAYERS] [STEPS] [VARIANTS]}
out=${2:?output directory}
layers=${3:-8}
steps=${4:-13}
variants=${5:-provider:attention=flash,provider:attention=efficient}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${H3P_WORK:-$(mktemp -d)}
mkdir -p "$out" "$work"
log=$out/timing.log
timed() {  # timed LABEL COMMAND...: runs it, appends "LABEL: N ms" to the log
  local label=$1 start; shift
  start=$(date +%s%N)
  "$@"
  echo "$label: $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$log"
}
: > "$log"
timed "init-model full-shape, $layers layers" \
  "$cli" init-model --preset full-shape --layers "$layers" --out "$work/model" > /dev/null
sed -e "s|\"preset:tiny\"|\"$work/model\"|" -e 's/"width": [0-9]*/"width": 1344/' \
    -e 's/"height": [0-9]*/"height": 768/' -e "s/\"sampling_steps\": 50/\"sampling_steps\": $steps/" \
    -e 's/"seeds": \[42, 43, 44\]/"seeds": [42]/' -e 's/"name": "demo"/"name": "full"/' \
  "$root/resources/contracts/demo.json" > "$work/full.json"
for impl in provider candidate; do
  timed "generate $impl ($((steps - 1)) calls)" "$cli" --progress none generate \
    --contract "$work/full.json" --impl $impl --seed 42 --runs "$work/R" --device cuda
done
P=$work/R/full/provider/seed-42
C=$work/R/full/candidate/seed-42
timed "ablate --step 0 (every group, interim, all, device variants)" "$cli" --progress none \
  ablate --candidate "$C" --provider "$P" --step 0 --device cuda --json "$out/ablation-step0.json" \
  --markdown "$out/ablation-step0.md"
timed "ablate --all-steps (variants $variants)" "$cli" --progress none ablate --candidate "$C" \
  --provider "$P" --all-steps --device cuda --variants "$variants" --json "$out/drift.json" \
  --markdown "$out/drift.md"
du -sh "$work/model" "$P" | tee -a "$log"
