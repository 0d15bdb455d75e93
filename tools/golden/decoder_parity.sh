#!/usr/bin/env bash
# Released-size decoder parity on a GPU node: init-model writes the released video and audio VAE
# configs with seeded weight files, diffusers decodes normalised latents through its own decode
# steps (tools/golden/decoder_parity.py), and `h3parity decode` decodes the same latents and
# compares (bitwise column; exit 1 when they differ). The default geometry, 12x20x24 latents
# (39 frames of 320x384), crosses two 5+2-frame chunks with their crossfade and 2x2 blended
# 256 px tiles; 207 audio latents are the full-size clip's. Times and peak GPU memory of both.
# usage: PYTHONPATH=<abs diffusers>/src tools/golden/decoder_parity.sh H3PARITY OUT_DIR \
#          [LATENT_SHAPE] [AUDIO_LATENTS]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${1:?usage: decoder_parity.sh H3PARITY OUT_DIR [LATENT_SHAPE] [AUDIO_LATENTS]}
out=${2:?output directory}
shape=${3:-12x20x24}
audio=${4:-207}
work=${H3P_WORK:-$(mktemp -d)}
mkdir -p "$out" "$work"
log=$out/decoder-parity.log
: > "$log"
start=$(date +%s%N)
"$cli" --progress none init-model --preset tiny --decoders released --out "$work/model" \
  | tee -a "$log" || exit 2
echo "init-model (released decoders, weight files): $(( ($(date +%s%N) - start) / 1000000 )) ms" \
  | tee -a "$log"
du -sh "$work/model/vae" "$work/model/audio_vae" | tee -a "$log"
python3 "$root/tools/golden/decoder_parity.py" --model "$work/model" --latent-shape "$shape" \
  --audio-latents "$audio" --device cuda --out "$work/reference.safetensors" \
  > "$out/diffusers-decode.json" || { echo "diffusers decode failed"; exit 2; }
echo "diffusers:" | tee -a "$log"
tee -a "$log" < "$out/diffusers-decode.json"
status=0
"$cli" --progress none decode --model "$work/model" --latents "$work/reference.safetensors" \
  --out "$work/h3parity.safetensors" --device cuda --max-rel-l2 0 2>&1 | tee -a "$log" \
  || status=$?
echo "h3parity decode exit $status (0: within --max-rel-l2 0, i.e. equal)" | tee -a "$log"
exit $status
