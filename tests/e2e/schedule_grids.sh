#!/usr/bin/env bash
# e2e: `h3parity schedule --json` equals the sigma grids and timesteps diffusers computed, bit
# for bit (float32), for every step count and shift in the golden file.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v python3 >/dev/null || exit 77
python3 "$(dirname "${BASH_SOURCE[0]}")/check_schedule.py" "$H3P_CLI" \
  "$H3P_SOURCE_DIR/tests/data/golden/scheduler/grids.safetensors"
