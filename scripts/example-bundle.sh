#!/usr/bin/env bash
# Regenerates docs/example-bundle: the evidence bundle of a small demo (the demo contract at 3
# sampling steps, seed 42: provider, candidate, the provider variant provider:attention=math for
# the noise floor, and a preflight of both specs), made with the default build.
# usage: scripts/example-bundle.sh   (H3P_CLI overrides build/default/app/cli/h3parity)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli=${H3P_CLI:-$root/build/default/app/cli/h3parity}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -e 's/"sampling_steps": 50/"sampling_steps": 3/' -e 's/"seeds": \[42, 43, 44\]/"seeds": [42]/' \
  "$root/resources/contracts/demo.json" > "$work/c.json"
"$cli" --progress none demo --runs "$work/runs" --contract "$work/c.json" > /dev/null
"$cli" --progress none generate --contract "$work/c.json" --impl provider:attention=math \
  --seed 42 --runs "$work/runs" > /dev/null
# RUNS/<contract>/preflight*.json is picked up by the bundle.
"$cli" --progress none preflight --contract "$work/c.json" --impl provider --impl candidate \
  --canvas 64x64 --calls 1 --json "$work/runs/demo/preflight.json" > /dev/null
rm -rf "$root/docs/example-bundle"
"$cli" --progress none bundle "$work/runs" --out "$root/docs/example-bundle" --width 900 --height 600
du -sh "$root/docs/example-bundle"
