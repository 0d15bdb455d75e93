#!/usr/bin/env bash
# e2e: candidate plugins through the C ABI, as a kernel team uses them.
#  1. The built-in candidate exported as a plugin generates byte-identical latents to
#     --impl candidate; resume-check passes with it; ablate of its run uses the run's own spec
#     (every row equal to the built-in candidate's table, all=provider bitwise the provider).
#     The gate binds its bytes; the report names it; slurm renders its spec.
#  2. The plain-loops example (public header only), found by name, passes resume-check.
# The refusals, crashes and changed plugins: plugin_refusals.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

plugin_test_setup

# 1. The built-in candidate through the ABI.
gen R candidate >/dev/null
gen R plugin:h3p_candidate >/dev/null
cmp R/demo/candidate/seed-42/latents.safetensors R/demo/plugin@h3p_candidate/seed-42/latents.safetensors ||
  fail "plugin:h3p_candidate latents differ from --impl candidate"
# Every step's tensors (the files' metadata name the spec, so compare the tensors).
python3 - R/demo/candidate/seed-42/steps R/demo/plugin@h3p_candidate/seed-42/steps <<'PY'
import json, os, struct, sys
def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    head.pop("__metadata__", None)
    return {k: (v["dtype"], v["shape"], raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
            for k, v in head.items()}
a, b = sys.argv[1:]
files = sorted(f for f in os.listdir(a) if f.endswith(".safetensors"))
assert len(files) == 7, files
for f in files:
    assert tensors(os.path.join(a, f)) == tensors(os.path.join(b, f)), f
PY
python3 - R/demo/plugin@h3p_candidate/seed-42/manifest.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
p = m["plugin"]
assert m["impl_spec"] == "plugin:h3p_candidate", m["impl_spec"]
assert p["name"] == "h3p-candidate" and p["kind"] == "library" and len(p["library_sha256"]) == 64, p
assert p["library"].endswith("/plugins/libh3p_candidate.so") and len(p["groups"]) == 10, p
PY
"$H3P_CLI" --progress none resume-check --contract c.json --impl plugin:h3p_candidate --seed 42 \
  --runs RC --preempt-every 5 > rc.txt || fail "resume-check of plugin:h3p_candidate exited $?: $(cat rc.txt)"
grep -qi "passed" rc.txt || fail "resume-check did not pass: $(cat rc.txt)"

gen R provider >/dev/null
"$H3P_CLI" --progress none ablate --candidate R/demo/plugin@h3p_candidate/seed-42 \
  --provider R/demo/provider/seed-42 --step 0 --json plugin.json >/dev/null
"$H3P_CLI" --progress none ablate --candidate R/demo/candidate/seed-42 \
  --provider R/demo/provider/seed-42 --step 0 --json builtin.json >/dev/null
python3 - plugin.json builtin.json <<'PY'
import json, sys
p, b = (json.load(open(f)) for f in sys.argv[1:])
rows = {r["impl_spec"]: r for r in p["rows"]}
assert "plugin:h3p_candidate:attention=provider" in rows, list(rows)
assert rows["plugin:h3p_candidate:all=provider"]["video"]["bitwise_equal"], rows
assert len(p["rows"]) == len(b["rows"]), (len(p["rows"]), len(b["rows"]))
for pr, br in zip(p["rows"][1:], b["rows"][1:]):
    # The same kernels through the ABI: every row of the table is the same figure.
    assert pr["video"]["rel_l2"] == br["video"]["rel_l2"], (pr["impl_spec"], br["impl_spec"])
    assert pr["audio"]["rel_l2"] == br["audio"]["rel_l2"], (pr["impl_spec"], br["impl_spec"])
PY

# The report names the plugin each run is bound to (name, version, file, digest).
status=0
"$H3P_CLI" --progress none report R --out REP >/dev/null || status=$?
[[ $status == 0 || $status == 1 ]] || fail "report exited $status"
grep -q "Candidate plugins" REP/report.md || fail "report.md has no plugin table"
grep -q "| h3p-candidate | 1.0 | library | \`libh3p_candidate.so\`" REP/report.md ||
  fail "report.md lacks the plugin row: $(grep -A3 'Candidate plugins' REP/report.md)"
python3 -c "import json; r = json.load(open('REP/report.json')); assert r['plugins'][0]['plugin']['name'] == 'h3p-candidate', r['plugins']"

# The gate qualifies a plugin by its bytes: a gated contract generates the gated plugin spec,
# and a copy of the library with other bytes is refused.
sed -e 's/"require_gate": false/"require_gate": true/' c.json > gated.json
"$H3P_CLI" --progress none gate --contract gated.json --runs R --run R/demo/provider/seed-42 \
  --candidate plugin:h3p_candidate --out pgate.json "${CPU_GATE_TOLERANCE[@]}" >/dev/null ||
  fail "gate of plugin:h3p_candidate exited $?"
python3 -c "import json; g = json.load(open('pgate.json')); assert g['passed'] and g['plugin']['name'] == 'h3p-candidate', g['plugin']"
"$H3P_CLI" --progress none generate --contract gated.json --seed 42 --runs RG --impl plugin:h3p_candidate \
  --gate pgate.json >/dev/null || fail "gated generation of the plugin exited $?"
mkdir -p other && cp "$(dirname "$H3P_CLI")/plugins/libh3p_candidate.so" other/ && printf 'x' >> other/libh3p_candidate.so
expect_exit 2 env H3P_PLUGIN_PATH=$PWD/other "$H3P_CLI" --progress none generate --contract gated.json \
  --seed 42 --runs RG2 --impl plugin:h3p_candidate --gate pgate.json
grep -q "field 'plugin': the gate qualified plugin bytes" <<<"$LAST_ERR" || fail "gate of other bytes: $LAST_ERR"

# 2. The plain-loops example, found on H3P_PLUGIN_PATH by name.
cp "$(dirname "$H3P_CLI")/plugins/libh3p_plain_loops.so" mine.so
H3P_PLUGIN_PATH=$PWD "$H3P_CLI" --progress none resume-check --contract c.json --impl plugin:mine.so \
  --seed 42 --runs RP --preempt-every 6 > rp.txt || fail "resume-check of plain loops exited $?: $(cat rp.txt)"

# Slurm: a plugin spec renders into the job verbatim; one that cannot be found writes no job.
"$H3P_CLI" slurm generate --contract c.json --runs S --out J --impl plugin:h3p_candidate >/dev/null ||
  fail "slurm generate with a plugin spec exited $?"
grep -rq "plugin:h3p_candidate" J || fail "the job script lacks the plugin spec"
expect_exit 2 "$H3P_CLI" slurm generate --contract c.json --runs S --out J2 --impl plugin:/nonexistent/libk.so
grep -q "not found" <<<"$LAST_ERR" || fail "slurm with a missing plugin: $LAST_ERR"
[[ ! -e J2 ]] || fail "a refused slurm render wrote $(find J2 | head -3)"

echo "plugins: all checks passed"
