#!/usr/bin/env bash
# Benchmark: what the candidate plugin ABI costs. The same kernels are timed directly and
# through the ABI in one `h3parity bench` run, call by call interleaved (PEER, SPEC, PEER, SPEC,
# ...; bench's rounds), and two figures printed: the ratio of the medians (SPEC / PEER) and the
# median of the per-round ratios (each SPEC call against the PEER call just before it), which a
# machine whose speed drifts during the run does not bias. Goal: <= 1.02 on CPU, <= 1.01 on CUDA.
#   CPU:  PEER candidate, SPEC plugin:h3p_candidate (kernels/cpu through the C ABI)
#   CUDA: PEER provider,  SPEC plugin:h3p_aten_provider:rest=provider (the provider's ATen ops
#         through the C ABI), or python:kernels/plugins/python_torch/torch_plugin.py (the same
#         ops through the C ABI and the Python bridge)
# usage: tools/bench/plugin_abi.sh H3PARITY PEER SPEC [ROUNDS] [bench options...]
#   e.g. tools/bench/plugin_abi.sh build/default/app/cli/h3parity candidate plugin:h3p_candidate 60 --preset small
set -euo pipefail
cli=${1:?usage: plugin_abi.sh H3PARITY PEER SPEC [ROUNDS] [bench options...]}
peer=${2:?peer spec}
spec=${3:?spec through the ABI}
rounds=${4:-30}
shift 4 || shift $#
json=$(mktemp)
trap 'rm -f "$json"' EXIT
"$cli" bench --impl "$peer" --impl "$spec" --repeats "$rounds" --json "$json" "$@"
python3 - "$json" <<'PY'
import json, statistics, sys
rows = json.load(open(sys.argv[1]))["rows"]
peer, spec = rows[0]["times_ms"], rows[1]["times_ms"]
rounds = sorted(s / p for p, s in zip(peer, spec))
q = lambda f: rounds[min(len(rounds) - 1, int(f * len(rounds)))]
print("ratio of medians: %s / %s = %.4f; median of %d per-round ratios %.4f (quartiles %.4f .. %.4f)"
      % (rows[1]["impl"], rows[0]["impl"], statistics.median(spec) / statistics.median(peer),
         len(rounds), statistics.median(rounds), q(0.25), q(0.75)))
PY
