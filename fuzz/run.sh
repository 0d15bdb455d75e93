#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset, into build/fuzz) and runs them.
# usage: fuzz/run.sh [--build-only | --no-build] [--seconds N] [--runs N] [--keep DIR]
#                    [--workers N] [--parallel] [TARGET...]
#   TARGET      safetensors tensor_store contract manifest sidecar segments impl_spec
#               (default: all)
#   --seconds   time per target (libFuzzer -max_total_time; default 20)
#   --runs      stop each fuzzing process after N executions (default: no limit)
#   --keep DIR  keep each target's grown corpus in DIR/<target> (default: a temporary folder)
#   --workers N N fuzzing processes per target sharing its grown corpus (libFuzzer -reload);
#               the executions reported are the sum over them (default 1)
#   --parallel  fuzz all targets at once instead of one after the other (machines with cores
#               to spare; each process uses one core)
# Each target first runs its regression inputs (fuzz/regressions/<target>) once, then fuzzes
# from its committed seeds (fuzz/corpus/<target>, never modified) with its dictionary and its
# input-size bound (max_len below). Prints "fuzz <target>: N execs, R/s, 0 crashes" per target
# (R: executions per second of one process, averaged over the workers). Exits 1 when a target
# crashes (the reproducer is kept under build/fuzz/artifacts/), 77 when clang's libFuzzer is not
# installed. Uses ccache when present.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
all=(safetensors tensor_store contract manifest sidecar segments impl_spec)
build=1; run=1; seconds=20; runs=-1; keep=""; workers=1; parallel=0; targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-only) run=0 ;;
    --no-build) build=0 ;;
    --seconds) seconds=$2; shift ;;
    --runs) runs=$2; shift ;;
    --keep) keep=$2; shift ;;
    --workers) workers=$2; shift ;;
    --parallel) parallel=1 ;;
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

# Largest input per target (bytes): about twice the largest real file of its kind (a run's
# manifest is under 2 KB, a sidecar under 400 bytes, a two-segment segments.json under 2 KB, a
# contract under 600, an impl spec under 60), so the fuzzer spends its time on inputs a parser meets instead of ever longer ones.
# Inputs beyond the bounds (deep nesting, huge headers) are kept in regressions/ and run first.
declare -A max_len=([safetensors]=4096 [tensor_store]=4096 [contract]=2048 [manifest]=4096
                    [sidecar]=1024 [segments]=4096 [impl_spec]=256)

artifacts=$root/build/fuzz/artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/h3p-fuzz-run.XXXXXX")
# The targets' own scratch files (fuzz_util.h) go under here, on a tmpfs when there is one,
# and are removed with it even when a fuzzing process is killed.
if [[ -w /dev/shm ]]; then
  H3P_FUZZ_SCRATCH=$(mktemp -d /dev/shm/h3p-fuzz-run.XXXXXX)
else
  H3P_FUZZ_SCRATCH=$scratch/files
  mkdir -p "$H3P_FUZZ_SCRATCH"
fi
export H3P_FUZZ_SCRATCH
trap 'rm -rf "$scratch" "$H3P_FUZZ_SCRATCH"' EXIT

for t in "${targets[@]}"; do
  if [[ ! -x $bin/fuzz_$t ]]; then
    # --no-build after a skipped build (no libFuzzer here) skips too; a failed build has
    # already failed on its own.
    echo "fuzz: fuzz_$t is not built in $bin; skipping"
    exit 77
  fi
done

# fuzz_one TARGET: regression inputs, then the fuzzing processes; prints the target's line and
# returns 1 on a crash.
fuzz_one() {
  local t=$1
  # Regression inputs (past findings, too large to fuzz from) run once each, first.
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    if ! "$bin/fuzz_$t" -rss_limit_mb=2048 -timeout=10 fuzz/regressions/$t/* >"$scratch/$t.reg" 2>&1; then
      echo "fuzz $t: FAILED on a regression input:"
      grep -E "ERROR|SUMMARY|Running:|^ +#[0-9]+ " "$scratch/$t.reg" | head -30
      return 1
    fi
  fi
  local work=${keep:+$keep/$t}
  work=${work:-$scratch/$t}
  mkdir -p "$work"
  local w pids=() rcs=() rc=0
  for (( w = 0; w < workers; w++ )); do
    # Leak checking stays on; -timeout flags an input that takes over 10 s as a hang.
    "$bin/fuzz_$t" -max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
      -max_len="${max_len[$t]}" -reload=1 -dict="fuzz/dict/$t.dict" -print_final_stats=1 \
      -artifact_prefix="$artifacts/$t-" "$work" "fuzz/corpus/$t" >"$scratch/$t.$w.log" 2>&1 &
    pids+=($!)
  done
  for w in "${!pids[@]}"; do
    rc=0
    wait "${pids[$w]}" || rc=$?
    rcs+=("$rc")
  done
  local execs rate
  execs=$(cat "$scratch/$t".[0-9]*.log | awk '/stat::number_of_executed_units:/ {n += $2} END {print n + 0}')
  rate=$(cat "$scratch/$t".[0-9]*.log | awk '/stat::average_exec_per_sec:/ {r += $2; k++} END {if (k) printf "%d", r / k}')
  local failed=0
  for w in "${!rcs[@]}"; do
    if [[ ${rcs[$w]} != 0 ]]; then
      [[ $failed == 1 ]] || echo "fuzz $t: FAILED (exit ${rcs[$w]}) after ${execs:-?} execs; reproducer under $artifacts:"
      grep -E "ERROR|SUMMARY|Test unit written|^ +#[0-9]+ " "$scratch/$t.$w.log" | head -40
      failed=1
    fi
  done
  [[ $failed == 0 ]] || return 1
  local who=""
  [[ $workers == 1 ]] || who=" ($workers workers)"
  echo "fuzz $t: ${execs:-?} execs$who, ${rate:-?}/s, 0 crashes"
}

status=0
if [[ $parallel == 1 ]]; then
  pids=()
  for t in "${targets[@]}"; do
    fuzz_one "$t" >"$scratch/$t.line" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "$scratch/${targets[$i]}.line"
  done
else
  for t in "${targets[@]}"; do
    fuzz_one "$t" || status=1
  done
fi
exit "$status"
