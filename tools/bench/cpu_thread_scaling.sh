#!/usr/bin/env bash
# CPU candidate against the provider (LibTorch) at several thread counts: `h3parity bench` on the
# small preset, both in one process and interleaved, once per thread count (THREADS, default
# "1 2 4 8 16"), with REPEATS timed calls each (default 9, medians). Then, at the highest count,
# once per OpenMP setting in OMP_SWEEP (space-separated VAR=VALUE, "-" for none) to tell the
# runtime's waiting and placement apart from the kernels. Prints one table and writes each
# bench's JSON as OUT/bench-t<N>[-<setting>].json.
# usage: tools/bench/cpu_thread_scaling.sh H3PARITY OUT
set -uo pipefail
cli=${1:?usage: cpu_thread_scaling.sh H3PARITY OUT}
out=${2:?output directory}
threads=${THREADS:-1 2 4 8 16}
repeats=${REPEATS:-9}
sweep=${OMP_SWEEP:--}
mkdir -p "$out"
read -r -a counts <<<"$threads"
top=${counts[-1]}

row() {  # row THREADS SETTING: one bench; prints "threads setting provider_ms candidate_ms ratio"
  local t=$1 setting=$2 name=bench-t$1 env=()
  [[ $setting == - ]] || { env=("$setting"); name+="-${setting//[^A-Za-z0-9]/_}"; }
  if ! env "${env[@]}" "$cli" --progress none bench --preset small --device cpu --threads "$t" \
       --repeats "$repeats" --json "$out/$name.json" > "$out/$name.txt" 2>&1; then
    echo "| $t | $setting | bench failed: $(tail -1 "$out/$name.txt") |"
    return
  fi
  awk -v t="$t" -v s="$setting" '$1 == "provider" { p = $2 } $1 == "candidate" { c = $2; r = $4 }
    END { printf "| %s | %s | %s | %s | %s |\n", t, s, p, c, r }' "$out/$name.txt"
}

echo "| threads | OpenMP setting | provider ms | candidate ms | candidate / provider |"
echo "|---|---|---|---|---|"
for t in "${counts[@]}"; do row "$t" -; done
for setting in $sweep; do [[ $setting == - ]] || row "$top" "$setting"; done
