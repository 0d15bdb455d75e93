# Shared helpers of the e2e scripts (sourced).
fail() { echo "FAIL: $*" >&2; exit 1; }

# sha256 of every file under a run directory, sorted by path (the lock file excluded).
tree_digest() {
  (cd "$1" && find . -type f ! -name .lock -print0 | sort -z | xargs -0 sha256sum)
}

# Runs a command that must exit with `want`; prints its stderr into $LAST_ERR.
expect_exit() {
  local want=$1; shift
  local status=0
  LAST_ERR=$("$@" 2>&1 >/dev/null) || status=$?
  [[ $status == "$want" ]] || fail "'$*' exited $status, want $want: $LAST_ERR"
}

# The bf16 tolerance of the CPU gates that must pass (their subject is the gate's mechanics, not
# its threshold): twice the default 2e-2, because the provider's own block error against the fp32
# reference depends on the CPU: Debian's LibTorch 1.13 without AVX-512 puts it at 2.1e-2 on the
# demo model's first block, above the default, and the CPU candidate 2.1e-2 from the provider.
CPU_GATE_TOLERANCE=(--tolerance bf16=4e-2)

# For the plugin tests: the demo contract with 8 sampling steps as c.json, the misbehaving test
# plugins' directory in $bad, and `gen RUNS SPEC` generating its seed 42.
plugin_test_setup() {
  sed -e 's/"sampling_steps": 50/"sampling_steps": 8/' \
    "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
  bad=$H3P_BINARY_DIR/tests/core/ops/plugins
  gen() { "$H3P_CLI" --progress none generate --contract c.json --seed 42 --runs "$1" --impl "$2"; }
}

# The demo contract on the full-shape preset (released widths, one layer), seed 7, written to
# stdout: `full_shape_contract NAME FRAMES WIDTH HEIGHT GRID_POINTS > c.json`.
full_shape_contract() {
  sed -e 's/"preset:tiny"/"preset:full-shape"/' -e "s/\"frames\": 124/\"frames\": $2/" \
      -e "s/\"width\": [0-9]*/\"width\": $3/" -e "s/\"height\": [0-9]*/\"height\": $4/" \
      -e "s/\"sampling_steps\": 50/\"sampling_steps\": $5/" -e 's/"seeds": \[42, 43, 44\]/"seeds": [7]/' \
      -e "s/\"name\": \"demo\"/\"name\": \"$1\"/" \
    "$H3P_SOURCE_DIR/resources/contracts/demo.json"
}
