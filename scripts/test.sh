#!/usr/bin/env bash
# Builds everything (default preset) and runs the whole test suite through CTest.
# usage: scripts/test.sh [extra ctest arguments...]
# Installs what is missing, starts the test services that are not running (PulseAudio null
# sink), stops what it started, and ends with one line: "N passed, N failed, N skipped".
# Exits with CTest's status. Works as root or as a user with sudo on Debian 12.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

scripts/install-deps.sh --tests

echo "test: configuring (preset default)"
cmake --preset default >/dev/null

start=$(date +%s)
echo "test: building with $(nproc) jobs"
build_status=0
cmake --build --preset default --parallel "$(nproc)" || build_status=$?
echo "test: build took $(( $(date +%s) - start )) s"
if [[ $build_status != 0 ]]; then
  echo "test: build failed (exit $build_status)"
  exit "$build_status"
fi

state=$root/build/default/test-services.state
scripts/start-test-services.sh "$state"
trap 'scripts/stop-test-services.sh "$state"' EXIT
# shellcheck disable=SC1090
source "$state"

log=$root/build/default/ctest.log
ctest_status=0
ctest --preset default -j2 --output-on-failure "$@" 2>&1 | tee "$log" || ctest_status=${PIPESTATUS[0]}

# One result line per test: "k/N Test #i: name ....   Passed" (or ***Failed, ***Skipped,
# ***Not Run (Disabled), ***Timeout, ***Exception: ...). Skipped and disabled count as skipped.
read -r passed failed skipped < <(
  awk '/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: / {
         if ($0 ~ /[.] +Passed +[0-9.]+ sec/) p++
         else if ($0 ~ /\*\*\*Skipped|\*\*\*Not Run \(Disabled\)/) s++
         else f++
       }
       END { printf "%d %d %d\n", p, f, s }' "$log")

scripts/stop-test-services.sh "$state"
trap - EXIT
echo "$passed passed, $failed failed, $skipped skipped"
exit "$ctest_status"
