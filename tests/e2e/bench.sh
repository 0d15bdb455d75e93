#!/usr/bin/env bash
# e2e: `bench` times several specs in one run, interleaved round by round: every spec gets
# exactly --repeats timed calls (in --json's times_ms), its median is the median of those, the
# first spec is the peer (ratio 1), and an unknown spec or a bad --repeats exits 2.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$H3P_CLI" bench --preset tiny --impl provider --impl candidate --impl provider --repeats 4 \
  --json b.json > b.txt || fail "bench exited $?"
python3 - b.json <<'PY' || fail "bench --json: $(cat b.json)"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [r["impl"] for r in rows] == ["provider", "candidate", "provider"], rows
for r in rows:
    assert len(r["times_ms"]) == 4, r
    assert all(t > 0 for t in r["times_ms"]), r
    assert abs(sorted(r["times_ms"])[2] - r["median_ms"]) < 1e-9, r
assert rows[0]["ratio_to_first"] == 1.0
assert abs(rows[1]["ratio_to_first"] - rows[1]["median_ms"] / rows[0]["median_ms"]) < 1e-9
PY
grep -q '^candidate ' b.txt || fail "no candidate row: $(cat b.txt)"
expect_exit 2 "$H3P_CLI" bench --preset tiny --impl nonsense --repeats 1
expect_exit 2 "$H3P_CLI" bench --preset tiny --repeats 0
echo "bench: interleaved rounds, figures consistent"
