#!/usr/bin/env bash
# e2e: a resume under another numerics environment. The demo contract's seed 42 is generated
# once; a copy keeps its first 30 of 49 steps (what a preempted run leaves) and is resumed with
# OpenBLAS forced onto another core type:
#   provider: the spot check finds a difference -> exit 2 naming the changed fields, nothing
#             written; --accept-new-numerics continues as an "accepted" segment (mixed run),
#             which the sidecars, segments.json, compare and report say;
#   candidate: its kernels do not use OpenBLAS -> the check passes and the run continues as a
#             "verified" segment, byte-identical to the uninterrupted run; another kernel ISA
#             (H3P_KERNELS_ISA) does change its numerics and is refused.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

contract=$H3P_SOURCE_DIR/resources/contracts/demo.json
gen() { "$H3P_CLI" --progress none generate --contract "$contract" --seed 42 "$@"; }
# The numerics field $2 (dotted) from the "numerics environment:" line in $1.
numerics_field() {
  sed -n 's/^numerics environment: //p' <<<"$1" | head -1 |
    /usr/bin/python3 -c 'import json,sys; v=json.load(sys.stdin)
for k in sys.argv[1].split("."): v=v.get(k, "") if isinstance(v, dict) else ""
print(v)' "$2"
}
# A copy of run $1 (under runs dir $2) holding only its first 30 steps.
cut_run() {
  local from=$1 to=$2 impl=$3
  rm -rf "$to"; cp -r "$from" "$to"
  local run=$to/demo/$impl/seed-42
  for i in $(seq 30 48); do rm -f "$run/steps/0$i.safetensors" "$run/steps/0$i.json"; done
  rm -rf "$run/latents.safetensors" "$run/decoded"
}
outputs_digest() {  # call files and latents (or decoded outputs, with $2 = decoded)
  (cd "$1" && find ${2:-steps latents.safetensors} -type f \
     ! -path 'steps/*.json' -print0 | sort -z | xargs -0 sha256sum)
}

# --- The provider -------------------------------------------------------------------------
out=$(gen --runs ref) || fail "uninterrupted generate exited $?"
grep -q '^numerics environment: {' <<<"$out" || fail "generate did not print its numerics: $out"
core=$(numerics_field "$out" cpu.openblas_core)
[[ -n $core ]] || { echo "SKIP: this LibTorch does not run on OpenBLAS"; exit 77; }
# Another core type whose kernels differ from the detected one (Zen runs Haswell's kernels).
case $core in Haswell|Zen) other=Sandybridge ;; *) other=Haswell ;; esac
echo "OpenBLAS core $core; resuming on $other"
ref_run=ref/demo/provider/seed-42
grep -q '"numerics": {' "$ref_run/manifest.json" || fail "manifest lacks environment.numerics"
grep -q "\"openblas_core\": \"$core\"" "$ref_run/manifest.json" || fail "manifest lacks the core"
[[ ! -e $ref_run/segments.json ]] || fail "a run made in one environment has segments.json"

cut_run ref cut provider
run=cut/demo/provider/seed-42
before=$(tree_digest "$run")
expect_exit 2 env OPENBLAS_CORETYPE=$other "$H3P_CLI" --progress none generate \
  --contract "$contract" --seed 42 --runs cut
for want in "cpu.openblas_core" "env.OPENBLAS_CORETYPE" "\"$other\"" "manifest.json" \
            "recomputing step" "accept-new-numerics"; do
  grep -qF -- "$want" <<<"$LAST_ERR" || fail "refusal does not name '$want': $LAST_ERR"
done
grep -qE "different '(sample|audio_sample)'" <<<"$LAST_ERR" || fail "no output named: $LAST_ERR"
[[ "$(tree_digest "$run")" == "$before" ]] || fail "the refused resume changed the run"

out=$(OPENBLAS_CORETYPE=$other gen --runs cut --accept-new-numerics) ||
  fail "--accept-new-numerics exited $?"
grep -q "30 replayed from disk, 19 computed" <<<"$out" || fail "unexpected resume: $out"
grep -q "segment 1 (accepted)" <<<"$out" || fail "resume did not report the segment: $out"
grep -q "the run is mixed" <<<"$out" || fail "resume did not say mixed: $out"
grep -q '"check": "accepted"' "$run/segments.json" || fail "segments.json: $(cat "$run/segments.json")"
grep -q '"first_step": 30' "$run/segments.json" || fail "segment 1 does not start at 30"
grep -q '"segment": 0' "$run/steps/029.json" || fail "step 29's sidecar does not name segment 0"
grep -q '"segment": 1' "$run/steps/030.json" || fail "step 30's sidecar does not name segment 1"
grep -q '"segment": 1' "$run/steps/048.json" || fail "step 48's sidecar does not name segment 1"
# The same environment again: nothing to check, nothing computed, nothing changed.
after=$(tree_digest "$run")
out=$(OPENBLAS_CORETYPE=$other gen --runs cut) || fail "replaying the mixed run exited $?"
grep -q "0 computed" <<<"$out" || fail "replay recomputed: $out"
[[ "$(tree_digest "$run")" == "$after" ]] || fail "replaying the mixed run changed files"

# compare and report say the run is mixed, and which steps were computed where.
compare_runs() {  # candidate provider out: exit 0 or 1 (bounds) only
  local status=0
  "$H3P_CLI" --progress none compare --candidate "$1" --provider "$2" --json "$3.json" \
    >"$3.txt" 2>&1 || status=$?
  [[ $status == 0 || $status == 1 ]] || fail "compare exited $status: $(cat "$3.txt")"
}
compare_runs "$run" "$ref_run" cmp
grep -q "candidate run is mixed" cmp.txt || fail "compare does not say the run is mixed: $(cat cmp.txt)"
grep -q "steps 30-48: segment 1 (accepted" cmp.txt || fail "compare lacks the segments: $(cat cmp.txt)"
/usr/bin/python3 - cmp.json <<'PY' || fail "compare JSON does not mark the run mixed"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["candidate"] if "candidate" in r else r["comparisons"][0]["candidate"]
assert c["mixed"] is True and c["numerics_segments"] == 2, c
assert "steps 0-29: segment 0" in c["segments"], c
PY
report_out=$("$H3P_CLI" --progress none report cut --out rep 2>&1) || [[ $? == 1 ]] ||
  fail "report exited unexpectedly: $report_out"
grep -rq "mixed" rep || fail "the report does not say the run is mixed: $(ls rep)"

# A segments.json that disagrees with the sidecars is refused, naming the field.
cp -r cut tampered
sed -i 's/"first_step": 30/"first_step": 31/' tampered/demo/provider/seed-42/segments.json
expect_exit 2 env OPENBLAS_CORETYPE=$other "$H3P_CLI" --progress none generate \
  --contract "$contract" --seed 42 --runs tampered
grep -qF "030.json: field 'segment'" <<<"$LAST_ERR" || fail "tampered segments: $LAST_ERR"

# --- The built-in candidate ---------------------------------------------------------------
gen --runs cref --impl candidate >/dev/null || fail "candidate generate exited $?"
cref_run=cref/demo/candidate/seed-42
cut_run cref ccut candidate
crun=ccut/demo/candidate/seed-42
out=$(OPENBLAS_CORETYPE=$other gen --runs ccut --impl candidate) ||
  fail "candidate resume on another OpenBLAS core exited $?"
grep -q "segment 1 (verified)" <<<"$out" || fail "candidate resume was not verified: $out"
grep -q "recomputed steps 0, 29 bitwise equal" <<<"$out" || fail "spot check not reported: $out"
[[ "$(outputs_digest "$crun")" == "$(outputs_digest "$cref_run")" ]] ||
  fail "the verified continuation differs from the uninterrupted run"
# The decoders run on the provider's ATen ops in the process that finishes the run: decoded
# again in the original environment, the outputs are the uninterrupted run's too.
rm -rf "$crun/decoded"
gen --runs ccut --impl candidate >/dev/null || fail "decoding again exited $?"
[[ "$(outputs_digest "$crun" decoded)" == "$(outputs_digest "$cref_run" decoded)" ]] ||
  fail "decoded outputs differ from the uninterrupted run's"
grep -q '"check": "verified"' "$crun/segments.json" || fail "segments.json: $(cat "$crun/segments.json")"
compare_runs "$crun" "$cref_run" ccmp
grep -q "verified: steps 0-29: segment 0" ccmp.txt || fail "compare lacks the verified segments: $(cat ccmp.txt)"
! grep -q "is mixed" ccmp.txt || fail "a verified segment is not mixed: $(cat ccmp.txt)"

# The candidate's own ISA path is part of its numerics: another one is caught by the check.
isa=$(numerics_field "$(gen --runs cref --impl candidate)" kernels.candidate)
if [[ $isa != "kernels/cpu isa=scalar" ]]; then
  cut_run cref ccut2 candidate
  expect_exit 2 env H3P_KERNELS_ISA=scalar "$H3P_CLI" --progress none generate \
    --contract "$contract" --seed 42 --runs ccut2 --impl candidate
  grep -qF "kernels.candidate" <<<"$LAST_ERR" || fail "ISA change not named: $LAST_ERR"
fi
echo "numerics resume: refused, accepted as mixed, and verified byte-identical"
