#!/usr/bin/env bash
# A stand-in for the h3parity CLI in job tests: checks that it is called as
# `fake_cli.sh --progress json <command> ...`, prints JSON progress lines on stderr and plain
# lines on stdout, and for `ablate ... --json FILE` writes a small ablation result to FILE.
# env: FAKE_STEPS (progress updates, default 3), FAKE_SLEEP (seconds between them, default 0),
#      FAKE_EXIT (exit code, default 0).
set -u
if [[ "${1:-}" != "--progress" || "${2:-}" != "json" ]]; then
  echo "error: expected --progress json first, got: $*" >&2
  exit 2
fi
shift 2
command=${1:-}
shift || true
json=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [[ "${args[i]}" == "--json" ]]; then json=${args[i + 1]:-}; fi
done
trap 'echo "terminated by SIGTERM"; exit 143' TERM
steps=${FAKE_STEPS:-3}
echo "fake $command: $*"
for ((s = 0; s < steps; s++)); do
  printf '{"progress":"%s","fraction":%s,"detail":"step %d/%d","elapsed_s":0.1}\n' \
    "$command" "$(awk -v s=$s -v n=$steps 'BEGIN{printf "%.4f", s/n}')" "$s" "$steps" >&2
  if [[ -n "${FAKE_SLEEP:-}" ]]; then sleep "$FAKE_SLEEP" & wait $!; fi
done
printf '{"progress":"%s","fraction":1.0,"detail":"done","elapsed_s":0.2}\n' "$command" >&2
echo "a plain stderr line" >&2
if [[ "$command" == "ablate" && -n "$json" ]]; then
  cat > "$json" <<JSON
{"candidate_run": "/r/c/candidate/seed-5", "candidate_spec": "candidate",
 "provider_run": "/r/c/provider/seed-5", "provider_spec": "provider", "step": 2,
 "rows": [
  {"impl_spec": "provider", "what": "replay", "seconds": 0.1,
   "video": {"rel_l2": 0.0, "max_abs": 0.0, "bitwise_equal": true},
   "audio": {"rel_l2": 0.0, "max_abs": 0.0, "bitwise_equal": true}},
  {"impl_spec": "candidate", "what": "every group", "seconds": 0.2,
   "video": {"rel_l2": 0.004, "max_abs": 0.02, "bitwise_equal": false},
   "audio": {"rel_l2": 0.003, "max_abs": 0.01, "bitwise_equal": false}},
  {"impl_spec": "candidate:attention=provider", "what": "attention from the provider", "seconds": 0.2,
   "video": {"rel_l2": 0.001, "max_abs": 0.01, "bitwise_equal": false},
   "audio": {"rel_l2": 0.002, "max_abs": 0.01, "bitwise_equal": false}}],
 "free_running": {"video": {"rel_l2": 0.005, "max_abs": 0.03, "bitwise_equal": false},
                  "audio": {"rel_l2": 0.004, "max_abs": 0.02, "bitwise_equal": false}}}
JSON
fi
echo "finished $command"
exit "${FAKE_EXIT:-0}"
