#!/usr/bin/env bash
# e2e: `h3parity ablate` replays a provider step with each operator group swapped: the provider
# replay and candidate:all=provider are bitwise equal to the saved outputs, the candidate is
# within bf16 expectations, the table, JSON and Markdown are complete; --all-steps gives the
# teacher-forced and free-running curves; runs of different seeds are refused.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 6/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
for impl in provider candidate; do
  for seed in 42 43; do
    "$H3P_CLI" --progress none generate --contract c.json --impl $impl --seed $seed --runs R >/dev/null \
      || fail "generate $impl $seed exited $?"
  done
done
P=R/demo/provider/seed-42
C=R/demo/candidate/seed-42
out=$("$H3P_CLI" --progress none ablate --provider $P --candidate $C --step 2 --json a.json --markdown a.md) \
  || fail "ablate exited $?"
echo "$out"
python3 - a.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = {row["impl_spec"]: row for row in r["rows"]}
groups = ["gemm", "attention", "swiglu", "adaln", "qk_norm", "rope", "norm", "residual", "embed", "head"]
want = ["provider", "candidate"] + ["candidate:%s=provider" % g for g in groups] + \
       ["candidate:interim=provider", "candidate:all=provider"] + \
       ["provider:attention=math"]  # the CPU's provider variant (--variants device)
assert list(rows) == want, list(rows)
assert [row["variant"] for row in rows.values()] == [False] * (len(want) - 1) + [True]
for spec in ("provider", "candidate:all=provider"):
    assert rows[spec]["video"]["bitwise_equal"] and rows[spec]["audio"]["bitwise_equal"], spec
for spec, row in rows.items():
    for side in ("video", "audio"):
        assert row[side]["finite"], spec
        assert row[side]["rel_l2"] < 3e-2, (spec, side, row[side]["rel_l2"])
assert 0 < rows["candidate"]["video"]["rel_l2"], "candidate identical to the provider?"
assert "free_running" in r
print("ablation JSON complete:", len(rows), "rows")
PY
grep -q "candidate:interim=provider" a.md || fail "markdown lacks rows"
grep -q "provider:attention=math\` (variant)" a.md || fail "markdown lacks the variant row"

# --variants names specs (overrides separated by commas too) or none; a bad one exits 2.
"$H3P_CLI" --progress none ablate --provider $P --candidate $C --step 0 --groups attention \
  --variants provider:attention=math,candidate:all=provider,attention=candidate --json v.json \
  || fail "ablate --variants exited $?"
python3 - v.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
variants = [r["impl_spec"] for r in rows if r["variant"]]
assert variants == ["provider:attention=math", "candidate:all=provider,attention=candidate"], variants
PY
"$H3P_CLI" --progress none ablate --provider $P --candidate $C --step 0 --groups attention \
  --variants none --json n.json || fail "ablate --variants none exited $?"
python3 -c "import json; assert not any(r['variant'] for r in json.load(open('n.json'))['rows'])"
expect_exit 2 "$H3P_CLI" --progress none ablate --provider $P --candidate $C --step 0 \
  --variants provider:attention=sideways
grep -q "variants" <<<"$LAST_ERR" || fail "unclear --variants refusal: $LAST_ERR"

out=$("$H3P_CLI" --progress none ablate --provider $P --candidate $C --all-steps --json d.json) \
  || fail "ablate --all-steps exited $?"
python3 -c "import json,sys; d=json.load(open('d.json')); assert len(d['steps'])==5 and all('free_running' in s for s in d['steps']) and all(len(s['variants'])==1 for s in d['steps']); print('drift rows', len(d['steps']))"

expect_exit 2 "$H3P_CLI" ablate --provider $P --candidate R/demo/candidate/seed-43 --step 0
grep -q "field 'seed'" <<<"$LAST_ERR" || fail "seed mismatch message: $LAST_ERR"
expect_exit 2 "$H3P_CLI" ablate --provider $P --candidate $C --step 9
expect_exit 2 "$H3P_CLI" ablate --provider $P --candidate $C --step 0 --groups gemm,nope
echo "ok: ablation table, drift curves and refusals"
