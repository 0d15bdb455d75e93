#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset, into build/fuzz) and runs them.
# usage: fuzz/run.sh [--build-only | --no-build] [--seconds N] [--runs N] [--keep DIR] [TARGET...]
#   TARGET      safetensors tensor_store contract manifest sidecar impl_spec (default: all)
#   --seconds   time per target (libFuzzer -max_total_time; default 20)
#   --runs      stop a target after N executions (default: no limit)
#   --keep DIR  keep each target's grown corpus in DIR/<target> (default: a temporary folder)
# Each target first runs its regression inputs (fuzz/regressions/<target>) once, then fuzzes
# from its committed seeds (fuzz/corpus/<target>, never modified) with its dictionary. Prints "fuzz <target>: N execs, R/s, 0 crashes" per target. Exits 1 when a
# target crashes (the reproducer is kept under build/fuzz/artifacts/), 77 when clang's
# libFuzzer is not installed. Uses ccache when present.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
all=(safetensors tensor_store contract manifest sidecar impl_spec)
build=1; run=1; seconds=20; runs=-1; keep=""; targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-only) run=0 ;;
    --no-build) build=0 ;;
    --seconds) seconds=$2; shift ;;
    --runs) runs=$2; shift ;;
    --keep) keep=$2; shift ;;
    -*) echo "fuzz: unknown option '$1'" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")

bin=$root/build/fuzz/fuzz
if [[ $build == 1 ]]; then
  if ! command -v clang++-14 >/dev/null ||
     ! compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
    echo "fuzz: clang-14 with libFuzzer (clang-14, libclang-rt-14-dev) not installed; skipping"
    exit 77
  fi
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  start=$(date +%s)
  cmake --preset fuzz "${launcher[@]}" >/dev/null
  cmake --build --preset fuzz --parallel "$(nproc)" >/dev/null
  echo "fuzz: build took $(( $(date +%s) - start )) s"
fi
[[ $run == 1 ]] || exit 0

artifacts=$root/build/fuzz/artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/h3p-fuzz-run.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
status=0
for t in "${targets[@]}"; do
  if [[ ! -x $bin/fuzz_$t ]]; then
    # --no-build after a skipped build (no libFuzzer here) skips too; a failed build has
    # already failed on its own.
    echo "fuzz: fuzz_$t is not built in $bin; skipping"
    exit 77
  fi
  # Regression inputs (past findings, too large to fuzz from) run once each, first.
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    if ! "$bin/fuzz_$t" -rss_limit_mb=2048 -timeout=10 fuzz/regressions/$t/* >"$scratch/$t.reg" 2>&1; then
      echo "fuzz $t: FAILED on a regression input:"
      grep -E "ERROR|SUMMARY|Running:|^ +#[0-9]+ " "$scratch/$t.reg" | head -30
      status=1
      continue
    fi
  fi
  work=${keep:+$keep/$t}
  work=${work:-$scratch/$t}
  mkdir -p "$work"
  log=$scratch/$t.log
  rc=0
  # Leak checking stays on; -timeout flags an input that takes over 10 s as a hang.
  "$bin/fuzz_$t" -max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
    -dict="fuzz/dict/$t.dict" -print_final_stats=1 -artifact_prefix="$artifacts/$t-" \
    "$work" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log")
  rate=$(awk '/stat::average_exec_per_sec:/ {print $2}' "$log")
  if [[ $rc == 0 ]]; then
    echo "fuzz $t: ${execs:-?} execs, ${rate:-?}/s, 0 crashes"
  else
    echo "fuzz $t: FAILED (exit $rc) after ${execs:-?} execs; reproducer under $artifacts:"
    grep -E "ERROR|SUMMARY|Test unit written|^ +#[0-9]+ " "$log" | head -40
    status=1
  fi
done
exit "$status"
