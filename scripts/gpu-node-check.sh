#!/usr/bin/env bash
# On a GPU node: builds the headless preset against the node's CUDA LibTorch (with the CUDA
# kernels, their tests and the block benchmark), runs the `cuda` test label (the kernel tests
# and the candidate generating through the fused blocks), then the block benchmark at the
# released widths and full-size sequence. Logs and JSON go to OUT_DIR.
# usage: scripts/gpu-node-check.sh OUT_DIR [benchmark arguments...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: gpu-node-check.sh OUT_DIR [benchmark arguments...]}
shift
mkdir -p "$out"
build=$root/build/gpu
deps=${DEPS:-$root/.deps}
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
prefix="$torch_prefix"
extra=()
if [[ -d $deps/usr ]]; then
  prefix="$torch_prefix;$deps/usr"
  extra+=(-DOPENSSL_ROOT_DIR="$deps/usr" -DOPENSSL_USE_STATIC_LIBS=OFF)
fi
# What the `cuda` tests run: the CLI, the kernel tests, the benchmark and the plugins the e2e
# scripts load (those this configuration has).
targets=(h3parity test_cuda_kernels h3parity-cuda-bench)
plugins=(h3p_cuda_candidate_plugin h3p_aten_provider_plugin h3p_python_plugin)
{
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DH3P_WITH_QT=OFF \
    -DH3P_WITH_MEDIA=OFF -DH3P_BUILD_TESTS=ON -DCMAKE_PREFIX_PATH="$prefix" "${extra[@]}" &&
  for t in "${plugins[@]}"; do
    if ninja -C "$build" -t query "$t" > /dev/null 2>&1; then targets+=("$t"); fi
  done &&
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
} > "$out/build.log" 2>&1 || { tail -60 "$out/build.log"; echo "gpu-node-check: build failed"; exit 2; }
echo "gpu-node-check: built ${targets[*]}"
echo "gpu-node-check: build ok"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
status=0
(cd "$build" && timeout 600 ctest -L cuda --output-on-failure) 2>&1 | tee "$out/ctest-cuda.log" || status=1
PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True} \
  timeout 300 "$build/app/cuda_bench/h3parity-cuda-bench" --json "$out/block-bench.json" "$@" 2>&1 |
  tee "$out/block-bench.log" || status=1
exit $status
