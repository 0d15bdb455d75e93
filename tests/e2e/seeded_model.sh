#!/usr/bin/env bash
# e2e: seeded weights. `init-model --weights seeded` writes configs and seed records only; a
# contract naming "seeded:<preset>?..." materialises that under RUNS/models and generates from
# weights drawn at load time; the identity says the weights are seeded, a second runs directory
# gives byte-identical runs, another seed another identity; compare and resume work as for
# weight files; mixing kinds in one directory and malformed settings are bad input (exit 2).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# 1. init-model: a few hundred bytes instead of weight files.
"$H3P_CLI" --progress none init-model --preset tiny --weights seeded --out M >/dev/null \
  || fail "init-model --weights seeded exited $?"
[[ -z $(find M -name '*.safetensors*') ]] || fail "seeded model has weight files: $(find M)"
for c in transformer vae audio_vae; do
  [[ -f M/$c/config.json && -f M/$c/h3parity-seeded-weights.json ]] || fail "M/$c: $(ls M/$c)"
done
(( $(du -sk M | cut -f1) < 64 )) || fail "seeded model takes $(du -sh M)"
expect_exit 2 "$H3P_CLI" --progress none init-model --preset tiny --out M
grep -q "holds a seed record" <<<"$LAST_ERR" || fail "weight files over a seeded model: $LAST_ERR"

# 2. A contract naming a seeded model: provider and candidate, then compare.
sed -e 's|"preset:tiny"|"seeded:tiny?seed=5"|' -e 's/"sampling_steps": 50/"sampling_steps": 6/' \
  -e 's/"frames": 124/"frames": 39/' "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
for impl in provider candidate; do
  "$H3P_CLI" --progress none generate --contract c.json --impl $impl --seed 42 --runs R \
    > gen-$impl.txt || fail "generate $impl exited $?: $(cat gen-$impl.txt)"
done
run=R/demo/provider/seed-42
[[ -d R/models/seeded-tiny-s5 && -z $(find R/models -name '*.safetensors*') ]] \
  || fail "materialised: $(find R/models)"
python3 - $run/manifest.json R/demo/candidate/seed-42/manifest.json <<'PY'
import json, sys
p, c = (json.load(open(f)) for f in sys.argv[1:3])
assert p["identity"]["weights_source"] == "seeded splitmix64-irwin-hall4-v1 seed=5", p["identity"]
assert p["identity"] == c["identity"], "provider and candidate bound to different identities"
assert p["environment"]["model"] == "seeded:tiny?seed=5", p["environment"]["model"]
PY
"$H3P_CLI" --progress none compare --candidate R/demo/candidate/seed-42 --provider $run \
  --contract c.json > cmp.txt \
  || fail "compare exited $?: $(cat cmp.txt)"
grep -qi "psnr" cmp.txt || fail "compare printed no figures: $(cat cmp.txt)"
# The evidence says the weights were drawn, not read: report and bundle provenance.
"$H3P_CLI" --progress none report R > /dev/null || fail "report exited $?"
grep -q "(seeded splitmix64-irwin-hall4-v1 seed=5)" R/report/report.md \
  || fail "report.md does not say the weights are seeded: $(grep -n seed R/report/report.md)"
"$H3P_CLI" --progress none bundle R --out B > /dev/null || fail "bundle exited $?"
grep -q "(seeded splitmix64-irwin-hall4-v1 seed=5)" B/report.md || fail "bundle report.md: no seeded weights"
python3 - B/bundle.json <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 2, runs
assert all(r["identity"]["weights_source"] == "seeded splitmix64-irwin-hall4-v1 seed=5" for r in runs), runs
PY

# 3. Drawn again in a fresh runs directory: every file of the run byte-identical.
"$H3P_CLI" --progress none generate --contract c.json --impl provider --seed 42 --runs R2 \
  --timings t.json >/dev/null
python3 - t.json R2/demo/provider/seed-42 <<'PY'
import json, os, sys
t = json.load(open(sys.argv[1]))
assert set(t["stages"]) == {"identity_seconds", "load_seconds", "decode_seconds"}, t["stages"]
assert [c["step"] for c in t["calls"]] == list(range(5)), t["calls"]
assert all(0 < c["seconds"] <= c["wall_seconds"] <= t["total_seconds"] for c in t["calls"]), t
assert t["peak_host_bytes"] > 0 and "peak_device_bytes" not in t, t
steps = os.path.join(sys.argv[2], "steps")
assert t["step_store_bytes"] == sum(os.path.getsize(os.path.join(steps, f)) for f in os.listdir(steps))
assert t["run"] == "demo/provider/seed-42", t["run"]
PY
diff <(tree_digest $run) <(tree_digest R2/demo/provider/seed-42) \
  || fail "a seeded run is not reproducible across runs directories"
# A second generate of the same run replays it from disk.
out=$("$H3P_CLI" --progress none generate --contract c.json --impl provider --seed 42 --runs R)
grep -q "0 computed" <<<"$out" || fail "the finished run was recomputed: $out"

# 4. Another seed: another identity.
sed -e 's|seed=5|seed=6|' c.json > c6.json
"$H3P_CLI" --progress none generate --contract c6.json --impl provider --seed 42 --runs R6 >/dev/null
python3 - $run/manifest.json R6/demo/provider/seed-42/manifest.json <<'PY'
import json, sys
a, b = (json.load(open(f))["identity"] for f in sys.argv[1:3])
assert a["weights_digest"] != b["weights_digest"], "seeds 5 and 6 share a weights digest"
assert b["weights_source"].endswith("seed=6"), b
PY

# 5. Bad input: malformed settings name the contract field.
for bad in 'seeded:tiny?layers=0' 'seeded:tiny?colour=red' 'seeded:huge'; do
  sed -e "s|\"seeded:tiny?seed=5\"|\"$bad\"|" c.json > bad.json
  expect_exit 2 "$H3P_CLI" --progress none generate --contract bad.json --seed 42 --runs RB
  grep -q "field 'model'" <<<"$LAST_ERR" || fail "$bad: $LAST_ERR"
done
echo "seeded models: ok"
