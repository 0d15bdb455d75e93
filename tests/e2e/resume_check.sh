#!/usr/bin/env bash
# e2e: resume-check on the demo contract (fewer grid points): uninterrupted, preempted once,
# preempted repeatedly, nothing left to compute, --verify-last-step and a resume under a changed
# numerics environment all pass, every file of every scenario is listed and byte-identical
# (sidecars and segments.json of the changed-environment scenario are checked by content), and the listed digests are the files' own
# (recomputed here independently); bad input is exit 2 and leaves the earlier check in place.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 16/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
out=$("$H3P_CLI" --progress none resume-check --contract c.json --seed-index 1 --runs R \
      --preempt-every 4 --json check.json 2>log) || fail "resume-check exited $?: $out"
echo "$out" | tail -8
python3 - check.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["passed"] and r["num_calls"] == 15, r["num_calls"]
names = [s["name"] for s in r["scenarios"]]
assert names == ["uninterrupted", "preempted-once", "preempted-repeatedly", "nothing-left",
                 "verify-last-step", "changed-environment"], names
ref = {f["path"] for f in r["scenarios"][0]["files"]}
# 15 calls + sidecars, manifest, contract, 2 inputs, latents, 4 decoded files
assert len(ref) == 2 * 15 + 9, sorted(ref)
assert {"decoded/frames.rgb", "decoded/audio.safetensors", "contract.json"} <= ref, sorted(ref)
changed = r["scenarios"][5]
outputs = {p for p in ref if not (p.startswith("steps/") and p.endswith(".json"))}
assert {f["path"] for f in changed["files"]} == outputs, sorted(f["path"] for f in changed["files"])
assert "numerics verified" in changed["invocations"][1], changed["invocations"]
assert "env.ATEN_CPU_CAPABILITY" in changed["invocations"][1], changed["invocations"]
for s in r["scenarios"]:
    assert s["passed"], (s["name"], s["problem"])
    if s is not changed:
        assert {f["path"] for f in s["files"]} == ref, s["name"]
    assert all(f["identical"] and f["sha256"] == f["reference_sha256"] for f in s["files"])
rep = r["scenarios"][2]["invocations"]
assert len(rep) == 4 and all("stopped" in i for i in rep[:-1]) and "finished" in rep[-1], rep
assert "verified bitwise" in r["scenarios"][4]["invocations"][1]
PY
# The listed digests are the files' own: recompute them for one scenario.
scratch=R/resume-check/demo@provider@seed-43
diff <(python3 -c 'import json,sys; [print(f["sha256"], "./" + f["path"]) for f in json.load(open("check.json"))["scenarios"][2]["files"]]') \
     <(tree_digest $scratch/preempted-repeatedly/demo/provider/seed-43 | sed 's/  / /') \
  || fail "listed digests are not the files'"
# Bad input (a seed index the contract lacks) is exit 2 and leaves the earlier check in place.
expect_exit 2 "$H3P_CLI" resume-check --contract c.json --seed-index 9 --runs R
[[ -d $scratch ]] || fail "a refused check removed the earlier scratch directory"
echo "ok: resume-check passes and lists every compared file"
