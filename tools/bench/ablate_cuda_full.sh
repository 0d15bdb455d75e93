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
source "$(dirname "$0")/full_size_lib.sh"
full_size_setup "$cli" "$out" "$layers" "$steps"
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
