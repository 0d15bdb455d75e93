# Shared helpers of the Xvfb scripts in tests/ui (sourced after `set -euo pipefail`).
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

# Exits 77 (skipped) unless xvfb-run is installed.
require_xvfb() {
  command -v xvfb-run >/dev/null && return 0
  echo "skip: xvfb-run not installed (scripts/install-deps.sh --tests)"
  exit 77
}

# Makes a temporary directory $work, removed on exit, and enters it.
enter_work_dir() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cd "$work"
}

# Runs a command (the studio or its benchmark) in a real window under a fresh Xvfb server of
# 1920x1080 (the offscreen platform of the environment dropped, no GL integration).
in_xvfb() {
  env -u QT_QPA_PLATFORM QT_XCB_GL_INTEGRATION=none xvfb-run -a -s '-screen 0 1920x1080x24' "$@"
}

# Fails unless FILE was written and is an image of at least WIDTH x HEIGHT of real content.
check_screenshot() {  # check_screenshot FILE WIDTH HEIGHT
  test -s "$1" || fail "no screenshot written: $1"
  "$H3P_PNG_CHECK" "$1" "$2" "$3" || fail "$1 looks blank"
}
