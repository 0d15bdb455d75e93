#!/usr/bin/env bash
# e2e: `h3parity --help` exits 0 and lists the subcommands; each has its own --help;
# an unknown subcommand is bad input (exit 2).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

help=$("$H3P_CLI" --help) || fail "h3parity --help exited $?"
for cmd in demo init-model generate call schedule ablate bench decode compare export report gate resume-check adopt slurm preflight calibrate import bundle; do
  grep -Eq "^[[:space:]]+$cmd([[:space:]]|$)" <<<"$help" \
    || fail "h3parity --help does not list '$cmd':"$'\n'"$help"
  "$H3P_CLI" "$cmd" --help >/dev/null || fail "h3parity $cmd --help exited $?"
done

status=0
"$H3P_CLI" no-such-command >/dev/null 2>&1 || status=$?
[[ $status == 2 ]] || fail "unknown subcommand exited $status, want 2"
echo "ok: h3parity --help lists every command, each with its own --help"
