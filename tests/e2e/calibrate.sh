#!/usr/bin/env bash
# e2e: calibrate -> contract -> candidate -> compare with the noise floor. On the embedded tiny
# model at 64x64, 22 frames, 3 steps: `calibrate` refuses a calibration seed that is a contract
# seed (exit 2, naming it); measures the provider's math-attention variant and the candidate
# against the provider on a calibration seed and writes a new contract whose bounds follow the
# stated rule, with the record (figures, runs and their manifest digests) inside; a second call
# reuses every run and writes the same contract; generation under it records its digest;
# compare shows the variants' range beside the candidate and a second verdict consistent with
# the figures, the exit code following the bounds alone; report carries the noise-floor table
# and cites the calibration; a tampered or malformed calibration record is refused (exit 2,
# naming the field).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 3/' -e 's/"frames": 124/"frames": 22/' \
  -e 's/"width": 128/"width": 64/' -e 's/"height": 96/"height": 64/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
cp c.json c.orig.json
cal() { "$H3P_CLI" --progress none calibrate --contract c.json --runs R --out cal.json "$@"; }

# 1. A calibration seed that is a contract seed: refused before anything runs.
expect_exit 2 cal --calibration-seeds 100,43 --variant provider:attention=math
grep -q "seed 43" <<<"$LAST_ERR" || fail "overlap refusal does not name the seed: $LAST_ERR"
[[ ! -e cal.json && ! -e R/demo-calibration ]] || fail "a refused calibration wrote something"

# 2. Calibrate on seed 100 with two variants.
cal --calibration-seeds 100 --variant provider:attention=math --variant candidate \
  --json calib.json > calib.txt || fail "calibrate exited $?"
cat calib.txt
cmp -s c.json c.orig.json || fail "calibrate modified its input contract"
grep -q "provider:attention=math" calib.txt && grep -q "^bounds" calib.txt \
  || fail "calibrate printed no table"
python3 - cal.json calib.json R <<'PY'
import hashlib, json, os, sys
c = json.load(open(sys.argv[1])); j = json.load(open(sys.argv[2])); root = sys.argv[3]
cal = c["calibration"]
assert c["name"] == "demo-calibrated" and c["seeds"] == [42, 43, 44], c["name"]
assert cal["rule"] == "worst-variant-margin" and "worst" in cal["rule_text"], cal["rule"]
assert cal["seeds"] == [100] and cal["variants"] == ["provider:attention=math", "candidate"]
assert len(cal["figures"]) == 2 and len(cal["runs"]) == 3, (len(cal["figures"]), len(cal["runs"]))
for run in cal["runs"]:
    path = os.path.join(root, run["manifest"])
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == run["manifest_sha256"], path
    assert json.load(open(path))["contract_digest"] == cal["runs_contract_digest"], path
# The bounds follow the rule from the figures.
m = cal["margins"]; f = cal["figures"]
num = lambda v: float("inf") if v == "inf" else v
psnr = min(num(x["psnr_db"]) for x in f)
want = {"psnr_db_min": min(psnr, m["psnr_db_cap"]) - m["psnr_db"],
        "ssim_min": max(min(x["ssim"] for x in f) - m["ssim"], -1),
        "temporal_rmse_max": max(max(x["temporal_rmse"] for x in f) * (1 + m["ratio"]), m["temporal_rmse_floor"]),
        "audio_rel_l2_max": max(max(x["audio_rel_l2"] for x in f) * (1 + m["ratio"]), m["audio_rel_l2_floor"])}
for k, v in want.items():
    assert abs(c["bounds"][k] - v) <= 1e-12 * max(1, abs(v)), (k, c["bounds"][k], v)
assert j["bounds"] == c["bounds"] and j["calibration"] == cal and j["generated"] == 3, j.keys()
for x in f:
    for k in ("psnr_db", "ssim", "temporal_rmse", "audio_rel_l2", "step_video_rel_l2_max"):
        assert x[k] is not None, (x, k)
print("calibrated bounds:", c["bounds"])
PY

# 3. Re-running reuses every run and writes the same contract.
cp cal.json cal.first.json
cal --calibration-seeds 100 --variant provider:attention=math --variant candidate > again.txt \
  || fail "second calibrate exited $?"
grep -q "0 runs generated, 3 reused" again.txt || fail "runs were not reused: $(cat again.txt)"
cmp -s cal.json cal.first.json || fail "a re-run wrote another contract"

# 4. Generation under the calibrated contract records its digest.
for spec in provider candidate provider:attention=math; do
  "$H3P_CLI" --progress none generate --contract cal.json --impl $spec --seed 42 --runs R \
    >/dev/null || fail "generate $spec exited $?"
done
digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract_digest"])' calib.json)
grep -q "\"contract_digest\": \"$digest\"" R/demo-calibrated/candidate/seed-42/manifest.json \
  || fail "the candidate run does not record the calibrated contract's digest $digest"

# 5. compare: the noise floor beside the bounds; the exit code follows the bounds only.
P=R/demo-calibrated/provider/seed-42
V=R/demo-calibrated/provider@attention=math/seed-42
status=0
"$H3P_CLI" --progress none compare --candidate R/demo-calibrated/candidate/seed-42 --provider $P \
  --variant $V --json cmp.json --markdown cmp.md > cmp.txt || status=$?
cat cmp.txt
[[ $status == 0 || $status == 1 ]] || fail "compare exited $status"
grep -q "within the provider's own spread" cmp.txt || fail "no second verdict in the table"
grep -q "variants min..max" cmp.txt || fail "no noise-floor range in the table"
python3 - cmp.json $status <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); status = int(sys.argv[2])
s, nf = r["summary"], r["noise_floor"]
assert s["passed"] is (status == 0), (s["passed"], status)
assert r["bounds"]["calibration"]["rule"] == "worst-variant-margin", r["bounds"]
assert r["bounds"]["calibration"]["seeds"] == [100], r["bounds"]["calibration"]
assert [v["spec"] for v in nf["variants"]] == ["provider:attention=math"], nf["variants"]
v = nf["variants"][0]
for k in ("spec", "run", "psnr_db", "ssim", "temporal_rmse", "audio_rel_l2", "steps"):
    assert k in v, k
assert len(v["steps"]) == len(r["steps"]) > 0, (v["steps"], r["steps"])
num = lambda x: float("inf") if x == "inf" else x
for k in ("psnr_db", "ssim", "temporal_rmse", "audio_rel_l2"):
    assert nf["range"][k]["min"] == v[k] == nf["range"][k]["max"], (k, nf["range"][k], v[k])
within = (num(s["psnr_db"]) >= num(v["psnr_db"]) and s["ssim"] >= v["ssim"]
          and s["temporal_rmse"] <= v["temporal_rmse"] and s["audio_rel_l2"] <= v["audio_rel_l2"])
assert nf["within_spread"] is within, (nf, s)
assert (len(nf["outside"]) == 0) is within, nf["outside"]
print("noise floor: within_spread", within, "bounds passed", s["passed"])
PY
grep -q "## Noise floor" cmp.md || fail "compare markdown lacks the noise floor"
# A --variant of another seed serves no comparison: refused.
"$H3P_CLI" --progress none generate --contract cal.json --impl provider:attention=math --seed 43 \
  --runs R >/dev/null || fail "generate variant seed 43 exited $?"
expect_exit 2 "$H3P_CLI" --progress none compare --candidate R/demo-calibrated/candidate/seed-42 \
  --provider $P --variant R/demo-calibrated/provider@attention=math/seed-43
grep -q -- "--variant" <<<"$LAST_ERR" || fail "unused --variant not named: $LAST_ERR"

# 6. report: the noise-floor table per seed and the calibration cited.
status=0
"$H3P_CLI" --progress none report R > report.txt || status=$?
[[ $status == 0 || $status == 1 ]] || fail "report exited $status"
grep -q "## Noise floor" R/report/report.md || fail "report.md lacks the noise floor"
grep -q "## Calibration" R/report/report.md || fail "report.md does not cite the calibration"
grep -q "variants min..max" R/report/report.md || fail "report.md lacks the range row"
python3 - R/report/report.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cal = [c for c in r["calibrations"] if c["contract"] == "demo-calibrated"]
assert len(cal) == 1 and cal[0]["calibration"]["seeds"] == [100], r["calibrations"]
nf = [t for t in r["noise_floor"] if t["contract"] == "demo-calibrated" and t["seed"] == 42]
assert len(nf) == 1 and [c["candidate"] for c in nf[0]["candidates"]] == ["candidate"], nf
assert [v["spec"] for v in nf[0]["variants"]] == ["provider:attention=math"], nf
PY

# 7. A tampered or malformed calibration record is refused wherever the contract is read.
python3 - cal.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
t = json.loads(json.dumps(c))
for f in t["calibration"]["figures"]:
    f["psnr_db"] = 5.0  # the bounds no longer follow from the figures
json.dump(t, open("tampered.json", "w"), indent=2)
m = json.loads(json.dumps(c)); m["calibration"]["seeds"] = ["100"]
json.dump(m, open("malformed.json", "w"), indent=2)
o = json.loads(json.dumps(c)); o["calibration"]["seeds"] = [42]
json.dump(o, open("overlap.json", "w"), indent=2)
PY
expect_exit 2 "$H3P_CLI" --progress none generate --contract tampered.json --seed 42 --runs T
grep -q "tampered.json: field 'bounds'.*calibration" <<<"$LAST_ERR" || fail "tampering not named: $LAST_ERR"
[[ ! -e T/demo-calibrated ]] || fail "generation started under a tampered contract"
expect_exit 2 "$H3P_CLI" --progress none generate --contract malformed.json --seed 42 --runs T
grep -q "malformed.json: field 'calibration.seeds'" <<<"$LAST_ERR" || fail "malformed field not named: $LAST_ERR"
expect_exit 2 "$H3P_CLI" --progress none compare --candidate R/demo-calibrated/candidate/seed-42 \
  --provider $P --contract overlap.json
grep -q "field 'calibration.seeds'.*seed 42" <<<"$LAST_ERR" || fail "overlap in the record not named: $LAST_ERR"
echo "calibrate e2e passed"
