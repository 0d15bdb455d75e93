#!/usr/bin/env bash
# e2e: the h3parity front runs `compare` of decoded clips itself, loading neither LibTorch nor
# FFmpeg; it hands every other command to h3parity-engine (LibTorch loaded there), as well as
# compare with --yuv libswscale, and without the engine beside it says so with exit 2. (compare
# of runs and of video files, handed over too, is checked in compare.sh.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

python3 "$H3P_SOURCE_DIR/tools/bench/make_decoded_pair.py" pair --frames 6 --width 64 \
  --height 48 --samples 4000

# 1. compare of clips: the shared objects the dynamic loader initialises hold no LibTorch.
LD_DEBUG=libs "$H3P_CLI" --progress none compare --candidate pair/candidate \
  --provider pair/provider --json cmp.json > cmp.txt 2> loader.log || fail "compare exited $?"
grep -q "calling init:" loader.log || fail "LD_DEBUG printed nothing; cannot check the loader"
if grep -E "calling init: .*lib(torch|c10|avcodec|avformat)" loader.log; then
  fail "the front loaded LibTorch or FFmpeg for a compare of clips"
fi
python3 -c "import json; r = json.load(open('cmp.json')); assert len(r['frames']) == 6, r"

# 2. Any other command is handed over: the engine (with LibTorch) answers it.
LD_DEBUG=libs "$H3P_CLI" schedule --help > schedule.txt 2> loader.log \
  || fail "schedule --help exited $?"
grep -qE "calling init: .*libtorch" loader.log || fail "schedule was not handed to the engine"
grep -q "schedule" schedule.txt || fail "schedule --help printed no help"

# 3. compare through libswscale needs FFmpeg: handed over, when this build has media.
if LD_DEBUG=libs "$H3P_CLI" --progress none compare --candidate pair/candidate \
    --provider pair/provider --yuv libswscale --json lib.json > lib.txt 2> loader.log; then
  grep -qE "calling init: .*libtorch" loader.log || fail "--yuv libswscale was not handed over"
  python3 -c "import json; r = json.load(open('lib.json')); assert len(r['frames']) == 6, r"
else
  grep -q "no FFmpeg" loader.log || fail "compare --yuv libswscale failed: $(tail -3 loader.log)"
fi

# 4. A front without its engine: a clear error and exit 2.
mkdir lone && cp "$H3P_CLI" lone/h3parity
expect_exit 2 lone/h3parity --progress none generate --help
grep -q "h3parity-engine" <<<"$LAST_ERR" || fail "the error does not name the engine: $LAST_ERR"
echo "ok: compare of clips without LibTorch; other commands handed to the engine"
