#!/usr/bin/env bash
# e2e: a flipped byte or a truncation in a step file or sidecar, a run of another model
# identity, and a changed contract are refused (exit 2) with a message naming the file, and
# nothing already written is overwritten.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

src=$H3P_SOURCE_DIR/resources/contracts/demo.json
# A shorter contract keeps this test quick: same model, 10 grid points.
sed -e 's/"sampling_steps": 50/"sampling_steps": 10/' "$src" > short.json
gen() { "$H3P_CLI" --progress none generate --contract "$1" --impl provider --seed 43 --runs runs; }
run=runs/demo/provider/seed-43
gen short.json >/dev/null || fail "generate exited $?"
good=$(tree_digest $run)
cp -r $run pristine

restore() { rm -rf $run; cp -r pristine $run; }
check_refused() {  # label, needle in message
  expect_exit 2 gen short.json
  grep -q -- "$2" <<<"$LAST_ERR" || fail "$1: message does not name $2: $LAST_ERR"
  echo "refused ($1): $LAST_ERR"
}
check_untouched() {  # the damaged tree is left exactly as it was
  [[ "$(tree_digest $run)" == "$1" ]] || fail "refusal modified the run"
}

# 1. A flipped byte in a step file.
printf '\x5a' | dd of=$run/steps/004.safetensors bs=1 seek=200 conv=notrunc status=none
damaged=$(tree_digest $run)
check_refused "flipped byte in step file" "steps/004.safetensors"
check_untouched "$damaged"; restore

# 2. A truncated step file.
truncate -s -7 $run/steps/006.safetensors
damaged=$(tree_digest $run)
check_refused "truncated step file" "steps/006.safetensors"
check_untouched "$damaged"; restore

# 3. A flipped byte in a sidecar (inside a digest).
python3 - "$run/steps/002.json" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read())
i = b.index(b'"file_digest"') + 20
b[i] = ord('0') if b[i] != ord('0') else ord('1')
open(p, 'wb').write(bytes(b))
PY
damaged=$(tree_digest $run)
check_refused "flipped byte in sidecar" "steps/00[23]"
check_untouched "$damaged"; restore

# 4. A truncated sidecar.
truncate -s 10 $run/steps/005.json
damaged=$(tree_digest $run)
check_refused "truncated sidecar" "steps/005.json"
check_untouched "$damaged"; restore

# 5. A changed contract (another bound) is refused against the manifest.
sed -e 's/"psnr_db_min": 30/"psnr_db_min": 31/' short.json > changed.json
damaged=$(tree_digest $run)
expect_exit 2 gen changed.json; grep -q "manifest.json" <<<"$LAST_ERR" || fail "changed contract: $LAST_ERR"; echo "refused (changed contract): $LAST_ERR"
check_untouched "$damaged"

# 6. Another model identity: the model's weights changed under the run.
w=runs/models/tiny/transformer/diffusion_pytorch_model.safetensors
printf '\x11' | dd of=$w bs=1 seek=$(( $(stat -c %s $w) - 3 )) conv=notrunc status=none
check_refused "another model identity" "manifest.json"
check_untouched "$damaged"

[[ "$(tree_digest pristine)" == "$good" ]] || fail "pristine copy changed"
echo "ok: corrupt, truncated, foreign and changed-contract runs refused, nothing overwritten"
