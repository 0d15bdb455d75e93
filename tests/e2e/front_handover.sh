#!/usr/bin/env bash
# e2e: the h3parity front runs `compare` of decoded clips itself, loading neither LibTorch nor
# FFmpeg, and of video files through h3parity-video.so (FFmpeg, still no LibTorch); it hands
# every other command to h3parity-engine (LibTorch loaded there), as well as compare with --yuv
# libswscale, and without the engine beside it says so with exit 2. (compare of runs, handed
# over, is checked in compare.sh.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

python3 "$H3P_SOURCE_DIR/tools/bench/make_decoded_pair.py" pair --frames 6 --width 64 \
  --height 48 --samples 4000

# 1. compare of clips: the shared objects the dynamic loader initialises hold no LibTorch.
LD_DEBUG=libs "$H3P_CLI" --progress none compare --candidate pair/candidate \
  --provider pair/provider --json cmp.json > cmp.txt 2> loader.log || fail "compare exited $?"
grep -q "calling init:" loader.log || fail "LD_DEBUG printed nothing; cannot check the loader"
if grep -E "calling init: .*lib(torch|c10|avcodec|avformat)" loader.log; then
  fail "the front loaded LibTorch or FFmpeg for a compare of clips"
fi
python3 -c "import json; r = json.load(open('cmp.json')); assert len(r['frames']) == 6, r"

# 2. Any other command is handed over: the engine (with LibTorch) answers it.
LD_DEBUG=libs "$H3P_CLI" schedule --help > schedule.txt 2> loader.log \
  || fail "schedule --help exited $?"
grep -qE "calling init: .*libtorch" loader.log || fail "schedule was not handed to the engine"
grep -q "schedule" schedule.txt || fail "schedule --help printed no help"

# 3. compare through libswscale needs FFmpeg: handed over, when this build has media.
if LD_DEBUG=libs "$H3P_CLI" --progress none compare --candidate pair/candidate \
    --provider pair/provider --yuv libswscale --json lib.json > lib.txt 2> loader.log; then
  grep -qE "calling init: .*libtorch" loader.log || fail "--yuv libswscale was not handed over"
  python3 -c "import json; r = json.load(open('lib.json')); assert len(r['frames']) == 6, r"
else
  grep -q "no FFmpeg" loader.log || fail "compare --yuv libswscale failed: $(tail -3 loader.log)"
fi

# 4. compare of video files, when this build has media: decoded in the front through its
# module, with the same figures as the engine's (which links FFmpeg) and as the decoded clips'
# own 8-bit frames (FFV1 is lossless).
if "$H3P_CLI" --progress none export pair/candidate --mkv c.mkv --no-mp4 > /dev/null 2> exp.err; then
  "$H3P_CLI" --progress none export pair/provider --mkv p.mkv --no-mp4 > /dev/null
  LD_DEBUG=libs "$H3P_CLI" --progress none compare --candidate c.mkv --provider p.mkv \
    --json mkv.json > mkv.txt 2> loader.log || fail "compare of MKV files exited $?"
  grep -qE "calling init: .*libavcodec" loader.log || fail "the front decoded no video file itself"
  if grep -E "calling init: .*libtorch" loader.log; then
    fail "compare of video files was handed to the engine (LibTorch loaded)"
  fi
  "$(dirname "$H3P_CLI")/h3parity-engine" --progress none compare --candidate c.mkv --provider p.mkv --json engine.json \
    > /dev/null || fail "the engine's compare of MKV files exited $?"
  mkdir -p rgb/candidate rgb/provider
  for side in candidate provider; do  # the 8-bit frames only, no fp planes
    cp pair/$side/frames.rgb pair/$side/frames.json rgb/$side/
  done
  "$H3P_CLI" --progress none compare --candidate rgb/candidate --provider rgb/provider \
    --json rgb.json > /dev/null || fail "compare of the 8-bit clips exited $?"
  python3 - mkv.json engine.json rgb.json <<'PY'
import json, sys
mkv, engine, rgb = (json.load(open(p)) for p in sys.argv[1:])
assert mkv["candidate"]["kind"] == "video", mkv["candidate"]
assert mkv["frames"] == engine["frames"], "front and engine differ"
keys = ("psnr_db", "ssim", "psnr_db_ffmpeg", "ssim_ffmpeg", "temporal_rmse")
for a, b in zip(mkv["frames"], rgb["frames"]):
    assert all(a.get(k) == b.get(k) for k in keys), (a, b)
assert mkv["summary"]["audio_rel_l2"] is not None, mkv["summary"]
PY
  # H.264 files (yuv420p as stored): the FFmpeg-compatible figures are measured on the stored
  # planes, as the ffmpeg CLI measures them.
  for side in candidate provider; do
    "$H3P_CLI" --progress none export pair/$side --mp4 ${side:0:1}.mp4 --no-mkv > /dev/null
  done
  "$H3P_CLI" --progress none compare --candidate c.mp4 --provider p.mp4 --json mp4.json \
    > /dev/null || fail "compare of MP4 files exited $?"
  if command -v ffmpeg > /dev/null; then
    ffmpeg -hide_banner -nostats -i c.mp4 -i p.mp4 -lavfi \
      "[0:v]format=yuv420p,split[a1][a2];[1:v]format=yuv420p,split[b1][b2];[a1][b1]psnr;[a2][b2]ssim" \
      -f null - 2> ffmpeg.log
    python3 - mp4.json ffmpeg.log <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))["summary"]
log = open(sys.argv[2]).read()
psnr = float(re.search(r"average:([0-9.]+)", log).group(1))
ssim = float(re.search(r"All:([0-9.]+)", log).group(1))
assert abs(s["psnr_db_ffmpeg"] - psnr) <= 1e-3, (s["psnr_db_ffmpeg"], psnr)
assert abs(s["ssim_ffmpeg"] - ssim) <= 1e-4, (s["ssim_ffmpeg"], ssim)
assert "as stored" in s["yuv_conversion"], s["yuv_conversion"]
PY
  fi
  # --work keeps the decoded files as decoded-frames directories (FFV1: the same bytes).
  "$H3P_CLI" --progress none compare --candidate c.mkv --provider p.mkv --work kept > /dev/null \
    || fail "compare --work exited $?"
  cmp -s kept/candidate/frames.rgb pair/candidate/frames.rgb || fail "kept frames differ"
  [[ -f kept/provider/frames.json && -f kept/provider/audio.safetensors ]] || fail "kept: $(ls kept/*)"
  # A truncated video file: exit 2 naming it.
  head -c 20000 c.mkv > cut.mkv
  expect_exit 2 "$H3P_CLI" --progress none compare --candidate cut.mkv --provider p.mkv
  grep -q "cut.mkv" <<<"$LAST_ERR" || fail "the error does not name the file: $LAST_ERR"
else
  grep -q "no media support" exp.err || fail "export failed: $(cat exp.err)"
fi

# 5. A front without its engine: a clear error and exit 2.
mkdir lone && cp "$H3P_CLI" lone/h3parity
expect_exit 2 lone/h3parity --progress none generate --help
grep -q "h3parity-engine" <<<"$LAST_ERR" || fail "the error does not name the engine: $LAST_ERR"
echo "ok: compare of clips without LibTorch; other commands handed to the engine"
