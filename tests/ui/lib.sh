# Shared helpers of the Xvfb scripts in tests/ui (sourced after `set -euo pipefail`).
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

# Exits 77 (skipped) unless Xvfb is installed.
require_xvfb() {
  command -v Xvfb >/dev/null && return 0
  echo "skip: Xvfb not installed (scripts/install-deps.sh --tests)"
  exit 77
}

# Makes a temporary directory $work, removed on exit, and enters it.
enter_work_dir() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cd "$work"
}

# Runs a command (the studio or its benchmark) in a real window under a fresh Xvfb server of
# 1920x1080 (the offscreen platform of the environment dropped, no GL integration) and returns
# the command's own exit status. The server picks a free display itself (-displayfd), so tests
# running side by side never race for one, and nothing but the server is started or cleaned up
# (xvfb-run's cleanup could replace the command's status with its own).
in_xvfb() {
  local display_file xvfb_pid status=0
  display_file=$(mktemp)
  Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp 3>"$display_file" 2>/dev/null &
  xvfb_pid=$!
  for _ in $(seq 100); do
    [[ -s $display_file ]] && break
    kill -0 "$xvfb_pid" 2>/dev/null || { rm -f "$display_file"; fail "Xvfb did not start"; }
    sleep 0.1
  done
  [[ -s $display_file ]] || { kill "$xvfb_pid"; rm -f "$display_file"; fail "Xvfb gave no display in 10 s"; }
  env -u QT_QPA_PLATFORM -u XAUTHORITY DISPLAY=":$(tr -d '[:space:]' < "$display_file")" \
    QT_XCB_GL_INTEGRATION=none "$@" || status=$?
  kill "$xvfb_pid" 2>/dev/null || true
  wait "$xvfb_pid" 2>/dev/null || true
  rm -f "$display_file"
  return "$status"
}

# Fails unless FILE was written and is an image of at least WIDTH x HEIGHT of real content.
check_screenshot() {  # check_screenshot FILE WIDTH HEIGHT
  test -s "$1" || fail "no screenshot written: $1"
  "$H3P_PNG_CHECK" "$1" "$2" "$3" || fail "$1 looks blank"
}
