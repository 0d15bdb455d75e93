#!/usr/bin/env bash
# Benchmark: what the candidate plugin ABI costs. The same kernels are timed directly and
# through the ABI in one `h3parity bench` run, interleaved (PEER, SPEC, PEER, SPEC, ...), and
# the ratio of the medians printed (SPEC / PEER; goal <= 1.02 on CPU, <= 1.01 on CUDA).
#   CPU:  PEER candidate, SPEC plugin:h3p_candidate (kernels/cpu through the C ABI)
#   CUDA: PEER provider,  SPEC python:kernels/plugins/python_torch/torch_plugin.py (the very
#         ATen ops through the C ABI and the Python bridge: an upper bound of the C ABI's cost)
# usage: tools/bench/plugin_abi.sh H3PARITY PEER SPEC [PAIRS] [bench options...]
#   e.g. tools/bench/plugin_abi.sh build/default/app/cli/h3parity candidate plugin:h3p_candidate 6 --preset small --repeats 9
set -euo pipefail
cli=${1:?usage: plugin_abi.sh H3PARITY PEER SPEC [PAIRS] [bench options...]}
peer=${2:?peer spec}
spec=${3:?spec through the ABI}
pairs=${4:-6}
shift 4 || shift $#
impls=()
for _ in $(seq 1 "$pairs"); do impls+=(--impl "$peer" --impl "$spec"); done
json=$(mktemp)
"$cli" bench "${impls[@]}" --json "$json" "$@"
python3 - "$json" "$peer" "$spec" <<'PY'
import json, statistics, sys
rows = json.load(open(sys.argv[1]))["rows"]
peer = [r["median_ms"] for r in rows if r["impl"] == sys.argv[2]]
spec = [r["median_ms"] for r in rows if r["impl"] == sys.argv[3]]
pairs = [s / p for p, s in zip(peer, spec)]
print("ratio of medians: %s / %s = %.4f (%d interleaved pairs; pair ratios %s)"
      % (sys.argv[3], sys.argv[2], statistics.median(spec) / statistics.median(peer), len(pairs),
         " ".join("%.3f" % r for r in pairs)))
PY
rm -f "$json"
