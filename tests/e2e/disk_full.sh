#!/usr/bin/env bash
# e2e: generation into a full disk. The run directory sits on a tmpfs too small for the run
# (mounted by this test in a private mount namespace). generate must fail with exit 2 and an
# error naming the file it could not write and "No space left on device", leave no partial
# file behind, keep every completed step verifiable, and once the tmpfs is enlarged resume to
# files byte-identical to a run on an ordinary disk. Skips (77) where no tmpfs can be mounted.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Re-run inside a private mount namespace (as root, or as a mapped root in a user namespace),
# so the mount cannot outlive the test.
if [[ ${H3P_DISK_FULL_NS:-0} != 1 ]]; then
  for ns in "unshare --mount --propagation private" \
            "unshare --user --map-root-user --mount --propagation private"; do
    if $ns true 2>/dev/null; then
      H3P_DISK_FULL_NS=1 exec $ns bash "${BASH_SOURCE[0]}" "$@"
    fi
  done
  echo "skip: cannot create a mount namespace here"
  exit 77
fi

sed -e 's/"sampling_steps": 50/"sampling_steps": 8/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
gen() { "$H3P_CLI" --progress none generate --contract c.json --impl provider --seed 42 "$@"; }
run=demo/provider/seed-42

# The reference on an ordinary disk; its materialised model is shared with the small disk.
gen --runs ref >/dev/null || fail "reference generate exited $?"
calls=$(ls ref/$run/steps/*.json | wc -l)

# A tmpfs that holds the inputs and about two of the $calls call files.
mkdir small
mount -t tmpfs -o size=1400k tmpfs small 2>/dev/null || { echo "skip: cannot mount a tmpfs"; exit 77; }
mkdir small/models
ln -s "$PWD/ref/models/tiny" small/models/tiny

expect_exit 2 gen --runs small
echo "full disk: $LAST_ERR"
grep -q "No space left on device" <<<"$LAST_ERR" || fail "message does not say the disk is full"
grep -Eq "small/$run/[^ ]+: " <<<"$LAST_ERR" || fail "message does not name the file"
saved=$(ls small/$run/steps/*.json 2>/dev/null | wc -l)
(( saved > 0 && saved < calls )) || fail "the disk filled after $saved of $calls steps, want mid-run"
leftovers=$(find small/$run -name '*.tmp*' -o -name '.*.tmp*' | wc -l)
[[ $leftovers == 0 ]] || fail "partial files left behind: $(find small/$run -name '*tmp*')"
# Every completed step is the reference's step, byte for byte.
for sidecar in small/$run/steps/*.json; do
  step=$(basename "$sidecar" .json)
  cmp -s "$sidecar" "ref/$run/steps/$step.json" || fail "sidecar $step differs after the failure"
  cmp -s "small/$run/steps/$step.safetensors" "ref/$run/steps/$step.safetensors" \
    || fail "call file $step differs after the failure"
done

# Free space and resume: the saved steps are verified and replayed, the rest computed.
mount -o remount,size=64m small
out=$(gen --runs small) || fail "generate after freeing space exited $?"
grep -q "$saved replayed from disk" <<<"$out" || fail "did not replay the $saved saved steps: $out"
diff <(tree_digest ref/$run) <(tree_digest small/$run) || fail "resumed run differs from the reference"

echo "ok: disk full after $saved of $calls steps, exit 2, steps kept, resumed byte-identical"
