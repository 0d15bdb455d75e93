#!/usr/bin/env bash
# e2e: Python plugins (python:FILE.py and python:MODULE) through the embedded-CPython bridge.
# The torch reference plugin (plain torch ops) generates latents byte-identical to the
# provider's (same torch build in one process); resume-check passes; ablate of its run is the
# run's own spec; a Python exception is exit 2 with its traceback; a module without GROUPS is
# refused; a changed Python source does not continue a run. Skips (77), saying why, where the
# build has no Python plugins (no Python with the same torch as LibTorch).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

plugin_dir=$H3P_SOURCE_DIR/kernels/plugins/python_torch
cp "$plugin_dir/torch_plugin.py" ref_plugin.py
status=0
probe=$("$H3P_CLI" plugin-contract --impl python:ref_plugin.py 2>&1) || status=$?
if [[ $status != 0 ]]; then
  grep -q "this build has no Python plugins" <<<"$probe" || fail "probe: $probe"
  echo "skipped: $probe"
  exit 77
fi
grep -q '"name": "torch-reference"' <<<"$probe" || fail "probe: $probe"

sed -e 's/"sampling_steps": 50/"sampling_steps": 10/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
gen() { "$H3P_CLI" --progress none generate --contract c.json --seed 43 --runs "$1" --impl "$2"; }

gen R provider >/dev/null
gen R python:ref_plugin.py >/dev/null
cmp R/demo/provider/seed-43/latents.safetensors R/demo/python@ref_plugin.py/seed-43/latents.safetensors ||
  fail "the torch reference plugin's latents differ from the provider's"
python3 - R/demo/python@ref_plugin.py/seed-43/manifest.json "$PWD/ref_plugin.py" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["plugin"]
assert p["kind"] == "python" and p["argument"] == sys.argv[2], p
assert list(p["sources"]) == [sys.argv[2]], p["sources"]
PY
"$H3P_CLI" --progress none ablate --candidate R/demo/python@ref_plugin.py/seed-43 \
  --provider R/demo/provider/seed-43 --step 0 --json abl.json >/dev/null
python3 - abl.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert rows[1]["impl_spec"] == "python:ref_plugin.py", rows[1]
assert all(r["video"]["bitwise_equal"] for r in rows), [(r["impl_spec"], r["video"]["rel_l2"]) for r in rows]
PY
"$H3P_CLI" --progress none resume-check --contract c.json --impl python:ref_plugin.py --seed 43 \
  --runs RC --preempt-every 4 > rc.txt || fail "resume-check exited $?: $(cat rc.txt)"

# A module name on PYTHONPATH.
mkdir -p mods && cp "$plugin_dir/torch_plugin.py" mods/team_kernels.py
PYTHONPATH=$PWD/mods gen M python:team_kernels >/dev/null
cmp R/demo/provider/seed-43/latents.safetensors M/demo/python@team_kernels/seed-43/latents.safetensors ||
  fail "python:MODULE latents differ"

# A Python exception: exit 2, the traceback in the message, no step written.
cat > broken.py <<'PY'
GROUPS = ["attention"]
def attention(q, k, v, out):
    raise ValueError("kernel exploded on shape %s" % (tuple(q.shape),))
PY
expect_exit 2 "$H3P_CLI" --progress none generate --contract c.json --seed 43 --runs B \
  --impl python:broken.py:rest=provider
grep -q "ValueError: kernel exploded on shape" <<<"$LAST_ERR" || fail "no exception text: $LAST_ERR"
grep -q "Traceback" <<<"$LAST_ERR" || fail "no traceback: $LAST_ERR"
grep -q "group 'attention': attention" <<<"$LAST_ERR" || fail "no group named: $LAST_ERR"
[[ -z $(find B -path "*/steps/*" -type f) ]] || fail "a failing Python plugin left steps"
printf 'def attention(q, k, v, out):\n    out.copy_(q)\n' > nogroups.py
expect_exit 2 "$H3P_CLI" --progress none generate --contract c.json --seed 43 --runs B --impl python:nogroups.py
grep -q "GROUPS" <<<"$LAST_ERR" || fail "module without GROUPS: $LAST_ERR"
expect_exit 2 "$H3P_CLI" --progress none generate --contract c.json --seed 43 --runs B --impl python:missing.py
grep -q "not found" <<<"$LAST_ERR" || fail "missing file: $LAST_ERR"

# A changed source does not continue the run.
echo "# tuned" >> ref_plugin.py
expect_exit 2 "$H3P_CLI" --progress none generate --contract c.json --seed 43 --runs R --impl python:ref_plugin.py
grep -q "field 'plugin.sources" <<<"$LAST_ERR" || fail "changed source: $LAST_ERR"
echo "python plugins: all checks passed"
