#!/usr/bin/env bash
# Builds h3parity (default preset) and runs its demo on the embedded default model.
# usage: scripts/demo.sh [RUNS_DIR] [extra `h3parity demo` arguments...]
#   RUNS_DIR defaults to runs/ in the source tree (also accepted as --runs DIR); the rest goes to `h3parity demo`.
# Works as root or as a user with sudo on Debian 12; installs what is missing first.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

runs=runs  # relative to the source tree unless given
if [[ $# -gt 0 && $1 != -* ]]; then
  runs=$1
  shift
fi
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) [[ $# -ge 2 ]] || { echo "demo: --runs needs a directory" >&2; exit 2; }
            runs=$2; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
# A directory given on the command line is relative to where the command was typed.
if [[ $runs != runs && $runs != /* ]]; then
  runs=$PWD/$runs
fi
cd "$root"

scripts/install-deps.sh

echo "demo: configuring (preset default)"
cmake --preset default >/dev/null

start=$(date +%s)
echo "demo: building with $(nproc) jobs"
cmake --build --preset default --parallel "$(nproc)" --target h3parity h3parity-studio
echo "demo: build took $(( $(date +%s) - start )) s"

mkdir -p "$runs"
echo "demo: build/default/app/cli/h3parity demo --runs $runs ${args[*]:-}"
build/default/app/cli/h3parity demo --runs "$runs" "${args[@]}"
echo "demo: browse the runs with: build/default/app/studio/h3parity-studio $runs"
