#!/usr/bin/env bash
# e2e: candidate plugins that misbehave, as a kernel team meets them through the CLI.
#  1. Bad plugins: exit 2 with the plugin and the broken rule named, and no run directory when
#     the plugin cannot be loaded; a group failing mid-run leaves no step written.
#  2. A plugin that kills the process mid-run loses no saved step; the resumed run equals an
#     uninterrupted one.
#  3. A moved plugin (same bytes) is re-bound by adopt; a changed one is refused by generate,
#     adopt and ablate, naming the manifest field.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

plugin_test_setup

# 1. The refusal matrix: nothing is created when the plugin cannot be loaded.
refuse() {  # refuse SPEC NEEDLE [extra args]
  local spec=$1 needle=$2; shift 2
  expect_exit 2 "$H3P_CLI" --progress none generate --contract c.json --seed 42 --runs B --impl "$spec" "$@"
  grep -qF -- "$needle" <<<"$LAST_ERR" || fail "'$spec': message lacks '$needle': $LAST_ERR"
}
refuse plugin:$bad/libmisbehaving_no_entry.so "no entry point 'h3p_candidate_plugin'"
refuse plugin:$bad/libmisbehaving_wrong_abi.so "abi_version 2.0 is not supported"
refuse plugin:$bad/libmisbehaving_create_fails.so "create failed (status 1): no licence for this GPU"
refuse plugin:$bad/libmisbehaving_missing_prim.so "group 'adaln' is provided but lacks gather_rows"
refuse plugin:$bad/libmisbehaving_attention_only.so "does not provide these groups: gemm swiglu adaln"
refuse plugin:no_such_plugin "no plugin library named 'no_such_plugin'"
refuse plugin:/nonexistent/libk.so "not found"
[[ ! -e B ]] || fail "a refused plugin left files: $(find B | head)"
# Failing inside a call: the manifest and inputs stay, no step is written, and the error names
# the plugin, its group and primitive.
refuse plugin:$bad/libmisbehaving_error_status.so:rest=provider \
  "plugin 'misbehaving-error_status' ($bad/libmisbehaving_error_status.so): group 'attention': attention: returned status 1: attention kernel: launch failed (simulated)"
refuse plugin:$bad/libmisbehaving_nan_output.so:rest=provider "holds NaN or Inf; rerun with --check-plugin"
refuse plugin:$bad/libmisbehaving_nan_output.so:rest=provider "group 'attention': attention: output" --check-plugin
refuse plugin:$bad/libmisbehaving_writes_outside.so:rest=provider "wrote outside its output" --check-plugin
refuse plugin:$bad/libmisbehaving_writes_input.so:rest=provider "wrote into its 1st input" --check-plugin
[[ -z $(find B -path "*/steps/*" -type f) ]] || fail "a failing plugin left step files: $(find B -path "*/steps/*" -type f)"

# 2. A plugin that kills the process mid-run, then the resume; the same library uninterrupted.
crash=plugin:$bad/libmisbehaving_crash_after.so:rest=provider
dir=K/demo/plugin@libmisbehaving_crash_after.so@rest=provider/seed-42
status=0
H3P_TEST_CRASH_AT_CALL=7 gen K "$crash" >/dev/null 2>&1 || status=$?
[[ $status == 137 ]] || fail "the crashing plugin's run exited $status, want 137 (SIGKILL)"
saved=$(ls $dir/steps/*.json | wc -l)
[[ $saved -ge 1 && $saved -lt 7 ]] || fail "expected some saved steps after the crash, got $saved"
out=$(gen K "$crash") || fail "resume after the crash exited $?"
grep -q "$saved replayed from disk" <<<"$out" || fail "resume did not replay the $saved saved steps: $out"
gen U "$crash" >/dev/null
cmp $dir/latents.safetensors U/demo/plugin@libmisbehaving_crash_after.so@rest=provider/seed-42/latents.safetensors ||
  fail "the resumed run differs from an uninterrupted one"

# 3. A plugin that moved (same bytes) is re-bound by adopt; one with other bytes continues
# nothing: generate, adopt and ablate refuse it, naming the manifest field.
gen R provider >/dev/null
cp "$(dirname "$H3P_CLI")/plugins/libh3p_candidate.so" mine.so
H3P_PLUGIN_PATH=$PWD gen G plugin:mine.so >/dev/null
mkdir moved && mv mine.so moved/
run=G/demo/plugin@mine.so/seed-42
expect_exit 2 env H3P_PLUGIN_PATH=$PWD/moved "$H3P_CLI" --progress none generate --contract c.json \
  --seed 42 --runs G --impl plugin:mine.so
grep -q "field 'plugin.library'" <<<"$LAST_ERR" || fail "moved plugin: $LAST_ERR"
out=$(H3P_PLUGIN_PATH=$PWD/moved "$H3P_CLI" adopt $run) || fail "adopt of a moved plugin exited $?"
grep -q "plugin: the same bytes found at another place" <<<"$out" || fail "adopt: $out"
out=$(H3P_PLUGIN_PATH=$PWD/moved gen G plugin:mine.so) || fail "generate after adopt exited $?"
grep -q "7 replayed from disk, 0 computed" <<<"$out" || fail "after adopt: $out"
printf 'changed' >> moved/mine.so
expect_exit 2 env H3P_PLUGIN_PATH=$PWD/moved "$H3P_CLI" --progress none generate --contract c.json \
  --seed 42 --runs G --impl plugin:mine.so
grep -q "field 'plugin.library_sha256'" <<<"$LAST_ERR" || fail "changed plugin: $LAST_ERR"
grep -q "a changed plugin does not continue a run" <<<"$LAST_ERR" || fail "changed plugin: $LAST_ERR"
expect_exit 1 env H3P_PLUGIN_PATH=$PWD/moved "$H3P_CLI" adopt $run
grep -q "not the bytes the run was made with" <<<"$LAST_ERR" || fail "adopt of a changed plugin: $LAST_ERR"
expect_exit 2 env H3P_PLUGIN_PATH=$PWD/moved "$H3P_CLI" --progress none ablate --candidate $run \
  --provider R/demo/provider/seed-42 --step 0
grep -q "field 'plugin'" <<<"$LAST_ERR" || fail "ablate of a changed plugin: $LAST_ERR"
echo "plugin refusals: all checks passed"
