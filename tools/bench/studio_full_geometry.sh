#!/usr/bin/env bash
# Benchmark: the workbench on a full-geometry run pair (1344x768, 124 frames, 207 audio latents
# at 32 kHz) made on the CPU with the tiny model: provider and candidate of one seed with a short
# grid, `report`, then under Xvfb the studio renders its plots and review views (process start
# to PNG written, peak resident memory: the frames are memory-mapped, not loaded), and
# h3parity-studio-bench plays the pair and times random seeks (warm and with the pages
# reclaimed). Prints one table; figures are reported, not judged.
#
# usage: tools/bench/studio_full_geometry.sh BUILD_DIR [WORK_DIR] [GRID_POINTS]
#   BUILD_DIR    a default-preset build (app/cli/h3parity, app/studio/h3parity-studio{,-bench})
#   WORK_DIR     where the runs go (kept; runs already there are resumed, not redone)
#   GRID_POINTS  sampling_steps of the contract (default 2: one transformer call per run)
set -euo pipefail
build=$(cd "${1:?usage: studio_full_geometry.sh BUILD_DIR [WORK_DIR] [GRID_POINTS]}" && pwd)
work=${2:-$(mktemp -d)}
grid=${3:-2}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cli=$build/app/cli/h3parity
studio=$build/app/studio/h3parity-studio
bench=$build/app/studio/h3parity-studio-bench
png_check=$build/tests/ui/h3p_png_check
for tool in "$cli" "$studio" "$bench"; do
  [[ -x $tool ]] || { echo "$tool not built" >&2; exit 2; }
done
command -v xvfb-run >/dev/null || { echo "xvfb-run not installed (scripts/install-deps.sh --tests)" >&2; exit 2; }
mkdir -p "$work"
cd "$work"
in_xvfb() {
  env -u QT_QPA_PLATFORM QT_XCB_GL_INTEGRATION=none xvfb-run -a -s '-screen 0 1920x1080x24' "$@"
}

sed -e 's/"width": [0-9]*/"width": 1344/' -e 's/"height": [0-9]*/"height": 768/' \
    -e "s/\"sampling_steps\": 50/\"sampling_steps\": $grid/" -e 's/"seeds": \[42, 43, 44\]/"seeds": [42]/' \
    -e 's/"name": "demo"/"name": "fullgeo"/' "$here/../../resources/contracts/demo.json" > c.json
for impl in provider candidate; do  # a finished run is only replayed (0 computed)
  [[ -f R/fullgeo/$impl/seed-42/decoded/frames.json ]] && continue
  /usr/bin/time -f "%e %M" -o "gen-$impl.time" "$cli" --progress none generate --contract c.json \
    --impl $impl --seed 42 --runs R --timings "timings-$impl.json" > "gen-$impl.log"
done
/usr/bin/time -f "%e %M" -o report.time "$cli" --progress none report R > report.log
P=R/fullgeo/provider/seed-42
C=R/fullgeo/candidate/seed-42
frames_bytes=$(stat -c %s "$C/decoded/frames.rgb")

for view in plots review; do
  rm -f "$view.png"
  in_xvfb /usr/bin/time -f "%e %M" -o "studio-$view.time" "$studio" --screenshot "$view.png" \
    --view $view R > "studio-$view.log" 2>&1
  if [[ -x $png_check ]]; then
    "$png_check" "$view.png" 1280 800 > /dev/null || { echo "$view.png looks blank" >&2; exit 1; }
  fi
done
in_xvfb "$bench" --json --seeks 50 --cold-seeks 20 "$C" "$P" > bench.log 2>&1
python3 - "$frames_bytes" <<'PY'
import json, sys
def time_of(name):
    seconds, kb = open(name).read().split()[-2:]
    return float(seconds), int(kb) / 1024
frames_mb = int(sys.argv[1]) / 2**20
print(f"| stage | wall | peak RSS |\n|---|---|---|")
for label, name in [("generate provider", "gen-provider.time"), ("generate candidate", "gen-candidate.time"),
                    ("report", "report.time"), ("studio: open, plots drawn, PNG", "studio-plots.time"),
                    ("studio: open, review frame drawn, PNG", "studio-review.time")]:
    s, mb = time_of(name)
    print(f"| {label} | {s:.1f} s | {mb:.0f} MB |")
print(f"\nframes.rgb per run: {frames_mb:.0f} MB (memory-mapped by the workbench)")
line = [l for l in open("bench.log") if l.startswith("{")][-1]
b = json.loads(line)
keys = ["fps", "dropped", "seek_median_ms", "seek_max_ms", "cold_seek_median_ms", "cold_seek_max_ms"]
print("review playback: " + ", ".join(f"{k} {b[k]:.1f}" if isinstance(b[k], float) else f"{k} {b[k]}"
                                      for k in keys if k in b))
PY
