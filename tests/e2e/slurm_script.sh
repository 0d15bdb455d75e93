#!/usr/bin/env bash
# e2e: `slurm generate` without --submit pins the job to one node type in the script it writes:
# --constraint becomes `#SBATCH --constraint=...` verbatim, --gpus N with --gpu-type TYPE
# `#SBATCH --gres=gpu:TYPE:N`. What would break the script or lose the pin is refused (exit 2)
# and writes no job: a constraint with whitespace, a newline or shell syntax, --gpu-type
# without --gpus or outside [A-Za-z0-9_.-], an --sbatch-arg repeating --constraint or the GPUs.
# Needs no cluster and no GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sed -e 's/"sampling_steps": 50/"sampling_steps": 8/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
render() { "$H3P_CLI" slurm generate --contract c.json --runs R "$@"; }

# 1. The lines, once each, among the #SBATCH lines (before the first command).
out=$(render --out J1 --constraint '[h200|h100]&ib' --gpus 2 --gpu-type h200) \
  || fail "slurm generate --constraint --gpus --gpu-type exited $?"
script=$(sed -n 's/^generate script: //p' <<<"$out")
[[ -f $script ]] || fail "no script in: $out"
header=$(sed '/^set -uo pipefail/q' "$script")
[[ $(grep -cxF '#SBATCH --constraint=[h200|h100]&ib' <<<"$header") == 1 ]] \
  || fail "want one '#SBATCH --constraint=[h200|h100]&ib' in:"$'\n'"$header"
[[ $(grep -cxF '#SBATCH --gres=gpu:h200:2' <<<"$header") == 1 ]] \
  || fail "want one '#SBATCH --gres=gpu:h200:2' in:"$'\n'"$header"
[[ $(grep -c -- '--gres' "$script") == 1 ]] || fail "more than one --gres in $script"

# --gpus alone: an untyped request; neither option: no such lines.
render --out J2 --gpus 1 >/dev/null || fail "slurm generate --gpus 1 exited $?"
grep -qxF '#SBATCH --gres=gpu:1' J2/*.sbatch || fail "--gpus 1: no '#SBATCH --gres=gpu:1'"
render --out J3 >/dev/null || fail "plain slurm generate exited $?"
! grep -Eq -- '--constraint|--gres' J3/*.sbatch || fail "a plain render pins: $(grep -E -- '--constraint|--gres' J3/*.sbatch)"

# --accept-new-numerics reaches the generate command of every task; without it, it does not.
render --out J5 --accept-new-numerics >/dev/null || fail "slurm generate --accept-new-numerics exited $?"
grep -q -- '--seed-index .*--accept-new-numerics' J5/*.sbatch || fail "--accept-new-numerics not passed on"
! grep -q -- '--accept-new-numerics' J3/*.sbatch || fail "a plain render accepts new numerics"

# resume-check and compare take the options too.
"$H3P_CLI" slurm resume-check --contract c.json --runs R --out J4 --gpus 1 --gpu-type h200 \
  --constraint h200 >/dev/null || fail "slurm resume-check with the pin exited $?"
grep -qxF '#SBATCH --gres=gpu:h200:1' J4/resume-check-*.sbatch || fail "resume-check: no typed --gres"
grep -qxF '#SBATCH --constraint=h200' J4/resume-check-*.sbatch || fail "resume-check: no --constraint"

# 2. Refusals: exit 2, the option named, no job written.
refuse() {  # refuse WHAT_THE_ERROR_NAMES ARGS...
  local want=$1; shift
  rm -rf JX
  expect_exit 2 render --out JX "$@"
  grep -qF -- "$want" <<<"$LAST_ERR" || fail "'$*': the error does not name $want: $LAST_ERR"
  [[ ! -e JX ]] || fail "'$*' was refused but wrote $(find JX | head -3)"
}
refuse --constraint --constraint 'h200 ib'
refuse --constraint --constraint $'h200\n#SBATCH --partition=other'
refuse --constraint --constraint 'h200;touch x'
refuse --constraint --constraint 'h200$(id)'
refuse --constraint --constraint '"h200"'
refuse --gpu-type --gpu-type h200
refuse --gpu-type --gpu-type h200 --sbatch-arg=--gres=gpu:1
refuse --gpu-type --gpus 1 --gpu-type 'h200:2'
refuse --gpu-type --gpus 1 --gpu-type 'h2$0'
refuse --gpus --gpus -1
refuse --sbatch-arg --constraint h200 --sbatch-arg=--constraint=h100
refuse --sbatch-arg --gpus 1 --sbatch-arg=--gres=gpu:2
[[ ! -e x ]] || fail "a constraint ran a command"
echo "ok: --constraint and --gpu-type in the #SBATCH lines; bad values refused with exit 2"
