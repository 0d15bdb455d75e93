#!/usr/bin/env bash
# e2e: adopt. A run bound to this binary is accepted as it is. A run "made by an older binary"
# (simulated: its manifest lacks one model-path file this binary has, with the chain of sidecars
# consistent, as that binary would have written it) is refused by generate, re-bound by adopt
# (manifest identity and sidecar chain re-written), then resumed to the end byte-identical in
# every call file and the latents to an uninterrupted run. A run whose recorded model file
# differs from this binary's is refused with the file named, and left untouched.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 14/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
gen() { "$H3P_CLI" --progress none generate --contract c.json --impl provider --seed 42 "$@"; }
run=demo/provider/seed-42

# The reference, and a partial run stopped at a safe point by SIGTERM (exit 3).
gen --runs ref >/dev/null
mkdir -p part && cp -r ref/models part/
"$H3P_CLI" --progress none generate --contract c.json --impl provider --seed 42 --runs part \
  >/dev/null 2>&1 &
pid=$!
until [[ -f part/$run/steps/004.json ]] || ! kill -0 $pid 2>/dev/null; do sleep 0.002; done
kill -TERM $pid 2>/dev/null || true
status=0; wait $pid || status=$?
[[ $status == 3 ]] || fail "SIGTERM exit $status, want 3"
saved=$(ls part/$run/steps/*.json | wc -l)
echo "partial run: $saved saved steps"

# 1. Bound to this binary already: accepted, nothing written.
before=$(tree_digest ref/$run)
out=$("$H3P_CLI" adopt ref/$run) || fail "adopt of a bound run exited $?"
grep -q "already bound" <<<"$out" || fail "unexpected: $out"
[[ $(tree_digest ref/$run) == "$before" ]] || fail "adopt changed a bound run"

# Rewrites a run as an older binary would have written it. $1 run dir, $2 mode:
#   drop   the binary lacked one model-path file (a file added since)
#   change one recorded model-path file had other bytes
make_old() {
  python3 - "$1" "$2" <<'PY'
import hashlib, json, os, re, sys
run, mode = sys.argv[1], sys.argv[2]
mpath = os.path.join(run, "manifest.json")
text = open(mpath).read()
m = json.loads(text)
files = m["identity"]["source_files"]
names = sorted(files)
if mode == "drop":
    victim = [n for n in names if n.startswith("core/sampling/")][0]
    line = re.search(r'\n *"%s": "[0-9a-f]{64}",' % re.escape(victim), text)
    text = text[:line.start()] + text[line.end():]
    del files[victim]
else:
    victim = "core/model/transformer.cpp"
    text = text.replace('"%s": "%s"' % (victim, files[victim]), '"%s": "%s"' % (victim, "0" * 64))
    files[victim] = "0" * 64
digest = hashlib.sha256("".join("%s %s\n" % (k, files[k]) for k in sorted(files)).encode()).hexdigest()
text = text.replace(m["identity"]["sources_digest"], digest)
open(mpath, "w").write(text)
prev = hashlib.sha256(text.encode()).hexdigest()
i = 0
while os.path.exists(os.path.join(run, "steps", "%03d.json" % i)):
    p = os.path.join(run, "steps", "%03d.json" % i)
    s = open(p).read()
    old = json.loads(s)["previous_digest"]
    s = s.replace('"previous_digest": "%s"' % old, '"previous_digest": "%s"' % prev)
    open(p, "w").write(s)
    prev = hashlib.sha256(s.encode()).hexdigest()
    i += 1
print(victim)
PY
}

# 2. An older binary's partial run: refused by generate, re-bound by adopt, then resumed.
cp -r part old
victim=$(make_old old/$run drop)
expect_exit 2 gen --runs old
grep -q "$victim" <<<"$LAST_ERR" || fail "generate did not name $victim: $LAST_ERR"
out=$("$H3P_CLI" adopt old/$run --dry-run) || fail "adopt --dry-run exited $?"
grep -q "would re-bind" <<<"$out" || fail "dry run: $out"
out=$("$H3P_CLI" adopt old/$run) || fail "adopt exited $?"
echo "$out"
grep -q "re-bound" <<<"$out" && grep -q "new: $victim" <<<"$out" || fail "adopt output: $out"
[[ ! -e old/$run/.adopt-journal.json ]] || fail "journal left behind"
out=$(gen --runs old --verify-last-step) || fail "resume after adopt exited $?"
grep -q "$saved replayed" <<<"$out" && grep -q "verified bitwise" <<<"$out" \
  || fail "resume after adopt: $out"
# Every call file, its inputs and the latents are the uninterrupted run's.
diff <(tree_digest ref/$run | grep -v -e manifest.json -e 'steps/.*\.json') \
     <(tree_digest old/$run | grep -v -e manifest.json -e 'steps/.*\.json') \
  || fail "adopted and resumed run differs from the uninterrupted one"
python3 - old/$run/manifest.json "$victim" <<'PY' || fail "manifest does not record the adoption"
import json, sys
m = json.load(open(sys.argv[1]))
assert sys.argv[2] in m["environment"]["adopted"]["added_files"], m["environment"]
PY
out=$("$H3P_CLI" adopt old/$run) || fail "second adopt exited $?"
grep -q "already bound" <<<"$out" || fail "second adopt: $out"

# 3. A recorded model file with other bytes: refused, the file named, nothing written.
cp -r part changed
victim=$(make_old changed/$run change)
before=$(tree_digest changed/$run)
expect_exit 1 "$H3P_CLI" adopt changed/$run
grep -q "identity.source_files\['$victim'\]" <<<"$LAST_ERR" || fail "refusal did not name $victim: $LAST_ERR"
echo "refused: $LAST_ERR"
[[ $(tree_digest changed/$run) == "$before" ]] || fail "a refused adopt changed the run"

echo "ok: adopt accepts a bound run, re-binds an older binary's run (resumed byte-identical), refuses a changed model file"
