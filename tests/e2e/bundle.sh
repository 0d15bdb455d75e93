#!/usr/bin/env bash
# e2e: `h3parity bundle` turns a small demo (3 steps, one seed, a provider variant for the noise
# floor) plus a preflight into one publishable directory: `sha256sum -c SHA256SUMS` passes inside
# it and fails after one byte changes; neither the host name, the user name nor the runs
# directory's absolute path (which holds both) appears anywhere in it; redaction.json lists each
# class it replaced; the figures are PNGs of the stated size with real content; tests.json is
# CTest's JUnit counted per label, or says that none was found; bad input exits 2 naming the path.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

host=$(hostname)
user=$(id -un)
base=$PWD/$host/$user
runs=$base/R
mkdir -p "$base"
sed -e 's/"sampling_steps": 50/"sampling_steps": 3/' -e 's/"seeds": \[42, 43, 44\]/"seeds": [42]/' \
  "$H3P_SOURCE_DIR/resources/contracts/demo.json" > c.json
"$H3P_CLI" --progress none demo --runs "$runs" --contract c.json > demo.txt || fail "demo exited $?"
"$H3P_CLI" --progress none generate --contract c.json --impl provider:attention=math --seed 42 \
  --runs "$runs" > /dev/null || fail "generate of the variant exited $?"
"$H3P_CLI" --progress none preflight --contract c.json --impl provider --impl candidate \
  --canvas 64x64 --calls 1 --work "$base" --json "$base/preflight.json" > /dev/null \
  || fail "preflight exited $?"
# A Slurm-style job log beside the runs, naming the host and a job id.
mkdir -p "$runs/slurm/logs"
echo "[2026-01-01T00:00:00Z] job 4242 (array 4242_0, restart 1): start on $host: seed index 0, submitted by $user" \
  > "$runs/slurm/logs/demo-4242_0.out"
# Test results of a real CTest run of this build (one quick test), as scripts/test.sh makes them.
ctest --test-dir "$H3P_BINARY_DIR" -R '^cli_help$' --output-junit "$PWD/junit.xml" > /dev/null \
  || fail "ctest cli_help failed"
ctest --test-dir "$H3P_BINARY_DIR" --show-only=json-v1 > ctest-tests.json
python3 "$H3P_SOURCE_DIR/scripts/ctest-results.py" --out tests.json --commit test --build-type Release \
  --stage default Release junit.xml ctest-tests.json || fail "ctest-results.py exited $?"

B=$PWD/out/bundle
status=0
"$H3P_CLI" --progress none bundle "$runs" --out "$B" --preflight "$base/preflight.json" \
  --tests tests.json --width 640 --height 480 > bundle.txt || status=$?
cat bundle.txt
[[ $status == 0 ]] || fail "bundle exited $status"
[[ -z $(ls -A out | grep -v '^bundle$') ]] || fail "staging left behind: $(ls -A out)"

# Checksums: every file listed, all verify from inside the bundle.
(cd "$B" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not verify"
listed=$(cut -c67- "$B/SHA256SUMS" | sort)
present=$(cd "$B" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort)
[[ $listed == "$present" ]] || fail "SHA256SUMS does not list exactly the bundle's files"
for f in report.md report.json bundle.json redaction.json tests.json \
         runs/demo/provider/seed-42/manifest.json runs/demo/candidate/seed-42/manifest.json \
         "runs/demo/provider@attention=math/seed-42/manifest.json"; do
  [[ -f $B/$f ]] || fail "$f missing from the bundle"
done
[[ ! -e $B/runs/demo/provider/seed-42/steps ]] || fail "step files copied into the bundle"
ls "$B"/runs/report/comparisons/demo/candidate/seed-42.json > /dev/null || fail "comparison missing"

# Nothing identifying is left.
for word in "$host" "$user"; do
  if grep -rlw -- "$word" "$B" | grep -v '\.png$'; then fail "'$word' left in the files above"; fi
done
if grep -rlF -- "$runs" "$B"; then fail "the runs path is left in the files above"; fi
if grep -rlF -- "$base" "$B"; then fail "the runs' parent path is left in the files above"; fi
has_tool=0
[[ -x $(dirname "$H3P_CLI")/h3parity-figures ]] && has_tool=1
python3 - "$B" "$has_tool" <<'PY'
import json, sys
b = sys.argv[1]
has_tool = sys.argv[2] == "1"
red = json.load(open(f"{b}/redaction.json"))
assert red["applied_before_checksums"] is True
for kind in ("host", "user", "path", "slurm"):
    assert red["totals"].get(kind, 0) > 0, (kind, red["totals"])
for rule in red["rules"]:
    assert set(rule) >= {"class", "rule", "placeholder", "replacements"}, rule
manifest = json.load(open(f"{b}/runs/demo/candidate/seed-42/manifest.json"))
assert manifest["environment"]["hostname"] == "<HOST>", manifest["environment"]["hostname"]
log = open(f"{b}/logs/slurm/logs/demo-<SLURM_JOB>_0.out").read()
assert "4242" not in log and "<SLURM_JOB>" in log and "<HOST>" in log, log

bundle = json.load(open(f"{b}/bundle.json"))
assert len(bundle["runs"]) == 3, bundle["runs"]
for run in bundle["runs"]:
    assert run["h3parity_commit"] not in ("", "not recorded"), run
    assert run["origin"] == "h3parity" and len(run["contract_digest"]) == 64, run
    assert len(run["identity"]["weights_digest"]) == 64, run
    assert run["identity"]["weights_source"] is None, run  # weight files, not seeded
report = json.load(open(f"{b}/report.json"))
gen = report["bundle"]["generation"]
assert all(g["complete"] and g["verified"] and g["saved_steps"] == g["planned_steps"] for g in gen), gen
assert len(report["bundle"]["preflight"]) == 2, report["bundle"]["preflight"]
assert report["noise_floor"], "no noise floor table"
tests = json.load(open(f"{b}/tests.json"))
assert tests["found"] and tests["stages"][0]["labels"]["e2e"]["passed"] == 1, tests

# Figures: the stated size, more than one colour.
import struct, zlib
fig = bundle["figures"]
md = open(f"{b}/report.md").read()
if not has_tool:  # a build without Qt: said plainly, no figures
    assert fig["rendered"] is False and "not beside" in fig["note"], fig
    assert "Figures were not rendered" in md
    print("bundle JSON and redaction consistent; figures not rendered (no Qt), as stated")
    sys.exit(0)
assert fig["rendered"] is True, fig
kinds = {f["kind"] for f in fig["files"]}
assert kinds == {"frame_metrics", "step_drift", "ablation"}, kinds
def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4]); kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]; pos += 12 + n
        if kind == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT": idat += body
    w, h, depth, ctype = ihdr[:4]
    assert depth == 8 and ctype in (2, 6), ihdr
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat); stride = w * bpp
    prev = bytearray(stride); colours = set()
    for y in range(h):
        f = raw[y * (stride + 1)]; line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0; up = prev[i]; c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + up) & 255
            elif f == 3: line[i] = (line[i] + (a + up) // 2) & 255
            elif f == 4:
                p = a + up - c; pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        if y % 8 == 0:
            colours.update(bytes(line[i:i + bpp]) for i in range(0, stride, bpp * 4))
        prev = line
    return w, h, len(colours)
for f in fig["files"]:
    w, h, n = pixels(f"{b}/figures/{f['file']}")
    assert (w, h) == (640, 480), (f["file"], w, h)
    assert n > 1, (f["file"], "blank")
for f in fig["files"]:
    assert f"](figures/{f['file']})" in md, f["file"]
assert "/" + "tmp/" not in md
print("bundle JSON, redaction and figures consistent")
PY

# One changed byte fails the check.
printf 'x' >> "$B/runs/demo/candidate/seed-42/manifest.json"
if (cd "$B" && sha256sum -c --quiet SHA256SUMS 2>/dev/null); then fail "a changed file still verifies"; fi

# Without --tests and outside a build tree with tests.json, the bundle says so (checked when the
# build tree has none; scripts/test.sh writes one).
if [[ ! -f $H3P_BINARY_DIR/tests.json ]]; then
  "$H3P_CLI" --progress none bundle "$runs" --out B2 > /dev/null || fail "bundle without tests exited $?"
  python3 -c 'import json,sys; t=json.load(open("B2/tests.json")); assert not t["found"] and t["reason"], t'
  grep -q "No test results" B2/report.md || fail "report.md does not say no tests were found"
fi

# Bad input: exit 2, naming the path.
expect_exit 2 "$H3P_CLI" bundle missing-runs --out B3
grep -q "missing-runs" <<<"$LAST_ERR" || fail "missing RUNS not named: $LAST_ERR"
expect_exit 2 "$H3P_CLI" bundle "$runs" --out "$runs/inside"
grep -q "$runs/inside" <<<"$LAST_ERR" || fail "--out inside RUNS not named: $LAST_ERR"
[[ ! -e $runs/inside ]] || fail "--out inside RUNS was created"
mkdir -p full && touch full/x
expect_exit 2 "$H3P_CLI" bundle "$runs" --out full
grep -q "full" <<<"$LAST_ERR" || fail "non-empty --out not named: $LAST_ERR"
expect_exit 2 "$H3P_CLI" bundle "$runs" --out B4 --tests nope.json
grep -q "nope.json" <<<"$LAST_ERR" || fail "missing --tests not named: $LAST_ERR"
echo "bundle e2e passed"
