#!/usr/bin/env bash
# e2e: from real runs (a short demo contract: provider and candidate of one seed, `report`,
# an ablation sweep and the teacher-forced drift), h3parity-studio renders the summary, plots
# and ablation views under a real X server (Xvfb) into PNGs that are not blank, and the plots
# with data differ from the plots of an empty runs directory. Then the jobs test drives the
# real CLI as a job and parses its JSON progress.
# env: H3P_CLI, H3P_STUDIO, H3P_PNG_CHECK, H3P_JOBS_TEST, H3P_SOURCE_DIR;
#      H3P_SCREENSHOT_DIR (optional) keeps the PNGs there. Exit 77 = skipped.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_xvfb

enter_work_dir

# Step 1: runs, comparisons, an ablation sweep and the drift curves.
sed -e 's/"sampling_steps": 50/"sampling_steps": 6/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
for impl in provider candidate; do
  "$H3P_CLI" --progress none generate --contract c.json --impl $impl --seed 42 --runs R >/dev/null \
    || fail "generate $impl exited $?"
done
"$H3P_CLI" --progress none report R >/dev/null || fail "report exited $?"
P=R/demo/provider/seed-42
C=R/demo/candidate/seed-42
"$H3P_CLI" --progress none ablate --provider $P --candidate $C --step 2 \
  --json R/demo/ablation-seed-42-step2.json >/dev/null || fail "ablate exited $?"
"$H3P_CLI" --progress none ablate --provider $P --candidate $C --all-steps \
  --json R/demo/drift-seed-42.json >/dev/null || fail "ablate --all-steps exited $?"
mkdir empty

# Step 2: one screenshot per view under Xvfb.
shoot() {  # shoot VIEW RUNS OUT
  in_xvfb "$H3P_STUDIO" --screenshot "$3" --view "$1" "$2" || fail "studio --view $1 exited $?"
  test -s "$3" || fail "no screenshot written for --view $1"
}
for view in summary plots ablation; do
  shoot $view R "$view.png"
  "$H3P_PNG_CHECK" "$view.png" 1280 800 || fail "$view.png looks blank"
done
shoot plots empty plots-empty.png
cmp -s plots.png plots-empty.png && fail "the plots view shows nothing of the runs"

if [[ -n "${H3P_SCREENSHOT_DIR:-}" ]]; then
  mkdir -p "$H3P_SCREENSHOT_DIR"
  cp summary.png plots.png ablation.png "$H3P_SCREENSHOT_DIR/"
fi

# Step 3: the real CLI as a job (progress lines parsed, exit code, result file).
H3P_JOBS_RUNS="$work/R" QT_QPA_PLATFORM=offscreen "$H3P_JOBS_TEST" realCliRunsAsJob \
  || fail "the jobs test against the real CLI failed"
echo "ok"
