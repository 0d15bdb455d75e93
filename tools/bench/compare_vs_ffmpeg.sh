#!/usr/bin/env bash
# Benchmark: `h3parity compare` against the ffmpeg CLI computing psnr and ssim (yuv420p) of the
# same clips in one run. The pair: 124 frames (default 1344x768) with 2 x 165,600 audio samples,
# given to both as raw frames (--input raw: compare reads decoded-frames directories, ffmpeg raw
# rgb24) or as video files both must decode (--input ffv1: MKV with FFV1 + FLAC, as `h3parity
# export` writes them; --input h264: MP4 with H.264 + AAC). compare computes more: fp32 PSNR and
# Gaussian SSIM per channel, the same two ffmpeg figures, temporal RMSE and audio relative L2.
# Runs are interleaved (ffmpeg, compare, ffmpeg, ...) and the medians compared; the ratio
# printed is compare / ffmpeg wall time (goal: <= 1). Also checks that compare's *_ffmpeg
# figures equal ffmpeg's printed ones (an H.264 file's yuv420p is measured as stored by both).
#
# With --against OLD_H3PARITY, each round also runs that build's compare right after this
# one's, and the medians of the per-round ratios are printed (this / ffmpeg, old / ffmpeg and
# this / old): on a shared machine whose speed wanders from run to run, a ratio taken inside
# one round is steadier than a ratio of medians.
#
# usage: tools/bench/compare_vs_ffmpeg.sh H3PARITY [WORK_DIR] [REPEATS]
#          [--input raw|ffv1|h264] [--size WIDTHxHEIGHT] [--against OLD_H3PARITY]
set -euo pipefail
positional=(); input=raw; size=1344x768; against=
while [[ $# -gt 0 ]]; do
  case $1 in
    --input) input=$2; shift ;;
    --size) size=$2; shift ;;
    --against) against=$2; shift ;;
    -*) echo "compare_vs_ffmpeg: unknown option '$1'" >&2; exit 2 ;;
    *) positional+=("$1") ;;
  esac
  shift
done
cli=${positional[0]:?usage: compare_vs_ffmpeg.sh H3PARITY [WORK_DIR] [REPEATS] [--input raw|ffv1|h264] [--size WxH]}
work=${positional[1]:-$(mktemp -d)}
repeats=${positional[2]:-3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v ffmpeg >/dev/null || { echo "ffmpeg CLI not found (scripts/install-deps.sh --tests)" >&2; exit 2; }
[[ $size =~ ^([0-9]+)x([0-9]+)$ ]] || { echo "--size: WIDTHxHEIGHT, got '$size'" >&2; exit 2; }
width=${BASH_REMATCH[1]}; height=${BASH_REMATCH[2]}

if [[ ! -f $work/candidate/frames.json ]]; then
  echo "writing the synthetic pair ($size) into $work ..."
  python3 "$here/make_decoded_pair.py" "$work" --width "$width" --height "$height"
fi
got=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); print("%dx%d" % (h["width"], h["height"]))' \
  "$work/candidate/frames.json")
[[ $got == "$size" ]] || { echo "$work holds a ${got} pair, not $size: use another WORK_DIR" >&2; exit 2; }

case $input in
  raw)
    cand=$work/candidate; prov=$work/provider
    in="-f rawvideo -pix_fmt rgb24 -s $size -r 24 -i"
    ff_inputs=($in "$cand/frames.rgb" $in "$prov/frames.rgb") ;;
  ffv1|h264)
    ext=mkv; flags=(--no-mp4); [[ $input == h264 ]] && { ext=mp4; flags=(--no-mkv); }
    cand=$work/candidate.$ext; prov=$work/provider.$ext
    for side in candidate provider; do
      if [[ ! -f $work/$side.$ext ]]; then
        "$cli" --progress none export "$work/$side" "--$ext" "$work/$side.$ext" "${flags[@]}" > /dev/null
      fi
    done
    ff_inputs=(-i "$cand" -i "$prov") ;;
  *) echo "--input: raw, ffv1 or h264, got '$input'" >&2; exit 2 ;;
esac
ffmpeg_once() {
  ffmpeg -hide_banner -nostats "${ff_inputs[@]}" \
    -lavfi "[0:v]format=yuv420p,split[a1][a2];[1:v]format=yuv420p,split[b1][b2];[a1][b1]psnr;[a2][b2]ssim" \
    -f null - 2> "$work/ffmpeg.log"
}
compare_once() {
  "$cli" --progress none compare --candidate "$cand" --provider "$prov" \
    --json "$work/compare.json" > "$work/compare.txt"
}
against_once() {
  "$against" --progress none compare --candidate "$cand" --provider "$prov" \
    --json "$work/compare-against.json" > /dev/null
}
[[ -z $against || -x $against ]] || { echo "--against: '$against' is not an executable" >&2; exit 2; }
# Wall seconds of one run on stdout; its CPU seconds (user + sys, children included) appended
# to the file named by $cpu_log.
seconds() {
  local s=$(date +%s.%N) me=$BASHPID t0 t1
  t0=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$me/stat")
  "$@"
  t1=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$me/stat")
  echo "($t1 - $t0) / $(getconf CLK_TCK)" | bc -l >> "$cpu_log"
  echo "$(date +%s.%N) - $s" | bc
}

# Warm the page cache once, then interleave.
cat "$work"/candidate/* "$work"/provider/* "$cand" "$prov" > /dev/null 2>&1 || true
ff=() ; h3=() ; old=()
: > "$work/cpu_ffmpeg.txt"; : > "$work/cpu_compare.txt"; : > "$work/cpu_against.txt"
for ((i = 0; i < repeats; i++)); do
  ff+=("$(cpu_log=$work/cpu_ffmpeg.txt seconds ffmpeg_once)")
  h3+=("$(cpu_log=$work/cpu_compare.txt seconds compare_once)")
  [[ -z $against ]] || old+=("$(cpu_log=$work/cpu_against.txt seconds against_once)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# The median over rounds of x[i] / y[i].
round_ratio() {
  local -n x=$1 y=$2
  local r=() i
  for ((i = 0; i < ${#x[@]}; i++)); do r+=("$(echo "${x[i]} / ${y[i]}" | bc -l)"); done
  printf '%.3f' "$(median "${r[@]}")"
}
mf=$(median "${ff[@]}"); mh=$(median "${h3[@]}")
echo "ffmpeg psnr+ssim:   ${ff[*]} s  (median $mf s)"
echo "h3parity compare:   ${h3[*]} s  (median $mh s)"
echo "ratio compare/ffmpeg: $(echo "scale=3; $mh / $mf" | bc)"
cf=$(median $(cat "$work/cpu_ffmpeg.txt")); ch=$(median $(cat "$work/cpu_compare.txt"))
printf 'CPU (user + sys), median: ffmpeg %.2f s, compare %.2f s, ratio %.2f\n' "$cf" "$ch" \
  "$(echo "$ch / $cf" | bc -l)"
if [[ -n $against ]]; then
  mapfile -t cpu_ff < "$work/cpu_ffmpeg.txt"; mapfile -t cpu_h3 < "$work/cpu_compare.txt"
  mapfile -t cpu_old < "$work/cpu_against.txt"
  echo "against:            ${old[*]} s  (median $(median "${old[@]}") s)"
  echo "per-round medians, wall: compare/ffmpeg $(round_ratio h3 ff)," \
    "against/ffmpeg $(round_ratio old ff), compare/against $(round_ratio h3 old)"
  echo "per-round medians, CPU:  compare/ffmpeg $(round_ratio cpu_h3 cpu_ff)," \
    "against/ffmpeg $(round_ratio cpu_old cpu_ff), compare/against $(round_ratio cpu_h3 cpu_old)"
  if cmp -s "$work/compare.json" "$work/compare-against.json"; then
    echo "the two builds' JSON are identical"
  else
    echo "the two builds' JSON differ"
  fi
fi
echo "input: $input $size, cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/ffmpeg.log" "$work/compare.json" "$input" <<'PY'
import json, re, sys
log = open(sys.argv[1]).read()
psnr = float(re.search(r"average:([0-9.]+)", log).group(1))
ssim = float(re.search(r"All:([0-9.]+)", log).group(1))
s = json.load(open(sys.argv[2]))["summary"]
print(f"ffmpeg:  psnr average {psnr:.6f}  ssim All {ssim:.6f}")
print(f"compare: psnr_db_ffmpeg {s['psnr_db_ffmpeg']:.6f}  ssim_ffmpeg {s['ssim_ffmpeg']:.6f}  "
      f"(fp32: psnr_db {s['psnr_db']:.4f} ssim {s['ssim']:.6f} temporal_rmse {s['temporal_rmse']:.3e} "
      f"audio_rel_l2 {s['audio_rel_l2']:.3e})")
assert abs(s["psnr_db_ffmpeg"] - psnr) <= 1e-3, "psnr differs from ffmpeg"
assert abs(s["ssim_ffmpeg"] - ssim) <= 1e-4, "ssim differs from ffmpeg"
print("ffmpeg figures agree")
PY
