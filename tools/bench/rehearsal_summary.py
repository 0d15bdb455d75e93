#!/usr/bin/env python3
"""Table of a full-size rehearsal (tools/bench/rehearsal_full.sh) with projections.

Reads OUT/timings-*.json (generate --timings), OUT/files2-bytes.txt and OUT/timing.log and writes
OUT/rehearsal.md and OUT/rehearsal.json: per run the identity hashing, load, median call and
median step (call, inputs, save), decode, step-store bytes and peak host and GPU memory; then the
projection of each run to 50 grid points (49 calls: load + 49 steps + decode) and of hashing and
loading to the released 61.7 GB checkpoint at the rates measured on weight files. A rehearsal with
fewer than 50 blocks (what fits the device) is also projected to 50: calls scale with the blocks
(embed and head counted as blocks: an upper bound), and peak GPU memory grows by one block's
weights per block (from the checkpoint's and the two-block files' sizes: activations and a
candidate's own per-block buffers not included, a lower bound).
usage: rehearsal_summary.py OUT LAYERS GRID
"""
import glob
import json
import os
import re
import statistics
import sys

CHECKPOINT_BYTES = 61.7e9  # the released transformer in bf16
FULL_CALLS = 49            # 50 grid points
FULL_BLOCKS = 50           # the released transformer's blocks
FILES_BLOCKS = 2           # blocks in the weight files of the hashing stage


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    out, layers, grid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rows, summary = [], {"layers": layers, "grid_points": grid, "runs": {}}
    for path in sorted(glob.glob(os.path.join(out, "timings-*.json"))):
        name = os.path.basename(path)[len("timings-"):-len(".json")]
        t = load(path)
        computed = [c for c in t["calls"] if not c["replayed"]]
        if not computed:
            continue
        call = statistics.median(c["seconds"] for c in computed)
        step = statistics.median(c["wall_seconds"] for c in computed)
        stages = t["stages"]
        decode = stages.get("decode_seconds", 0.0)
        run = {
            "identity_seconds": stages.get("identity_seconds"),
            "load_seconds": stages.get("load_seconds"),
            "calls": len(computed),
            "median_call_seconds": call,
            "median_step_seconds": step,
            "decode_seconds": decode,
            "step_store_bytes": t["step_store_bytes"],
            "peak_host_bytes": t["peak_host_bytes"],
            "peak_device_bytes": t.get("peak_device_bytes"),
            "total_seconds": t["total_seconds"],
        }
        if name != "files2":
            run["projected_50_points_seconds"] = stages.get("load_seconds", 0) + FULL_CALLS * step + decode
            run["projected_50_points_step_store_bytes"] = t["step_store_bytes"] / len(t["calls"]) * FULL_CALLS
        summary["runs"][name] = run
    files = summary["runs"].get("files2")
    if files and os.path.exists(os.path.join(out, "files2-bytes.txt")):
        size = int(open(os.path.join(out, "files2-bytes.txt")).read().split()[0])
        summary["weight_files"] = {
            "bytes": size,
            "hash_bytes_per_second": size / files["identity_seconds"],
            "load_bytes_per_second": size / files["load_seconds"],
            "projected_checkpoint_hash_seconds": CHECKPOINT_BYTES / (size / files["identity_seconds"]),
            "projected_checkpoint_load_seconds": CHECKPOINT_BYTES / (size / files["load_seconds"]),
        }
    w = summary.get("weight_files")
    if layers < FULL_BLOCKS:
        block_bytes = (CHECKPOINT_BYTES - w["bytes"]) / (FULL_BLOCKS - FILES_BLOCKS) if w else None
        summary["block_weight_bytes"] = block_bytes
        for name, r in summary["runs"].items():
            if name == "files2":
                continue
            scale = FULL_BLOCKS / layers
            r["projected_50_blocks"] = {
                "call_seconds": r["median_call_seconds"] * scale,
                "50_points_seconds": r["load_seconds"] + FULL_CALLS * r["median_step_seconds"] * scale
                + r["decode_seconds"],
                "peak_device_bytes_at_least": None if block_bytes is None or r["peak_device_bytes"] is None
                else r["peak_device_bytes"] + (FULL_BLOCKS - layers) * block_bytes,
            }
    timing = {}
    if os.path.exists(os.path.join(out, "timing.log")):
        for line in open(os.path.join(out, "timing.log")):
            m = re.match(r"(.*): (\d+) ms$", line.strip())
            if m:
                timing[m.group(1)] = int(m.group(2)) / 1000
    summary["wall_seconds"] = timing

    gb = lambda b: "" if b is None else f"{b / 1e9:.1f}"
    lines = [f"| run | identity s | load s | calls | call s (median) | step s (median) | decode s "
             f"| step store GB | peak host GB | peak GPU GB | 50 points, projected |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in summary["runs"].items():
        proj = r.get("projected_50_points_seconds")
        lines.append(
            f"| `{name}` | {r['identity_seconds']:.2f} | {r['load_seconds']:.1f} | {r['calls']} | "
            f"{r['median_call_seconds']:.2f} | {r['median_step_seconds']:.2f} | {r['decode_seconds']:.1f} | "
            f"{gb(r['step_store_bytes'])} | {gb(r['peak_host_bytes'])} | {gb(r['peak_device_bytes'])} | "
            + (f"{proj / 60:.1f} min, {gb(r['projected_50_points_step_store_bytes'])} GB |" if proj else "|"))
    if layers < FULL_BLOCKS:
        lines += ["", f"Projected from {layers} to {FULL_BLOCKS} blocks (calls x {FULL_BLOCKS}/{layers}, an upper bound; "
                  "peak GPU plus the added blocks' weights, a lower bound):", "",
                  "| run | call s | 50 points | peak GPU GB, at least |", "|---|---|---|---|"]
        for name, r in summary["runs"].items():
            p = r.get("projected_50_blocks")
            if p:
                lines.append(f"| `{name}` | {p['call_seconds']:.2f} | {p['50_points_seconds'] / 60:.1f} min | "
                             f"{gb(p['peak_device_bytes_at_least'])} |")
    if w:
        lines += ["", f"Weight files ({w['bytes'] / 1e9:.2f} GB, two released-width blocks): hashed at "
                  f"{w['hash_bytes_per_second'] / 1e9:.2f} GB/s, loaded at {w['load_bytes_per_second'] / 1e9:.2f} GB/s; "
                  f"the 61.7 GB checkpoint projects to {w['projected_checkpoint_hash_seconds']:.0f} s of hashing "
                  f"and {w['projected_checkpoint_load_seconds']:.0f} s of loading per process start."]
    if timing:
        lines += ["", "| stage | wall s |", "|---|---|"] + [f"| {k} | {v:.1f} |" for k, v in timing.items()]
    with open(os.path.join(out, "rehearsal.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "rehearsal.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
