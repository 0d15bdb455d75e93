#!/usr/bin/env bash
# Packs what a headless build needs beyond LibTorch — nlohmann/json, CLI11 and DLPack (headers and CMake
# configs) and OpenSSL's headers and libcrypto — from this Debian machine into DEST (default
# .deps), for GPU nodes that have LibTorch but not these -dev packages.
# usage: scripts/pack-node-deps.sh [DEST]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/.deps}
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
rm -rf "$dest"
mkdir -p "$dest/usr/include" "$dest/usr/lib" "$dest/usr/share/cmake"
cp -r /usr/include/nlohmann /usr/include/CLI /usr/include/dlpack "$dest/usr/include/"
cp -r /usr/include/openssl "$dest/usr/include/"
cp /usr/include/$arch/openssl/* "$dest/usr/include/openssl/"
cp -r /usr/share/cmake/nlohmann_json "$dest/usr/share/cmake/"
cp -r /usr/share/cmake/CLI11 "$dest/usr/share/cmake/" 2>/dev/null \
  || cp -r /usr/lib/cmake/CLI11 "$dest/usr/share/cmake/"
cp -L /usr/lib/$arch/libcrypto.so.3 "$dest/usr/lib/"
ln -s libcrypto.so.3 "$dest/usr/lib/libcrypto.so"
du -sh "$dest"
