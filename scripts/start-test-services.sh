#!/usr/bin/env bash
# Starts what the test suite needs and is not already running: a PulseAudio server with a null
# sink named "null" (Qt then has a real audio output; `parec -d null.monitor` records it).
# usage: scripts/start-test-services.sh STATE_FILE
# Writes STATE_FILE: shell assignments to source before the tests (XDG_RUNTIME_DIR) and what
# was started (pid, module), which scripts/stop-test-services.sh STATE_FILE undoes.
set -euo pipefail

state=${1:?usage: start-test-services.sh STATE_FILE}
mkdir -p "$(dirname "$state")"
: >"$state"

if ! command -v pulseaudio >/dev/null || ! command -v pactl >/dev/null; then
  echo "test-services: pulseaudio not installed; audio tests will have no output device"
  exit 0
fi

# PulseAudio needs a private runtime directory; reuse the session's when there is one.
if [[ -z ${XDG_RUNTIME_DIR:-} || ! -w ${XDG_RUNTIME_DIR:-/nonexistent} ]]; then
  export XDG_RUNTIME_DIR=${TMPDIR:-/tmp}/h3p-xdg-$(id -u)
  mkdir -p "$XDG_RUNTIME_DIR"
  chmod 700 "$XDG_RUNTIME_DIR"
fi
echo "export XDG_RUNTIME_DIR=$(printf '%q' "$XDG_RUNTIME_DIR")" >>"$state"

if pactl info >/dev/null 2>&1; then
  # A server is running: add the null sink only if it lacks one.
  if pactl list short sinks 2>/dev/null | awk '{print $2}' | grep -qx null; then
    echo "test-services: PulseAudio with a null sink already running"
  else
    module=$(pactl load-module module-null-sink sink_name=null)
    echo "h3p_loaded_module=$module" >>"$state"
    echo "test-services: loaded a null sink into the running PulseAudio (module $module)"
  fi
  exit 0
fi

pulseaudio -D --exit-idle-time=-1 -n \
  --load="module-null-sink sink_name=null" \
  --load="module-native-protocol-unix" 2>/dev/null
# Wait for the server to answer, then record its pid so only this one is stopped later.
for _ in $(seq 50); do
  pactl info >/dev/null 2>&1 && break
  sleep 0.1
done
pid_file=$XDG_RUNTIME_DIR/pulse/pid
if ! pactl info >/dev/null 2>&1 || [[ ! -s $pid_file ]]; then
  echo "test-services: PulseAudio did not start" >&2
  exit 1
fi
echo "h3p_started_pulseaudio=$(head -n1 "$pid_file")" >>"$state"
echo "test-services: started PulseAudio with a null sink (pid $(head -n1 "$pid_file"))"
