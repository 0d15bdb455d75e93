#!/usr/bin/env bash
# Builds everything (default preset) and runs the whole test suite through CTest (the libFuzzer
# smoke runs included: label fuzz, built by the suite itself into build/fuzz with clang), then
# the sanitizer stage: the asan preset (ASan + UBSan at -O1; no workbench, no CUDA) builds and
# runs the unit and e2e suites again.
# usage: scripts/test.sh [extra ctest arguments...]   (passed to both CTest runs)
#   H3P_TEST_ASAN=0 leaves the sanitizer stage out (it is on by default).
# Installs what is missing, starts the test services that are not running (PulseAudio null
# sink), stops what it started, and ends with one line: "N passed, N failed, N skipped" (both
# CTest runs together). Both runs' results, per label, go to build/default/tests.json (CTest's
# JUnit through scripts/ctest-results.py; `h3parity bundle` publishes it). Exits with the first
# non-zero status (a build or a CTest run). Works
# as root or as a user with sudo on Debian 12.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

scripts/install-deps.sh --tests --cluster

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
# A one-node Slurm cluster for the cluster tests (tests/e2e/slurm_array.sh uses it through
# H3P_SLURM_DIR); stopped by PID below. Without it that test starts its own or skips.
slurm_dir=$root/build/default/slurm
stop_services() {
  [[ -z ${asan_pid:-} ]] || kill "$asan_pid" 2>/dev/null || true
  scripts/slurm-cluster.sh stop "$slurm_dir" >/dev/null 2>&1 || true
  scripts/stop-test-services.sh "$state"
}
trap stop_services EXIT
# shellcheck disable=SC1090
source "$state"
if scripts/slurm-cluster.sh status "$slurm_dir" 2>/dev/null; then
  scripts/slurm-cluster.sh stop "$slurm_dir" || true
fi
rm -rf "$slurm_dir"
if scripts/slurm-cluster.sh start "$slurm_dir"; then
  export H3P_SLURM_DIR=$slurm_dir
else
  echo "test: no Slurm cluster (exit $?); the cluster test starts its own or skips"
fi

log=$root/build/default/ctest.log
logs=("$log")
build_failures=0
ctest_status=0
# The sanitizer build (see below) starts now, at low priority, beside the first suite: many of
# its tests wait on processes, signals and Slurm rather than on the CPU.
asan_pid=
if [[ ${H3P_TEST_ASAN:-1} == 1 ]]; then
  echo "test: configuring (preset asan); building it in the background"
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake --preset asan "${launcher[@]}" >/dev/null
  asan_start=$(date +%s)
  nice -n 15 cmake --build --preset asan --parallel "$(nproc)" > "$root/build/asan-build.log" 2>&1 &
  asan_pid=$!
fi
junit=$root/build/default/ctest-junit.xml
rm -f "$junit"
ctest --preset default -j2 --output-on-failure --output-junit "$junit" "$@" 2>&1 | tee "$log" ||
  ctest_status=${PIPESTATUS[0]}
# tests.json (what `h3parity bundle` publishes): CTest's JUnit per stage, counted per label.
stages=()
if [[ -f $junit ]] && ctest --preset default --show-only=json-v1 > "$root/build/default/ctest-tests.json"; then
  stages+=(--stage default Release "$junit" "$root/build/default/ctest-tests.json")
fi

# The sanitizer stage: the same sources under ASan + UBSan (gcc; -O0, the kernels and metrics
# -O1) with leak checking, unit and e2e labels; the fuzz label is left out (the fuzz targets are
# sanitized builds already) and the preset builds no workbench, so no gui test exists there. The
# test preset runs the SIGKILL torture with 30 kills instead of 100 (the first stage runs 100).
# No suppressions are needed: LibTorch, OpenBLAS, FFmpeg and Qt report nothing here.
if [[ ${H3P_TEST_ASAN:-1} == 1 ]]; then
  asan_status=0
  wait "$asan_pid" || asan_status=$?
  asan_pid=
  echo "test: asan build finished $(( $(date +%s) - asan_start )) s after it started"
  if [[ $asan_status != 0 ]]; then
    tail -n 60 "$root/build/asan-build.log"
    echo "test: asan build failed (exit $asan_status)"
    [[ $ctest_status != 0 ]] || ctest_status=$asan_status
    build_failures=1  # counted as one failure in the summary line
  else
    asan_log=$root/build/asan/ctest.log
    logs+=("$asan_log")
    start=$(date +%s)
    asan_ctest=0
    asan_junit=$root/build/asan/ctest-junit.xml
    rm -f "$asan_junit"
    ctest --preset asan -j2 --output-on-failure --output-junit "$asan_junit" -L 'unit|e2e' \
      -LE fuzz "$@" 2>&1 | tee "$asan_log" || asan_ctest=${PIPESTATUS[0]}
    if [[ -f $asan_junit ]] &&
       ctest --preset asan --show-only=json-v1 > "$root/build/asan/ctest-tests.json"; then
      stages+=(--stage asan "RelWithDebInfo (ASan + UBSan)" "$asan_junit"
               "$root/build/asan/ctest-tests.json")
    fi
    echo "test: asan suite took $(( $(date +%s) - start )) s"
    [[ $ctest_status != 0 ]] || ctest_status=$asan_ctest
  fi
fi

# One result line per test: "k/N Test #i: name ....   Passed" (or ***Failed, ***Skipped,
# ***Not Run (Disabled), ***Timeout, ***Exception: ...). Skipped and disabled count as skipped.
read -r passed failed skipped < <(
  awk '/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: / {
         if ($0 ~ /[.] +Passed +[0-9.]+ sec/) p++
         else if ($0 ~ /\*\*\*Skipped|\*\*\*Not Run \(Disabled\)/) s++
         else f++
       }
       END { printf "%d %d %d\n", p, f, s }' "${logs[@]}")

failed=$(( failed + build_failures ))
# Both stages in one file, build/default/tests.json (the bundle's default), each stage apart.
rm -f "$root/build/default/tests.json"
if (( ${#stages[@]} > 0 )); then
  python3 scripts/ctest-results.py --out "$root/build/default/tests.json" \
    --commit "$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)" --build-type Release \
    "${stages[@]}" || echo "test: tests.json not written"
fi
stop_services
trap - EXIT
echo "$passed passed, $failed failed, $skipped skipped"
exit "$ctest_status"
