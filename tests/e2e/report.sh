#!/usr/bin/env bash
# e2e: `h3parity report RUNS` compares every candidate and variant with the provider of its
# seed, writes report.md / report.json with one qualification table, and SHA256SUMS that
# `sha256sum -c` accepts from the runs directory (and rejects after a cited file changes).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 3/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > R.json
mkdir -p R/demo && cp R.json R/demo/contract.json
for run in provider:42 candidate:42 provider:43 candidate:43; do
  "$H3P_CLI" --progress none generate --contract R.json --impl ${run%%:*} --seed ${run##*:} \
    --runs R >/dev/null || fail "generate $run exited $?"
done
for seed in 42 43; do
  python3 "$H3P_SOURCE_DIR/tools/bench/make_decoded_pair.py" pair-$seed --frames 124 --width 128 \
    --height 96 --samples 165334 --same \
    --provider-dir R/demo/provider/seed-$seed/decoded --candidate-dir R/demo/candidate/seed-$seed/decoded
done
status=0
"$H3P_CLI" --progress none report R > report.txt || status=$?
cat report.txt
[[ $status == 0 ]] || fail "report exited $status"
python3 - R/report/report.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["comparisons"]) == 2 and r["passed"] is True, r.get("passed")
assert {c["candidate"]["seed"] for c in r["comparisons"]} == {42, 43}
assert all(c["bounds"]["source"].endswith("contract.json") for c in r["comparisons"])
PY
grep -q "| passed |" R/report/report.md || fail "report.md lacks the table"
(cd R && sha256sum -c --quiet report/SHA256SUMS) || fail "SHA256SUMS does not verify"
grep -q "demo/provider/seed-42/manifest.json" R/report/SHA256SUMS || fail "manifest not cited"
grep -q "decoded/frames.rgb" R/report/SHA256SUMS || fail "decoded frames not cited"
printf 'x' >> R/demo/candidate/seed-43/decoded/frames.json
if (cd R && sha256sum -c --quiet report/SHA256SUMS 2>/dev/null); then fail "a changed file still verifies"; fi
echo "report e2e passed"
