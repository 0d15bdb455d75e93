#!/usr/bin/env bash
# e2e: `h3parity export` writes a lossless MKV (FFV1 + FLAC) and an MP4 (H.264 + AAC) at the
# run's fps and sample rate; the MKV decodes back to the stored frames bit for bit. A headless
# build refuses with a clear message (exit 2). Skips without ffprobe.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v ffprobe >/dev/null || exit 77

mkdir -p run
python3 "$H3P_SOURCE_DIR/tools/bench/make_decoded_pair.py" pair --frames 48 --width 128 \
  --height 96 --samples 64000 --provider-dir run/decoded --candidate-dir other/decoded
status=0
"$H3P_CLI" --progress none export run/decoded --out out > export.txt 2> export.err || status=$?
if [[ $status != 0 ]]; then
  grep -q "no media support" export.err || fail "export exited $status: $(cat export.err)"
  [[ $status == 2 ]] || fail "headless export exited $status, want 2"
  echo "headless build: export refused"; exit 0
fi
probe() { ffprobe -v error -show_entries stream=codec_name,r_frame_rate,sample_rate,nb_read_frames \
  -count_frames -of csv=p=0 "$1"; }
probe out/video.mkv | tee mkv.txt
probe out/video.mp4 | tee mp4.txt
grep -q "^ffv1,24/1" mkv.txt && grep -q "^flac,32000" mkv.txt || fail "mkv streams: $(cat mkv.txt)"
grep -q "^h264,24/1" mp4.txt && grep -q "^aac,32000" mp4.txt || fail "mp4 streams: $(cat mp4.txt)"
grep -q ",48$" mkv.txt || fail "mkv frame count: $(cat mkv.txt)"
# Lossless: the MKV's frames are the stored frames.
ffmpeg -v error -i out/video.mkv -f rawvideo -pix_fmt rgb24 back.rgb
cmp back.rgb run/decoded/frames.rgb || fail "MKV frames differ from frames.rgb"
# The MP4 decodes to every frame (a packet without duration would lose the last one).
bytes=$(ffmpeg -v error -i out/video.mp4 -f rawvideo -pix_fmt rgb24 - | wc -c)
[[ $bytes == $((48 * 128 * 96 * 3)) ]] || fail "MP4 decodes to $bytes bytes, want 48 frames"
echo "export e2e passed"
