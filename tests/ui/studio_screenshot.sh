#!/usr/bin/env bash
# e2e: h3parity-studio renders a runs tree under a real X server (Xvfb) into a non-blank PNG.
# env: H3P_STUDIO (the executable), H3P_PNG_CHECK (the PNG checker). Exit 77 = skipped.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_xvfb

enter_work_dir

# A runs tree with two runs of one contract.
for impl in provider candidate; do
  mkdir -p "$work/runs/demo/$impl/seed-1"
  printf '{"impl_spec": "%s", "seed": 1}\n' "$impl" > "$work/runs/demo/$impl/seed-1/manifest.json"
done

in_xvfb "$H3P_STUDIO" --screenshot "$work/out.png" "$work/runs"
check_screenshot "$work/out.png" 640 480
