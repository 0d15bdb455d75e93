#!/usr/bin/env bash
# e2e (cuda): the candidate group by group on a GPU. A one-layer model at the released widths
# (preset full-shape) over a small geometry: a per-group spec generates on CUDA;
# `ablate --device cuda` replays step 0 with each group swapped back (interim=provider and
# all=provider bitwise the provider, embed and head being provider ops on CUDA) and with the
# provider's variants as rows; the CUDA candidate plugin's table (its four groups, the rest
# from the provider) matches the built-in candidate's with the same groups, row by row; the
# teacher-forced drift of every step carries the variants. H3P_ABLATE_GEOMETRY=full runs
# 1344x768x124. Skips without a GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
nvidia-smi -L >/dev/null 2>&1 || { echo "no CUDA device: skipped"; exit 77; }

frames=22 width=128 height=96
if [[ ${H3P_ABLATE_GEOMETRY:-} == full ]]; then frames=124 width=1344 height=768; fi
full_shape_contract abl $frames $width $height 5 > c.json
# The built-in candidate with the groups the CUDA plugin provides, the rest from the provider.
same_groups=candidate:adaln=provider,norm=provider,qk_norm=provider,rope=provider
plugin=plugin:h3p_cuda_candidate:rest=provider
gen() {
  "$H3P_CLI" --progress none generate --contract c.json --impl "$1" --seed 7 --runs R \
    --device cuda || fail "generate --impl $1 --device cuda exited $?"
}
for impl in provider candidate candidate:attention=provider "$same_groups"; do gen "$impl"; done
P=R/abl/provider/seed-7

start=$(date +%s)
"$H3P_CLI" --progress none ablate --candidate R/abl/candidate/seed-7 --provider $P --step 0 \
  --device cuda --json abl.json --markdown abl.md || fail "ablate --device cuda exited $?"
echo "step-0 table with variants: $(( $(date +%s) - start )) s"
python3 - abl.json <<'PY'
import json, sys
rows = {r["impl_spec"]: r for r in json.load(open(sys.argv[1]))["rows"]}
bitwise = lambda r: r["video"]["bitwise_equal"] and r["audio"]["bitwise_equal"]
for spec in ("provider", "candidate:all=provider", "candidate:interim=provider"):
    assert bitwise(rows[spec]), (spec, rows[spec])
assert not bitwise(rows["candidate"]), "the CUDA candidate is bitwise the provider"
for g in ("gemm", "attention", "swiglu", "adaln", "qk_norm", "rope", "norm", "residual"):
    r = rows["candidate:%s=provider" % g]
    assert not r["variant"] and r["video"]["finite"] and r["video"]["rel_l2"] < 5e-2, (g, r)
variants = [r for r in rows.values() if r["variant"]]
assert len(variants) >= 2, list(rows)
assert all("error" in r or r["video"]["finite"] for r in variants), variants
print("rows:", len(rows), "variants:", [r["impl_spec"] for r in variants])
PY
grep -q "(variant)" abl.md || fail "the markdown table does not mark the variants"

# The CUDA candidate plugin's table against the built-in candidate's with the same groups.
gen "$plugin"
python3 - R/abl > runs.txt <<'PY'
import json, os, sys
for d in sorted(os.listdir(sys.argv[1])):
    m = os.path.join(sys.argv[1], d, "seed-7", "manifest.json")
    if os.path.exists(m):
        print(json.load(open(m))["impl_spec"] + "\t" + os.path.dirname(m))
PY
run_of() { awk -F'\t' -v s="$1" '$1 == s {print $2}' runs.txt; }
for spec in "$same_groups" "$plugin"; do
  [[ -n $(run_of "$spec") ]] || fail "no run for $spec: $(cat runs.txt)"
  "$H3P_CLI" --progress none ablate --candidate "$(run_of "$spec")" --provider $P --step 0 \
    --device cuda --variants none --groups gemm,attention,swiglu,residual \
    --json "abl-$(cut -c1-6 <<<"$spec").json" || fail "ablate of $spec exited $?"
done
python3 - abl-candid.json abl-plugin.json <<'PY'
import json, sys
# Same rows in the same order: provider replay, as run, gemm, attention, swiglu, residual
# swapped back, interim, all; the figures must agree exactly.
cand, plug = (json.load(open(f))["rows"] for f in sys.argv[1:])
assert len(cand) == len(plug) == 8, ([r["impl_spec"] for r in cand], [r["impl_spec"] for r in plug])
for c, p in zip(cand, plug):
    a = (c["video"]["rel_l2"], c["audio"]["rel_l2"], c["video"]["max_abs"], c["audio"]["max_abs"])
    b = (p["video"]["rel_l2"], p["audio"]["rel_l2"], p["video"]["max_abs"], p["audio"]["max_abs"])
    print("%-60s %-60s video %.3e" % (c["impl_spec"], p["impl_spec"], a[0]))
    assert a == b, (c["impl_spec"], a, p["impl_spec"], b)
print("the CUDA plugin's step-0 table matches the built-in candidate's:", len(cand), "rows")
PY

"$H3P_CLI" --progress none ablate --candidate R/abl/candidate/seed-7 --provider $P --all-steps \
  --device cuda --variants provider:attention=efficient,provider:gemm=cublaslt --json drift.json \
  || fail "ablate --all-steps --device cuda exited $?"
python3 - drift.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
steps = d["steps"]
assert len(steps) == 4, len(steps)
for s in steps:
    assert len(s["variants"]) + len(d.get("variant_errors", [])) == 2, s
    print(s["step"], s["teacher_forced"]["video_rel_l2"], [v["video_rel_l2"] for v in s["variants"]])
PY
echo "ablate_cuda: passed"
