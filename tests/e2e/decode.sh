#!/usr/bin/env bash
# e2e: `h3parity decode` turns latents into media: the diffusers golden decodes of the tiny
# VAEs are met within 1e-5 relative L2 (video with the default and with small tiles, stereo
# audio); untiled decoding misses them (exit 1); init-model's decoders decode the same latents
# to the promised shapes; missing decoders, a corrupt file and a missing device are bad input.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
g=$H3P_SOURCE_DIR/tests/data/golden/decoders

for case in video-chunks video-wide audio; do
  "$H3P_CLI" decode --model $g/tiny --latents $g/$case.safetensors --out $case.out.safetensors \
    --max-rel-l2 1e-5 > $case.log || fail "$case exited $?: $(cat $case.log)"
done
"$H3P_CLI" decode --model $g/tiny --latents $g/video-tiles.safetensors --tile 32 --tile-overlap 16 \
  --out tiles.out.safetensors --max-rel-l2 1e-5 > tiles.log || fail "video-tiles: $(cat tiles.log)"
grep -q "video \[1, 3, 39, 16, 32\]" video-chunks.log || fail "video shape: $(cat video-chunks.log)"
grep -q "audio \[1, 2, 29600\] at 32000 Hz" audio.log || fail "audio shape: $(cat audio.log)"
# Without the tiles the released recipe uses, the frames differ: the bound fails (exit 1).
expect_exit 1 "$H3P_CLI" decode --model $g/tiny --latents $g/video-wide.safetensors --no-tiling \
  --out untiled.safetensors --max-rel-l2 1e-5

# init-model writes decoders next to the transformer; they decode the golden latents.
"$H3P_CLI" --progress none init-model --preset tiny --out model > /dev/null
[[ -f model/vae/config.json && -f model/audio_vae/diffusion_pytorch_model.safetensors ]] ||
  fail "init-model wrote no decoders"
"$H3P_CLI" decode --model model --latents $g/video-chunks.safetensors --out own.safetensors \
  > own.log || fail "decode with init-model's decoders: $(cat own.log)"
grep -q "video \[1, 3, 39, 16, 32\]" own.log || fail "own video shape: $(cat own.log)"
"$H3P_CLI" decode --model model --latents $g/audio.safetensors --out own-audio.safetensors \
  > own-audio.log || fail "own audio: $(cat own-audio.log)"
grep -q "audio \[1, 2, 29600\]" own-audio.log || fail "own audio shape: $(cat own-audio.log)"

# An output file holds no latents; a model without vae/ cannot decode video.
expect_exit 2 "$H3P_CLI" decode --model model --latents own.safetensors --out x.safetensors
grep -q "neither 'latents' nor 'audio_latents'" <<<"$LAST_ERR" || fail "message: $LAST_ERR"
rm -rf model/vae
expect_exit 2 "$H3P_CLI" decode --model model --latents $g/video-chunks.safetensors --out y.safetensors
grep -q "vae" <<<"$LAST_ERR" || fail "message does not name the vae: $LAST_ERR"
head -c 1000 $g/audio.safetensors > truncated.safetensors
expect_exit 2 "$H3P_CLI" decode --model $g/tiny --latents truncated.safetensors --out z.safetensors
grep -q truncated.safetensors <<<"$LAST_ERR" || fail "message does not name the file: $LAST_ERR"
expect_exit 2 "$H3P_CLI" decode --model $g/tiny --latents $g/audio.safetensors --out w.safetensors \
  --device cuda:7
echo "ok: decoders match the diffusers golden outputs; init-model's decoders decode"
