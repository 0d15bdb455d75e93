#!/usr/bin/env bash
# e2e: `bench` times several specs in one run, interleaved round by round: every spec gets
# exactly --repeats timed calls (in --json's times_ms), its median is the median of those, the
# first spec is the peer (ratio 1), an unknown spec or a bad --repeats or --threads exits 2, and
# --threads N runs both the provider and the candidate on N threads.
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
expect_exit 2 "$H3P_CLI" bench --preset tiny --threads -1

# --threads sets the provider's (LibTorch) and the candidate kernels' thread counts alike.
"$H3P_CLI" bench --preset tiny --threads 1 --repeats 1 --json t1.json > t1.txt ||
  fail "bench --threads 1 exited $?"
grep -q ', 1 threads,' t1.txt || fail "bench --threads 1 printed: $(head -1 t1.txt)"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1]));
assert (j["threads"], j["candidate_threads"]) == (1, 1), j' t1.json ||
  fail "bench --threads 1 recorded: $(cat t1.json)"
echo "bench: interleaved rounds, figures consistent, --threads applied to both sides"
