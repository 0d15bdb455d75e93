#!/usr/bin/env bash
# e2e: h3parity-studio renders a runs tree under a real X server (Xvfb) into a non-blank PNG.
# env: H3P_STUDIO (the executable), H3P_PNG_CHECK (the PNG checker). Exit 77 = skipped.
set -euo pipefail

if ! command -v xvfb-run >/dev/null; then
  echo "skip: xvfb-run not installed (scripts/install-deps.sh --tests)"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A runs tree with two runs of one contract.
for impl in provider candidate; do
  mkdir -p "$work/runs/demo/$impl/seed-1"
  printf '{"impl_spec": "%s", "seed": 1}\n' "$impl" > "$work/runs/demo/$impl/seed-1/manifest.json"
done

env -u QT_QPA_PLATFORM QT_XCB_GL_INTEGRATION=none \
  xvfb-run -a -s '-screen 0 1920x1080x24' \
  "$H3P_STUDIO" --screenshot "$work/out.png" "$work/runs"

test -s "$work/out.png" || { echo "FAIL: no screenshot written"; exit 1; }
"$H3P_PNG_CHECK" "$work/out.png" 640 480
