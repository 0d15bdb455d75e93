# Shared by the full-size evidence scripts (sourced): a timing log and a full-shape model with a
# 1344x768x124 contract over it.
#   timed LABEL COMMAND...        runs it, appends "LABEL: N ms" to $log, returns its status
#   full_size_setup CLI OUT LAYERS STEPS
#                                 sets work ($H3P_WORK or a new temporary directory) and log
#                                 (OUT/timing.log, emptied); init-model full-shape with LAYERS
#                                 blocks in $work/model (timed) and the demo contract at 1344x768
#                                 with STEPS grid points, seed 42, named "full", in $work/full.json
timed() {
  local label=$1 start status=0; shift
  start=$(date +%s%N)
  "$@" || status=$?
  echo "$label: $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$log"
  return $status
}

full_size_setup() {
  local cli=$1 out=$2 layers=$3 steps=$4 root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  work=${H3P_WORK:-$(mktemp -d)}
  mkdir -p "$out" "$work"
  log=$out/timing.log
  : > "$log"
  timed "init-model full-shape, $layers layers" \
    "$cli" init-model --preset full-shape --layers "$layers" --out "$work/model" > /dev/null
  sed -e "s|\"preset:tiny\"|\"$work/model\"|" -e 's/"width": [0-9]*/"width": 1344/' \
      -e 's/"height": [0-9]*/"height": 768/' -e "s/\"sampling_steps\": 50/\"sampling_steps\": $steps/" \
      -e 's/"seeds": \[42, 43, 44\]/"seeds": [42]/' -e 's/"name": "demo"/"name": "full"/' \
    "$root/resources/contracts/demo.json" > "$work/full.json"
}
