#!/usr/bin/env bash
# e2e: `init-model --decoders tiny|released|none`. none writes no vae/ or audio_vae/, and a
# contract on that model generates without decoding and says so; released writes the released
# decoder configs (checked through --dry-run, which prints what would be written: the weights
# are billions of parameters); tiny (the default) decodes, saying beforehand what it decodes and
# how long it should take; an unknown value is bad input.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# 1. none: the transformer only; generate ends with the latents.
"$H3P_CLI" --progress none init-model --preset tiny --decoders none --out M >/dev/null \
  || fail "init-model --decoders none exited $?"
[[ -f M/transformer/config.json && ! -e M/vae && ! -e M/audio_vae ]] \
  || fail "--decoders none wrote: $(find M)"
sed -e 's/"sampling_steps": 50/"sampling_steps": 4/' -e 's|"model": "preset:tiny"|"model": "M"|' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
out=$("$H3P_CLI" --progress none generate --contract c.json --seed 42 --runs R) \
  || fail "generate on a model without decoders exited $?"
echo "$out"
grep -q "not decoded: the model has no video decoder" <<<"$out" || fail "generate did not say it did not decode"
run=R/demo/provider/seed-42
[[ -f $run/latents.safetensors && ! -e $run/decoded/frames.json ]] || fail "run: $(find $run)"

# 2. released: the released widths, nothing written by --dry-run.
"$H3P_CLI" --progress none init-model --preset tiny --decoders released --dry-run --out Big \
  > plan.json || fail "init-model --decoders released --dry-run exited $?"
[[ ! -e Big ]] || fail "--dry-run wrote Big"
python3 - plan.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
v, a = p["vae"], p["audio_vae"]
assert v["_class_name"] == "AutoencoderKLMiniMaxH3", v["_class_name"]
assert v["decoder_num_attention_heads"] * v["decoder_attention_head_dim"] == 2048, v
assert v["decoder_num_layers"] == 36 and v["decoder_num_register_tokens"] == 4, v
assert v["latent_channels"] == 24 and v["clip_length"] == 17 and v["token_drop"] == 3, v
assert len(v["latents_mean"]) == 24 and len(v["latents_std"]) == 24, v
assert a["decoder_dim"] == 1024 and a["decoder_rates"] == [5, 5, 2, 2, 2, 2, 2], a
assert a["latent_channels"] == 32 and a["sampling_rate"] == 32000, a
n = p["parameters"]
assert n["vae"] > 1e9 and n["audio_vae"] > 1e7 and n["transformer"] > 0, n
print("released: vae %.2f B, audio_vae %.1f M parameters" % (n["vae"] / 1e9, n["audio_vae"] / 1e6))
PY
"$H3P_CLI" --progress none init-model --preset tiny --decoders none --dry-run --out X > none.json
python3 -c "import json,sys; p=json.load(open('none.json')); assert p['vae'] is None and p['audio_vae'] is None, p"

# 3. tiny (default): written, and a decode says what it decodes and how long it should take.
out=$("$H3P_CLI" --progress none init-model --preset tiny --out T) || fail "init-model exited $?"
grep -q "decoders tiny" <<<"$out" || fail "init-model did not describe its decoders: $out"
[[ -f T/vae/config.json && -f T/audio_vae/config.json ]] || fail "tiny decoders missing"
cmp <(python3 -c "import json; print(json.dumps(json.load(open('T/vae/config.json')), sort_keys=True))") \
    <("$H3P_CLI" --progress none init-model --preset tiny --dry-run --out Y \
      | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['vae'], sort_keys=True))") \
  || fail "--dry-run's vae config differs from the one written"
out=$("$H3P_CLI" --progress none decode --model T --latents $run/latents.safetensors --out d.safetensors) \
  || fail "decode exited $?"
echo "$out"
grep -Eq "^decoding video latents \[1, 24, [0-9]+, 6, 8\] \(32-wide 2-block decoder, [0-9]+ GFLOP\) and audio latents .* on cpu: (about|at most) [0-9]+ (s|min|h) " <<<"$out" \
  || fail "decode did not estimate its time up front: $out"

# 4. An unknown decoder preset.
expect_exit 2 "$H3P_CLI" --progress none init-model --preset tiny --decoders huge --out Z
grep -q "huge" <<<"$LAST_ERR" || fail "unknown --decoders not named: $LAST_ERR"
[[ ! -e Z ]] || fail "a refused init-model wrote Z"
echo "ok: --decoders none generates without decoding; released has the released widths; tiny decodes with an estimate; unknown refused"
