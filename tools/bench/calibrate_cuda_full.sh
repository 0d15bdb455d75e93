#!/usr/bin/env bash
# Evidence at the released widths on one GPU, in the order a qualification should take:
# a full-shape model of LAYERS blocks (random weights), 1344x768x124 with 32 kHz audio, STEPS
# grid points; `calibrate` measures the provider's variants (VARIANTS, comma-separated) against
# the provider on calibration seed 100 and writes a contract whose bounds follow the stated rule;
# then, under that contract, the provider, the candidate and the variants generate seed 42 and
# `compare` puts the candidate beside the variants' range (the noise floor); `report` last.
# Writes the calibrated contract, the tables and a timing log to OUT.
# usage: tools/bench/calibrate_cuda_full.sh H3PARITY OUT [LAYERS] [STEPS] [VARIANTS]
set -euo pipefail
cli=${1:?usage: calibrate_cuda_full.sh H3PARITY OUT [LAYERS] [STEPS] [VARIANTS]}
out=${2:?output directory}
layers=${3:-4}
steps=${4:-5}
variants=${5:-provider:attention=flash,provider:attention=efficient}
source "$(dirname "$0")/full_size_lib.sh"
full_size_setup "$cli" "$out" "$layers" "$steps"
variant_args=()
IFS=, read -ra specs <<<"$variants"
for v in "${specs[@]}"; do variant_args+=(--variant "$v"); done
timed "calibrate (seed 100: provider and ${#specs[@]} variants)" "$cli" --progress none calibrate \
  --contract "$work/full.json" --runs "$work/R" --out "$out/full-calibrated.json" \
  --calibration-seeds 100 --device cuda "${variant_args[@]}" --json "$out/calibration.json" \
  | tee "$out/calibrate.txt"
for impl in provider candidate "${specs[@]}"; do
  timed "generate $impl under the calibrated contract" "$cli" --progress none generate \
    --contract "$out/full-calibrated.json" --impl "$impl" --seed 42 --runs "$work/R" --device cuda
done
status=0
timed "compare candidate vs provider, with the noise floor" "$cli" --progress none compare \
  --candidate "$work/R/full-calibrated/candidate/seed-42" \
  --provider "$work/R/full-calibrated/provider/seed-42" --json "$out/compare.json" \
  --markdown "$out/compare.md" || status=$?
echo "compare exit $status (1: a bound failed)" | tee -a "$log"
du -sh "$work/model" | tee -a "$log"
