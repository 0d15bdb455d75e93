#!/usr/bin/env bash
# Stops what scripts/start-test-services.sh STATE_FILE started, and nothing else.
# usage: scripts/stop-test-services.sh STATE_FILE
set -uo pipefail

state=${1:?usage: stop-test-services.sh STATE_FILE}
[[ -f $state ]] || exit 0

h3p_started_pulseaudio=
h3p_loaded_module=
# shellcheck disable=SC1090
source "$state"

if [[ -n $h3p_loaded_module ]]; then
  pactl unload-module "$h3p_loaded_module" 2>/dev/null || true
fi
if [[ -n $h3p_started_pulseaudio ]] &&
   [[ $(ps -p "$h3p_started_pulseaudio" -o comm= 2>/dev/null) == pulseaudio ]]; then
  kill "$h3p_started_pulseaudio"
  for _ in $(seq 50); do
    kill -0 "$h3p_started_pulseaudio" 2>/dev/null || break
    sleep 0.1
  done
fi
rm -f "$state"
