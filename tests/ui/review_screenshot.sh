#!/usr/bin/env bash
# e2e: h3parity-studio --view review renders the first seed's candidate/provider pair of a demo
# runs directory under a real X server (Xvfb) into a non-blank PNG, and refuses a runs
# directory without such a pair (exit 2).
# env: H3P_CLI, H3P_STUDIO, H3P_PNG_CHECK. Exit 77 = skipped.
set -euo pipefail

if ! command -v xvfb-run >/dev/null; then
  echo "skip: xvfb-run not installed (scripts/install-deps.sh --tests)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The demo with 4 sampling steps: the same runs layout in a fraction of the time.
sed -e 's/"sampling_steps": 50/"sampling_steps": 4/' "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
"$H3P_CLI" --progress none demo --contract c.json --runs R >/dev/null

studio() {
  env -u QT_QPA_PLATFORM QT_XCB_GL_INTEGRATION=none xvfb-run -a -s '-screen 0 1920x1080x24' \
    "$H3P_STUDIO" "$@"
}
studio --screenshot review.png --view review R
test -s review.png || { echo "FAIL: no screenshot written"; exit 1; }
"$H3P_PNG_CHECK" review.png 1280 720

mkdir -p empty
status=0
studio --screenshot none.png --view review empty 2>err.txt || status=$?
[[ $status == 2 ]] || { echo "FAIL: a runs directory without a pair exited $status, want 2"; exit 1; }
grep -q "no seed with decoded candidate and provider runs" err.txt || { cat err.txt; echo "FAIL: message"; exit 1; }
[[ ! -e none.png ]] || { echo "FAIL: wrote a screenshot without a pair"; exit 1; }
echo "review screenshot: ok"
