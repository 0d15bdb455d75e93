#!/usr/bin/env bash
# Runs one e2e script in a fresh temporary directory: run_e2e.sh SCRIPT [ARGS...]
# Exports H3P_TMP_DIR; keeps the directory when H3P_KEEP_TMP=1. Returns the script's status.
set -uo pipefail

script=$1
shift
: "${H3P_CLI:?H3P_CLI must name the h3parity executable}"
: "${H3P_SOURCE_DIR:?H3P_SOURCE_DIR must name the source tree}"

H3P_TMP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/h3p-e2e.XXXXXX")
export H3P_TMP_DIR
if [[ ${H3P_KEEP_TMP:-0} == 1 ]]; then
  echo "e2e: keeping $H3P_TMP_DIR"
else
  trap 'rm -rf "$H3P_TMP_DIR"' EXIT
fi

cd "$H3P_TMP_DIR"
bash "$script" "$@"
