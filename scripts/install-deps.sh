#!/usr/bin/env bash
# Installs the Debian 12 packages h3parity needs; skips what is present. Idempotent.
# usage: scripts/install-deps.sh [--headless] [--tests] [--cluster]
#   default   build dependencies of the full build (Qt, media, LibTorch, ...)
#   --headless  only LibTorch + nlohmann/json + OpenSSL (+ CLI11, spdlog) — what a GPU node has
#   --tests     also what the test suite needs (Xvfb, PulseAudio, ffmpeg CLI, clang's libFuzzer
#               and ccache for the fuzz targets)
#   --cluster   also the Slurm daemons for the cluster tests
set -euo pipefail

headless=0; tests=0; cluster=0
for arg in "$@"; do
  case "$arg" in
    --headless) headless=1 ;;
    --tests) tests=1 ;;
    --cluster) cluster=1 ;;
    *) echo "install-deps: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

packages=(build-essential cmake ninja-build pkg-config git
          libtorch-dev libopenblas0-openmp nlohmann-json3-dev libssl-dev
          libcli11-dev libspdlog-dev libdlpack-dev
          lld)  # the linker the build prefers (CMakeLists.txt, H3P_LINKER)
if [[ $headless == 0 ]]; then
  packages+=(qt6-base-dev qt6-multimedia-dev libqcustomplot-dev libqcustomplot2.1-qt6
             libopencv-dev libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
             libswresample-dev
             # Python plugins: Debian builds python3-torch from libtorch-dev's source package,
             # so the embedded interpreter's torch is the very LibTorch h3parity links.
             python3-torch libpython3.11-dev)
fi
if [[ $tests == 1 ]]; then
  packages+=(xvfb xauth pulseaudio pulseaudio-utils gstreamer1.0-plugins-good
             gstreamer1.0-libav ffmpeg python3 clang-14 libclang-rt-14-dev ccache)
fi
if [[ $cluster == 1 ]]; then
  packages+=(slurmctld slurmd slurm-client munge)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} == 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) != 0 ]]; then sudo_cmd=(sudo); fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
