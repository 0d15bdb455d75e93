#!/usr/bin/env bash
# e2e: generate the demo contract's seed 42; running again recomputes nothing; killing the
# process with SIGKILL at several steps and re-running gives byte-identical step files,
# latents and manifest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

contract=$H3P_SOURCE_DIR/resources/contracts/demo.json
gen() { "$H3P_CLI" --progress none generate --contract "$contract" --impl provider --seed 42 --runs "$1"; }
run_dir() { echo "$1/demo/provider/seed-42"; }

# The reference: one uninterrupted run.
out=$(gen ref) || fail "uninterrupted generate exited $?"
grep -q "49 computed" <<<"$out" || fail "expected 49 computed calls: $out"
ref=$(tree_digest "$(run_dir ref)")
[[ $(grep -c 'steps/.*\.safetensors' <<<"$ref") == 49 ]] || fail "expected 49 step files"

# Again: everything replayed, nothing recomputed, nothing rewritten.
out=$(gen ref) || fail "second generate exited $?"
grep -q "0 computed" <<<"$out" || fail "second run recomputed: $out"
[[ "$(tree_digest "$(run_dir ref)")" == "$ref" ]] || fail "second run changed files"

# Kill at several points (each kill continues the same run), then finish it.
cp -r ref/models . 2>/dev/null || true
for k in 1 9 24 41; do
  # Started directly (not through the gen function) so that $! is h3parity itself.
  "$H3P_CLI" --progress none generate --contract "$contract" --impl provider --seed 42 \
    --runs killed >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 20000); do
    n=$(ls "$(run_dir killed)"/steps/*.json 2>/dev/null | wc -l || true)
    [[ $n -ge $k ]] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.002
  done
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  echo "killed at $(ls "$(run_dir killed)"/steps/*.json 2>/dev/null | wc -l) saved steps (target $k)"
done
out=$(gen killed) || fail "resumed generate exited $?"
echo "$out"
leftover=$(find "$(run_dir killed)" -name '.*.tmp-*' | wc -l)
[[ $leftover == 0 ]] || fail "$leftover temporary files left after resuming"
diff <(tree_digest "$(run_dir ref)") <(tree_digest "$(run_dir killed)") \
  || fail "resumed run differs from the uninterrupted one"
echo "ok: resumed after SIGKILL at several steps; byte-identical to the uninterrupted run"
