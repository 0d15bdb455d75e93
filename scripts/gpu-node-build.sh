#!/usr/bin/env bash
# Builds the headless preset on a GPU node against the LibTorch of its Python torch, where the
# Debian -dev packages are absent. Header-only dependencies (nlohmann/json, CLI11) and OpenSSL's
# headers come from DEPS (default .deps, made by scripts/pack-node-deps.sh on a machine that has
# them); libcrypto comes from DEPS when present there.
# usage: scripts/gpu-node-build.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/gpu}
deps=${DEPS:-$root/.deps}
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
extra=()
if [[ -d $deps/usr ]]; then
  extra+=(-DCMAKE_PREFIX_PATH="$torch_prefix;$deps/usr"
          -DOPENSSL_ROOT_DIR="$deps/usr" -DOPENSSL_USE_STATIC_LIBS=OFF)
else
  extra+=(-DCMAKE_PREFIX_PATH="$torch_prefix")
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DH3P_WITH_QT=OFF \
  -DH3P_WITH_MEDIA=OFF -DH3P_BUILD_TESTS=OFF "${extra[@]}"
cmake --build "$build" --target h3parity bench_kernels -j"$(nproc)"
echo "built $build/app/cli/h3parity and $build/tools/bench/bench_kernels"
