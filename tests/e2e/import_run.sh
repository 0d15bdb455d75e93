#!/usr/bin/env bash
# e2e: `h3parity import` round trip and refusals. A provider run of the demo contract (4 grid
# points) is imported from its own steps/ as an external run: the imported steps carry the same
# input digests, the latents are byte-identical, compare finds them identical with the import on
# either side, report lists it as imported, ablate takes it as the provider side (every step,
# and step 0's table with this provider against the import). A recorded
# input tampered with (or a velocity, which moves the next step's input) is refused naming the
# step file and field, and nothing is written; so are a missing directory, a truncated file, a
# gap in the step numbering, too few files, a bad label, a foreign seed and an existing import.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
edit="$H3P_SOURCE_DIR/tests/e2e/edit_call_file.py"

sed -e 's/"sampling_steps": 50/"sampling_steps": 4/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
for impl in provider candidate; do
  "$H3P_CLI" --progress none generate --contract c.json --impl $impl --seed 42 --runs R >/dev/null \
    || fail "generate $impl exited $?"
done
P=R/demo/provider/seed-42
C=R/demo/candidate/seed-42
imp() { "$H3P_CLI" --progress none import --contract c.json --seed 42 "$@"; }

# 1. Round trip: the run's own call files, imported.
out=$(imp --calls $P/steps --runs R --label diffusers) || fail "import exited $?"
echo "$out"
I=R/demo/import@diffusers/seed-42
grep -q "imported 3 calls" <<<"$out" || fail "import did not report 3 calls: $out"
[[ -f $I/manifest.json && -f $I/latents.safetensors && -f $I/decoded/frames.json ]] \
  || fail "imported run incomplete: $(find $I)"
cmp $P/latents.safetensors $I/latents.safetensors || fail "imported latents differ"
cmp $P/inputs/noise.safetensors $I/inputs/noise.safetensors || fail "imported noise differs"
cmp $P/decoded/frames.rgb $I/decoded/frames.rgb || fail "imported decoded frames differ"
python3 - $P $I <<'PY'
import hashlib, json, os, sys
p, i = sys.argv[1:]
m = json.load(open(os.path.join(i, "manifest.json")))
assert m["impl_spec"] == "import:diffusers", m["impl_spec"]
imp = m["imported"]
assert imp["label"] == "diffusers" and imp["source"].endswith("provider/seed-42/steps"), imp
assert [f["file"] for f in imp["files"]] == ["000.safetensors", "001.safetensors", "002.safetensors"], imp
for f in imp["files"]:
    want = hashlib.sha256(open(os.path.join(p, "steps", f["file"]), "rb").read()).hexdigest()
    assert f["sha256"] == want, (f, want)
for step in range(3):
    a = json.load(open(os.path.join(p, "steps", "%03d.json" % step)))
    b = json.load(open(os.path.join(i, "steps", "%03d.json" % step)))
    assert a["input_digest"] == b["input_digest"] and b["inputs_saved"], (a, b)
PY
[[ -z $(find R/demo -name '.import-*') ]] || fail "import left its scratch directory"
# The recorder's format check accepts what the importer reads (a run's steps/ is such a directory).
python3 "$H3P_SOURCE_DIR/tools/import/record_diffusers_calls.py" --check $P/steps | grep -q ": 3 call files" \
  || fail "the recorder's --check does not accept the run's call files"

# 2. compare: identical with the import on either side.
for side in "--candidate $I --provider $P" "--candidate $P --provider $I"; do
  "$H3P_CLI" --progress none compare $side --json cmp.json >/dev/null \
    || fail "compare $side exited $?"
  python3 - cmp.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["summary"]["psnr_db"] == "inf" and r["summary"]["passed"] is True, r["summary"]
assert len(r["steps"]) == 3, r["steps"]
for row in r["steps"]:
    assert row["video_rel_l2"] == 0 and row["audio_rel_l2"] == 0, row
PY
done

# 3. report lists the imported run and compares it with the provider.
"$H3P_CLI" --progress none report R >/dev/null || fail "report exited $?"
grep -q 'demo/import@diffusers/seed-42` | demo | `import:diffusers`' R/report/report.md \
  || fail "report does not list the import: $(cat R/report/report.md)"
grep -q 'import@diffusers' R/report/SHA256SUMS || fail "report does not cite the import's files"

# 4. ablate replays the imported run's saved steps as the provider side: the teacher-forced
#    drift of every step equals the one measured against the provider run itself.
for prov in $I $P; do
  "$H3P_CLI" --progress none ablate --provider $prov --candidate $C --all-steps \
    --variants none --json abl-$(basename $(dirname $prov)).json >/dev/null \
    || fail "ablate --all-steps with provider $prov exited $?"
done
python3 - abl-import@diffusers.json abl-provider.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert len(a["steps"]) == 3 and a["steps"] == b["steps"], (a, b)
assert all(row["teacher_forced"]["video_rel_l2"] > 0 for row in a["steps"]), a
PY
# The step-0 table against the import: its first row is this binary's provider against the
# imported run (bitwise here, the import being this provider's own calls).
"$H3P_CLI" --progress none ablate --provider $I --candidate $C --step 0 --groups attention \
  --variants none --json abl-step0.json >/dev/null || fail "ablate --step 0 with the import exited $?"
python3 - abl-step0.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert rows[0]["impl_spec"] == "provider" and "import:diffusers" in rows[0]["what"], rows[0]
assert rows[0]["video"]["bitwise_equal"] and rows[0]["audio"]["bitwise_equal"], rows[0]
PY

# The published evidence says where the run came from.
"$H3P_CLI" --progress none bundle R --out B > /dev/null || fail "bundle of the runs with the import exited $?"
python3 - B/bundle.json <<'PY'
import json, sys
text = json.dumps(json.load(open(sys.argv[1])))
assert "imported (diffusers, computed elsewhere)" in text, "the bundle does not say the run was imported"
PY

# 5. Refusals: exit 2, the file and field named, nothing written.
tampered() {  # a copy of the provider's call files in $1
  rm -rf "$1"; mkdir "$1"; cp $P/steps/*.safetensors "$1/"
}
refused() {  # runs root, then the import's arguments; the import must leave no run behind
  local runs=$1; shift
  expect_exit 2 imp --runs "$runs" "$@"
  if [[ -e $runs/demo/import@bad ]]; then fail "a refused import wrote $runs/demo/import@bad"; fi
  [[ -z $(find "$runs" -name '.import-*' 2>/dev/null) ]] || fail "a refused import left a scratch directory"
}
tampered T
python3 "$edit" T/002.safetensors hidden_states
refused Fresh --calls T --label bad
[[ ! -e Fresh ]] || fail "a refused import created the runs directory: $(find Fresh)"
grep -q "T/002.safetensors: field 'hidden_states': step 2" <<<"$LAST_ERR" \
  || fail "tampered input not named: $LAST_ERR"
echo "refused: $LAST_ERR"

tampered T
python3 "$edit" T/001.safetensors sample   # step 1's velocity moves step 2's input
refused R --calls T --label bad
grep -q "T/002.safetensors: field 'hidden_states': step 2" <<<"$LAST_ERR" \
  || fail "a changed velocity is not caught at the next step's input: $LAST_ERR"

tampered T
python3 "$edit" T/000.safetensors timestep
refused R --calls T --label bad
grep -q "T/000.safetensors: field 'timestep': step 0" <<<"$LAST_ERR" || fail "$LAST_ERR"

refused R --calls no-such-dir --label bad
grep -q "no-such-dir: not a directory" <<<"$LAST_ERR" || fail "missing directory: $LAST_ERR"

tampered T
truncate -s 5000 T/001.safetensors
refused R --calls T --label bad
grep -q "T/001.safetensors" <<<"$LAST_ERR" || fail "truncated file not named: $LAST_ERR"

tampered T
rm T/001.safetensors
refused R --calls T --label bad
grep -q "T/001.safetensors: missing: the step numbering has a gap" <<<"$LAST_ERR" || fail "$LAST_ERR"

tampered T
rm T/002.safetensors
refused R --calls T --label bad
grep -q "T/002.safetensors: missing: contract 'demo' takes 3 calls" <<<"$LAST_ERR" || fail "$LAST_ERR"

tampered T
python3 "$edit" T/001.safetensors --drop audio_indices
refused R --calls T --label bad
grep -q "T/001.safetensors: missing call input 'audio_indices'" <<<"$LAST_ERR" || fail "$LAST_ERR"

refused R --calls $P/steps --label ../bad
grep -q "label" <<<"$LAST_ERR" || fail "$LAST_ERR"
expect_exit 2 imp --runs R --calls $P/steps --label diffusers
grep -q "already exists" <<<"$LAST_ERR" || fail "$LAST_ERR"
expect_exit 2 "$H3P_CLI" --progress none import --contract c.json --seed 7 --runs R \
  --calls $P/steps --label other
grep -q "not among the seeds" <<<"$LAST_ERR" || fail "$LAST_ERR"
echo "ok: import round trip identical in compare, report and ablate; tampered, truncated, missing and gapped call files refused, nothing written"
