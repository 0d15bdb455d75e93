#!/usr/bin/env bash
# Conditioning parity on a GPU node: `h3parity generate` from a conditioning file written by
# tools/conditioning/export_conditioning.py must equal the diffusers MiniMax-H3 modular pipeline
# run from the same prompt and keyframes, bit for bit, for t2va (prompt only) and fl2va (prompt,
# first and last keyframe), on CUDA and on the CPU. Everything is built here from configs: the
# tiny transformer and VAEs (`h3parity init-model --preset tiny`), a tiny random Qwen3-VL
# conditioner and its tokenizer and processor (make_tiny_encoders.py), two keyframe images.
# Per case it compares, stage by stage: the exported conditioning against the pipeline's own
# prompt embeds and keyframe latents, the run's inputs, the initial noise, every transformer
# call's inputs and outputs, and the final video and audio latents.
#
# usage: PYTHONPATH=<abs diffusers>/src tools/conditioning/parity.sh OUT_DIR
# env:   H3P_CLI                an h3parity binary (default: build one with scripts/gpu-node-build.sh
#                               into /tmp/h3p-build)
#        H3P_PARITY_DEVICES     devices to check (default "cuda cpu"; "cpu" alone without a GPU)
#        H3P_PARITY_STEPS       sampling_steps (default 6: 5 transformer calls)
# exit:  0 every case bitwise equal, 1 a difference, 2 a setup step failed (see OUT_DIR/*.log)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: PYTHONPATH=<abs diffusers>/src tools/conditioning/parity.sh OUT_DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
tools=$root/tools/conditioning
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 DIFFUSERS_VERBOSITY=error TOKENIZERS_PARALLELISM=false

devices=${H3P_PARITY_DEVICES:-cuda cpu}
steps=${H3P_PARITY_STEPS:-6}
seed=42
width=128
height=96
frames=124   # the shortest request the pipeline accepts: 17*7+5 frames, 5.17 s at 24 fps
prompt="A red kite climbs over a windy beach while waves break and gulls call."

die() { echo "parity: $*" >&2; exit 2; }
step() { echo "== [${SECONDS}s] $*"; }
# Runs a setup command with its output in a log; on failure shows the log's tail and exits 2.
logged() {
  local log=$1; shift
  if ! "$@" > "$log" 2>&1; then
    tail -40 "$log"
    die "failed: $* (log: $log)"
  fi
}

[[ -n ${PYTHONPATH:-} ]] || die "set PYTHONPATH to the diffusers source tree's src/ (absolute)"
# One interpreter start checks the imports and the devices (each start costs seconds).
python3 - "$devices" <<'EOF'
import sys
try:
    import torch, transformers, diffusers
    import diffusers.modular_pipelines.minimax_h3  # noqa: F401
except ImportError as error:
    print(f"import failed: {error}", file=sys.stderr)
    sys.exit(3)
print("torch", torch.__version__, "transformers", transformers.__version__, "diffusers", diffusers.__version__,
      "cuda", torch.cuda.is_available())
sys.exit(4 if "cuda" in sys.argv[1].split() and not torch.cuda.is_available() else 0)
EOF
case $? in
  0) ;;
  4) die "CUDA is not available to this torch; run with H3P_PARITY_DEVICES=cpu" ;;
  *) die "cannot import torch, transformers and diffusers' MiniMax-H3 pipeline (PYTHONPATH=$PYTHONPATH)" ;;
esac

# 1. The h3parity binary.
cli=${H3P_CLI:-}
if [[ -z $cli ]]; then
  step "building h3parity (scripts/gpu-node-build.sh /tmp/h3p-build)"
  logged "$out/build.log" "$root/scripts/gpu-node-build.sh" /tmp/h3p-build
  cli=/tmp/h3p-build/app/cli/h3parity
fi
[[ -x $cli ]] || die "no h3parity binary at $cli"

# 2. The tiny model: transformer and VAEs from h3parity, the conditioner built from configs.
model=$out/model
if [[ ! -f $model/transformer/config.json ]]; then
  step "init-model tiny -> $model"
  logged "$out/init-model.log" "$cli" init-model --preset tiny --out "$model"
fi
step "tiny Qwen3-VL conditioner, tokenizer, processor -> $model"
logged "$out/make-tiny-encoders.log" python3 "$tools/make_tiny_encoders.py" --model "$model" --seed 0
cat "$out/make-tiny-encoders.log"
logged "$out/keyframes.log" python3 "$tools/pipeline_reference.py" keyframes --out "$out/images" \
  --width $width --height $height
cat "$out/keyframes.log"

# 3. The cases: export, generate, the diffusers run, compare.
reports=()
for device in $devices; do
  for workflow in t2va fl2va; do
    case_name=$workflow-$device
    dir=$out/$case_name
    rm -rf "$dir" && mkdir -p "$dir"
    images=()
    [[ $workflow == fl2va ]] && images=(--first "$out/images/first.png" --last "$out/images/last.png")
    request=(--model "$model" --prompt "$prompt" "${images[@]}" --width $width --height $height --device "$device")
    reports+=("$dir/compare.json")
    step "$case_name: export conditioning"
    if ! python3 "$tools/export_conditioning.py" "${request[@]}" --frames $frames --fps 24 \
        --out "$dir/conditioning.safetensors" --contract "$dir/contract.json" --contract-name "$case_name" \
        --transformer-model "$model" --seeds $seed --steps $steps > "$dir/export.log" 2>&1; then
      tail -40 "$dir/export.log"; echo "$case_name: export failed"; continue
    fi
    cat "$dir/export.log"
    step "$case_name: h3parity generate --device $device"
    if ! "$cli" generate --contract "$dir/contract.json" --impl provider --seed $seed --runs "$dir/runs" \
        --device "$device" > "$dir/generate.log" 2>&1; then
      tail -40 "$dir/generate.log"; echo "$case_name: generate failed"; continue
    fi
    tail -3 "$dir/generate.log"
    step "$case_name: diffusers pipeline --device $device"
    if ! python3 "$tools/pipeline_reference.py" run "${request[@]}" --frames $frames --steps $steps --seed $seed \
        --out "$dir/reference.safetensors" > "$dir/reference.log" 2>&1; then
      tail -40 "$dir/reference.log"; echo "$case_name: diffusers run failed"; continue
    fi
    cat "$dir/reference.log"
    python3 "$tools/pipeline_reference.py" compare --conditioning "$dir/conditioning.safetensors" \
      --reference "$dir/reference.safetensors" --run "$dir/runs/$case_name/provider/seed-$seed" \
      --label "$case_name" --json "$dir/compare.json" | tee "$dir/compare.log"
  done
done

# 4. One table.
echo
step "summary (steps=$steps, seed=$seed, ${width}x${height}, $frames frames)"
python3 "$tools/pipeline_reference.py" summary "${reports[@]}" | tee "$out/summary.txt"
exit "${PIPESTATUS[0]}"
