#!/usr/bin/env bash
# e2e: `preflight` exercises a contract at a small canvas with every named impl spec, decode
# included: a table of what ran, the time per call, the small run, peak memory and the projected
# full run (JSON figures consistent with each other); a spec that fails inside a call (a plugin
# returning an error) is its row's error and exit 1 while the others still run; bad input
# (canvas, calls, contract) exits 2; each spec runs in a process of its own, so a plugin that
# crashes is its row's error; the small runs are removed unless --keep.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 30/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
mkdir -p W
"$H3P_CLI" --progress none preflight --contract c.json --impl provider --impl candidate \
  --canvas 64x64 --calls 2 --work W --json p.json --markdown p.md > out.txt \
  || fail "preflight exited $?: $(cat out.txt)"
cat out.txt
python3 - p.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["passed"] and r["full_calls"] == 29 and r["calls"] == 2, r
assert r["canvas"] == {"width": 64, "height": 64}, r["canvas"]
assert 0 < r["small_sequence"] < r["full_sequence"], r
assert r["cost_ratio"] > 1, r["cost_ratio"]
assert [row["impl_spec"] for row in r["rows"]] == ["provider", "candidate"]
for row in r["rows"]:
    assert row["ok"] and row["calls"] == 2 and row["decoded"], row  # the first warms up
    assert 0 < row["seconds_per_call"] <= row["seconds_total"], row
    assert row["host_peak_bytes"] > 10 * 2**20, row
    want = row["seconds_per_call"] * r["cost_ratio"] * r["full_calls"]
    assert abs(row["projected_seconds"] - want) <= 1e-9 * want, (row, want)
    assert "device_peak_bytes" not in row, row  # CPU
print("preflight JSON consistent")
PY
grep -q "| \`candidate\` | ok, decoded |" p.md || fail "markdown row missing: $(cat p.md)"
[[ -z $(ls -A W) ]] || fail "the small runs were left behind: $(ls -A W)"

# A plugin whose attention returns an error: its row fails, the provider's still runs, exit 1.
bad=$H3P_BINARY_DIR/tests/core/ops/plugins
status=0
"$H3P_CLI" --progress none preflight --contract c.json --impl provider \
  --impl plugin:$bad/libmisbehaving_error_status.so:rest=provider --canvas 64x64 --calls 1 \
  --json f.json > fail.txt || status=$?
[[ $status == 1 ]] || fail "a failing spec exited $status, want 1: $(cat fail.txt)"
python3 - f.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["passed"]
ok, bad = r["rows"]
assert ok["ok"] and not bad["ok"], r["rows"]
assert "returned status 1" in bad["error"], bad["error"]
PY
grep -q "failed" fail.txt || fail "the table does not say the spec failed"

# A plugin that crashes the process: each spec runs in a child, so its row says so and the
# provider's row still stands.
status=0
H3P_TEST_CRASH_AT_CALL=3 "$H3P_CLI" --progress none preflight --contract c.json \
  --impl plugin:$bad/libmisbehaving_crash_after.so:rest=provider \
  --impl provider --canvas 64x64 --calls 2 --json crash.json > crash.txt || status=$?
[[ $status == 1 ]] || fail "a crashing spec exited $status, want 1: $(cat crash.txt)"
python3 - crash.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
crashed, ok = r["rows"]
assert not crashed["ok"] and "crashed (signal" in crashed["error"], crashed
assert ok["ok"] and ok["impl_spec"] == "provider", ok
PY

expect_exit 2 "$H3P_CLI" preflight --contract c.json --impl provider --canvas 100x64
grep -q "multiples of 32" <<<"$LAST_ERR" || fail "unclear canvas refusal: $LAST_ERR"
expect_exit 2 "$H3P_CLI" preflight --contract c.json --impl provider --canvas big
expect_exit 2 "$H3P_CLI" preflight --contract c.json --impl provider --calls 0
expect_exit 2 "$H3P_CLI" preflight --contract missing.json --impl provider
grep -q "missing.json" <<<"$LAST_ERR" || fail "the missing contract is not named: $LAST_ERR"

"$H3P_CLI" --progress none preflight --contract c.json --impl provider --canvas 64x64 --calls 1 \
  --work W --keep > keep.txt || fail "preflight --keep exited $?"
[[ -n $(ls -A W) ]] || fail "--keep removed the small runs"
echo "preflight: passed"
