#!/usr/bin/env bash
# e2e: `h3parity compare` on two runs of the same seed with synthetic decoded outputs: the
# JSON keys of ARCHITECTURE.md, infinite PSNR as "inf", per-step series for every saved step,
# bounds from the contract the runs were made with (exit 1 when they fail), refusal of runs of
# another seed (exit 2), several seeds in one table, and a video file in place of a run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
pair="$H3P_SOURCE_DIR/tools/bench/make_decoded_pair.py"

sed -e 's/"sampling_steps": 50/"sampling_steps": 4/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
for run in provider:42 candidate:42 provider:43 candidate:43; do
  "$H3P_CLI" --progress none generate --contract c.json --impl ${run%%:*} --seed ${run##*:} \
    --runs R >/dev/null || fail "generate $run exited $?"
done
P=R/demo/provider/seed-42
C=R/demo/candidate/seed-42
# Synthetic decoded outputs replace the ones generation wrote, so that the pair differs by a
# known amount: 124 frames 128x96, stereo at 32 kHz.
for seed in 42 43; do
  python3 "$pair" pair-$seed --frames 124 --width 128 --height 96 --samples 165334 \
    --provider-dir R/demo/provider/seed-$seed/decoded --candidate-dir R/demo/candidate/seed-$seed/decoded
done

# 1. Candidate against provider, judged by the runs' contract: the synthetic noise fails the
#    temporal bound, so exit 1, and the JSON says why.
status=0
"$H3P_CLI" --progress none compare --candidate $C --provider $P --contract c.json \
  --json cmp.json --markdown cmp.md > cmp.txt || status=$?
cat cmp.txt
[[ $status == 1 ]] || fail "compare against failing bounds exited $status, want 1"
python3 - cmp.json R/demo/provider/seed-42/steps <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
for key in ("summary", "bounds", "frames", "steps"):
    assert key in r, key
for key in ("psnr_db", "ssim", "temporal_rmse", "audio_rel_l2", "psnr_db_ffmpeg", "ssim_ffmpeg", "passed"):
    assert key in r["summary"], key
s = r["summary"]
assert s["passed"] is False, s
assert 30 < s["psnr_db"] < 60 and 0.9 < s["ssim"] < 1 and s["temporal_rmse"] > 0.01, s
assert 0 < s["audio_rel_l2"] < 0.05, s
assert r["bounds"]["temporal_rmse_max"] == 0.01 and r["bounds"]["post_hoc"] is False, r["bounds"]
assert any("temporal_rmse" in f for f in r["failures"]), r["failures"]
assert len(r["frames"]) == 124 and r["frames"][0]["index"] == 0, len(r["frames"])
for key in ("index", "psnr_db", "ssim", "psnr_db_ffmpeg", "ssim_ffmpeg"):
    assert key in r["frames"][5], key
saved = len([f for f in os.listdir(sys.argv[2]) if f.endswith(".json")])
assert len(r["steps"]) == saved > 0, (len(r["steps"]), saved)
for row in r["steps"]:
    for key in ("step", "video_rel_l2", "audio_rel_l2"):
        assert key in row, key
print("compare JSON complete:", len(r["frames"]), "frames,", len(r["steps"]), "steps")
PY
grep -q "| passed |" cmp.md || fail "markdown lacks the summary table"

# 2. The provider against itself: infinite PSNR as "inf", SSIM 1, passes (exit 0).
"$H3P_CLI" --progress none compare --candidate $P --provider $P --contract c.json --json same.json >/dev/null \
  || fail "identical compare exited $?"
python3 - same.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["psnr_db"] == "inf" and s["psnr_db_ffmpeg"] == "inf", s
assert s["ssim"] == 1 and s["ssim_ffmpeg"] == 1 and s["temporal_rmse"] == 0 and s["passed"] is True, s
PY

# 3. Runs of another seed are refused before any metric (exit 2, naming the field).
expect_exit 2 "$H3P_CLI" --progress none compare --candidate R/demo/candidate/seed-43 --provider $P
grep -q "seed" <<<"$LAST_ERR" || fail "refusal does not name the seed: $LAST_ERR"
# Another contract's bounds only with --post-hoc.
sed -e 's/"psnr_db_min": 30/"psnr_db_min": 20/' c.json > other.json
expect_exit 2 "$H3P_CLI" --progress none compare --candidate $C --provider $P --contract other.json
status=0
"$H3P_CLI" --progress none compare --candidate $C --provider $P --contract other.json --post-hoc \
  --json posthoc.json >/dev/null || status=$?
[[ $status == 1 ]] || fail "post-hoc compare exited $status"
grep -q '"post_hoc": true' posthoc.json || fail "post-hoc bounds not marked"

# 4. Several seeds: one table, one JSON with "comparisons".
status=0
"$H3P_CLI" --progress none compare --candidate R/demo/candidate --provider R/demo/provider \
  --contract c.json --json all.json > all.txt || status=$?
cat all.txt
grep -q " 42 " all.txt && grep -q " 43 " all.txt || fail "table lacks a seed"
python3 -c "import json,sys; r=json.load(open('all.json')); assert len(r['comparisons'])==2 and r['passed'] is False"

# 5. A video file in place of the candidate (needs a build with media).
if "$H3P_CLI" --progress none export $C --out exp --no-mkv >/dev/null 2>export.err; then
  status=0
  "$H3P_CLI" --progress none compare --candidate exp/video.mp4 --provider $P --json vid.json \
    >/dev/null || status=$?
  # Judged by the provider run's own contract.json: the synthetic noise fails its bounds.
  [[ $status == 1 ]] || fail "video-file compare exited $status, want 1"
  python3 - vid.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["candidate"]["kind"] == "video" and r["steps"] == [], r["candidate"]
assert any("not a run" in n for n in r["notes"]), r["notes"]
assert r["summary"]["pixel_source"].startswith("8-bit"), r["summary"]
assert 20 < r["summary"]["psnr_db"] < 60, r["summary"]
assert r["summary"]["passed"] is False, r["summary"]
PY
else
  grep -q "no media support" export.err || fail "export failed: $(cat export.err)"
  expect_exit 2 "$H3P_CLI" --progress none compare --candidate c.json --provider $P
  echo "headless build: video-file compare refused"
fi
echo "compare e2e passed"
