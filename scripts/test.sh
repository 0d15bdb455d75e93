#!/usr/bin/env bash
# Runs every test once, in two stages. The default stage builds the default preset (all but the
# `sanitized` suites) and runs the e2e, gui, fuzz and cuda tests through CTest (the libFuzzer
# smoke runs build themselves into build/fuzz with clang); the sanitizer stage builds the asan
# preset's `sanitized` suites (every Qt Test suite that does not link the workbench: ASan + UBSan,
# -O0 with the kernels and metrics at -O1) and runs them.
# usage: scripts/test.sh [extra ctest arguments...]   (passed to both CTest runs)
#   H3P_TEST_ASAN=1     the two stages above (the default)
#   H3P_TEST_ASAN=full  the default stage builds and runs everything, then the sanitizer stage
#                       builds everything it can and runs the unit and e2e suites again
#   H3P_TEST_ASAN=0     no sanitizer stage: the default stage builds and runs everything
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

asan_mode=${H3P_TEST_ASAN:-1}
case $asan_mode in
  0 | 1 | full) ;;
  *) echo "test: H3P_TEST_ASAN: unknown value '$asan_mode' (0, 1, full)" >&2; exit 2 ;;
esac
# With the split stages each builds only what it runs (tests/CMakeLists.txt: h3p_sanitized_suites).
default_target=() default_labels=() asan_target=() asan_labels=(-L 'unit|e2e' -LE fuzz)
if [[ $asan_mode == 1 ]]; then
  default_target=(--target h3p_default_stage) default_labels=(-LE sanitized)
  asan_target=(--target h3p_sanitized_suites) asan_labels=(-L sanitized)
fi

start=$(date +%s)
echo "test: building with $(nproc) jobs"
build_status=0
cmake --build --preset default --parallel "$(nproc)" "${default_target[@]}" || build_status=$?
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
# The sanitizer build (see below) starts now, beside the first suite, in the idle scheduling
# class (SCHED_IDLE, chrt from util-linux): many of the suite's tests wait on processes,
# signals and Slurm rather than on the CPU, and the build takes only what they leave. At nice 15
# it still took enough to starve the audio playback test's feed thread (55 ms gaps in what it
# recorded, one run in three on a 2-core machine).
asan_pid=
if [[ $asan_mode != 0 ]]; then
  echo "test: configuring (preset asan); building it in the background"
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake --preset asan "${launcher[@]}" >/dev/null
  asan_start=$(date +%s)
  chrt --idle 0 cmake --build --preset asan --parallel "$(nproc)" "${asan_target[@]}" \
    > "$root/build/asan-build.log" 2>&1 &
  asan_pid=$!
fi
junit=$root/build/default/ctest-junit.xml
rm -f "$junit"
ctest --preset default -j2 --output-on-failure --output-junit "$junit" "${default_labels[@]}" \
  "$@" 2>&1 | tee "$log" ||
  ctest_status=${PIPESTATUS[0]}
# tests.json (what `h3parity bundle` publishes): CTest's JUnit per stage, counted per label.
stages=()
if [[ -f $junit ]] && ctest --preset default --show-only=json-v1 > "$root/build/default/ctest-tests.json"; then
  stages+=(--stage default Release "$junit" "$root/build/default/ctest-tests.json")
fi

# The sanitizer stage: the same sources under ASan + UBSan (gcc; -O0, the kernels and metrics
# -O1) with leak checking. By default it runs the `sanitized` suites, which the default stage
# left to it: every library of the core and the kernels under its unit suites, in process. With
# H3P_TEST_ASAN=full it runs the unit and e2e labels again instead (the fuzz label is left out,
# the fuzz targets are sanitized builds already; the preset builds no workbench, so no gui test
# exists there), and the SIGKILL torture with 30 kills instead of 100. No suppressions are
# needed: LibTorch, OpenBLAS, FFmpeg and Qt report nothing here.
if [[ $asan_mode != 0 ]]; then
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
    ctest --preset asan -j2 --output-on-failure --output-junit "$asan_junit" "${asan_labels[@]}" \
      "$@" 2>&1 | tee "$asan_log" || asan_ctest=${PIPESTATUS[0]}
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
