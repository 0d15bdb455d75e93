#!/usr/bin/env bash
# e2e: h3parity-studio --view review renders the first seed's candidate/provider pair of a demo
# runs directory under a real X server (Xvfb) into a non-blank PNG, and refuses a runs
# directory without such a pair (exit 2).
# env: H3P_CLI, H3P_STUDIO, H3P_PNG_CHECK. Exit 77 = skipped.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_xvfb
enter_work_dir

# The demo with 4 sampling steps: the same runs layout in a fraction of the time.
sed -e 's/"sampling_steps": 50/"sampling_steps": 4/' "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
"$H3P_CLI" --progress none demo --contract c.json --runs R >/dev/null

in_xvfb "$H3P_STUDIO" --screenshot review.png --view review R
check_screenshot review.png 1280 720

mkdir -p empty
status=0
in_xvfb "$H3P_STUDIO" --screenshot none.png --view review empty 2>err.txt || status=$?
[[ $status == 2 ]] || { echo "FAIL: a runs directory without a pair exited $status, want 2"; exit 1; }
grep -q "no seed with decoded candidate and provider runs" err.txt || { cat err.txt; echo "FAIL: message"; exit 1; }
[[ ! -e none.png ]] || { echo "FAIL: wrote a screenshot without a pair"; exit 1; }
echo "review screenshot: ok"
