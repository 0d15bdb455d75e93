#!/usr/bin/env bash
# e2e: `h3parity call` replays call files written by diffusers: fp32 within 1e-5 relative L2,
# the mixed-precision checkpoint within 2e-2; a stricter bound fails with exit 1; a call file
# with a missing input is bad input (exit 2).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
g=$H3P_SOURCE_DIR/tests/data/golden

for call in fp32-A-step0 fp32-A-step30 fp32-B-step0; do
  "$H3P_CLI" call --model $g/tiny-fp32 --inputs $g/calls/$call.safetensors --impl provider \
    --out $call.out.safetensors --max-rel-l2 1e-5 || fail "$call exited $?"
done
for call in mixed-A-step0 mixed-B-step30 mixed-A-step0-cuda mixed-B-step30-cuda; do
  "$H3P_CLI" call --model $g/tiny-mixed/transformer --inputs $g/calls/$call.safetensors \
    --impl provider --out $call.out.safetensors --max-rel-l2 2e-2 || fail "$call exited $?"
done
# The written file is itself a call file: replaying it is bitwise equal.
"$H3P_CLI" call --model $g/tiny-fp32 --inputs fp32-A-step0.out.safetensors \
  --out again.safetensors --require-bitwise >/dev/null || fail "replay of own output not bitwise"
# A bound the fp32 model cannot meet on the mixed call fails the check.
expect_exit 1 "$H3P_CLI" call --model $g/tiny-fp32 --inputs $g/calls/mixed-A-step0.safetensors \
  --out x.safetensors --max-rel-l2 1e-5
# A truncated call file is bad input naming the file.
head -c 1000 $g/calls/fp32-A-step0.safetensors > truncated.safetensors
expect_exit 2 "$H3P_CLI" call --model $g/tiny-fp32 --inputs truncated.safetensors --out y.safetensors
grep -q truncated.safetensors <<<"$LAST_ERR" || fail "message does not name the file: $LAST_ERR"
expect_exit 2 "$H3P_CLI" call --model $g/tiny-fp32 --inputs $g/calls/fp32-A-step0.safetensors \
  --out z.safetensors --device cuda:7
echo "ok: diffusers call files replayed within bounds"
