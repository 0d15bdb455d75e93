#!/usr/bin/env bash
# The whole qualification at the real size on one GPU: the released architecture with LAYERS
# blocks (default 50) drawn from a seed on the device (no checkpoint on disk) and the released
# decoders, 1344x768x124 with 32 kHz audio, GRID sigma grid points (default 12), seed 42; the
# provider, the candidate and two provider variants (VARIANTS) generate with --timings, then
# `compare` puts the candidate beside the variants' range and `report` writes the tables. First,
# identity hashing and loading are measured on weight files (a two-block model, 4.1 GB) to
# project them to the 62 GB checkpoint. rehearsal_summary.py turns the timings into a table with
# projections to 50 grid points (OUT/rehearsal.md, OUT/rehearsal.json).
# Every stage is resumable: generate continues a run where it stopped, so a stage cut short by a
# time limit is finished by running the script again with the same H3P_WORK.
# usage: tools/bench/rehearsal_full.sh H3PARITY OUT [STAGE...]
#   stages: hashing provider candidate variants compare (default: all, in that order)
#   env: LAYERS (50), GRID (12), WEIGHT_SEED (7), VARIANTS (comma-separated specs,
#        provider:attention=flash,provider:attention=efficient), DECODERS (released), DEVICE
#        (cuda), WIDTH, HEIGHT, FRAMES (1344, 768, 124), H3P_WORK (state, kept)
set -euo pipefail
cli=${1:?usage: rehearsal_full.sh H3PARITY OUT [STAGE...]}
out=${2:?output directory}
shift 2
stages=("$@")
(( ${#stages[@]} )) || stages=(hashing provider candidate variants compare)
layers=${LAYERS:-50}
grid=${GRID:-12}
weight_seed=${WEIGHT_SEED:-7}
decoders=${DECODERS:-released}
device=${DEVICE:-cuda}
width=${WIDTH:-1344}
height=${HEIGHT:-768}
frames=${FRAMES:-124}
variants=${VARIANTS:-provider:attention=flash,provider:attention=efficient}
IFS=, read -ra variant_specs <<<"$variants"
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tools/bench/full_size_lib.sh"
work=${H3P_WORK:-$(mktemp -d)}
mkdir -p "$out" "$work"
log=$out/timing.log
contract=$work/rehearsal.json
model="seeded:full-shape?layers=$layers&seed=$weight_seed&decoders=$decoders"
sed -e "s|\"preset:tiny\"|\"${model//&/\\&}\"|" -e "s/\"width\": [0-9]*/\"width\": $width/" \
    -e "s/\"height\": [0-9]*/\"height\": $height/" -e "s/\"frames\": 124/\"frames\": $frames/" -e "s/\"sampling_steps\": 50/\"sampling_steps\": $grid/" \
    -e 's/"seeds": \[42, 43, 44\]/"seeds": [42]/' -e 's/"name": "demo"/"name": "rehearsal"/' \
  "$root/resources/contracts/demo.json" > "$contract"
R=$work/R

generate() {  # generate SPEC: one run with its timings in OUT/timings-<n>.json
  local spec=$1 name
  name=$(tr ':=,' '---' <<<"$spec")
  timed "generate $spec" "$cli" --progress none generate --contract "$contract" --impl "$spec" \
    --seed 42 --runs "$R" --device "$device" --timings "$out/timings-$name.json"
}

for stage in "${stages[@]}"; do
  case $stage in
    hashing)
      # Weight files of two released-width blocks: hashing and load rates for the projection.
      timed "init-model full-shape, 2 blocks, weight files" "$cli" --progress none init-model \
        --preset full-shape --layers 2 --decoders none --out "$work/files2" > /dev/null
      du -sb "$work/files2/transformer" | cut -f1 > "$out/files2-bytes.txt"
      sed -e "s|\"$model\"|\"$work/files2\"|" -e "s/\"sampling_steps\": $grid/\"sampling_steps\": 2/" \
          -e 's/"name": "rehearsal"/"name": "hashing"/' "$contract" > "$work/hashing.json"
      timed "generate provider, 2 blocks from weight files, 1 call" "$cli" --progress none \
        generate --contract "$work/hashing.json" --impl provider --seed 42 --runs "$work/H" \
        --device "$device" --timings "$out/timings-files2.json" > /dev/null
      rm -rf "$work/files2" "$work/H" ;;
    provider|candidate) generate "$stage" ;;
    variants) for v in "${variant_specs[@]}"; do generate "$v"; done ;;
    compare)
      status=0  # compare finds the variant runs beside the provider run
      timed "compare candidate vs provider, with the variants' range" "$cli" --progress none \
        compare --candidate "$R/rehearsal/candidate/seed-42" \
        --provider "$R/rehearsal/provider/seed-42" --json "$out/compare.json" --markdown "$out/compare.md" || status=$?
      echo "compare exit $status (1: a bound failed)" | tee -a "$log"
      timed "report" "$cli" --progress none report "$R" --out "$out/report" > /dev/null \
        || echo "report exit $?" | tee -a "$log"
      python3 "$root/tools/bench/rehearsal_summary.py" "$out" "$layers" "$grid" ;;
    *) echo "unknown stage '$stage'" >&2; exit 2 ;;
  esac
done
