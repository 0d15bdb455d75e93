#!/usr/bin/env python3
"""Writes a provider and a candidate decoded-frames directory (the layout of a run's decoded/:
frames.rgb, frames.json, video.safetensors fp16 or fp32 (1, 3, F, H, W), audio.safetensors
(1, 2, S)) from synthetic content made by the ffmpeg CLI: noisy moving test pattern for the
provider, the same with extra noise for the candidate (or identical with --same). Standard
library only. Used by the compare benchmark and the e2e tests.

usage: make_decoded_pair.py OUT_DIR [--frames 124] [--width 1344] [--height 768]
         [--samples 165600] [--rate 32000] [--fp32] [--same]
         [--provider-dir DIR] [--candidate-dir DIR]
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def safetensors_header(name, dtype, shape, nbytes, metadata):
    header = {name: {"dtype": dtype, "shape": shape, "data_offsets": [0, nbytes]},
              "__metadata__": metadata}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def write_side(d, frames_rgb, args, audio):
    os.makedirs(d, exist_ok=True)
    size = f"{args.width}x{args.height}"
    os.replace(frames_rgb, os.path.join(d, "frames.rgb"))
    # Planes, channel-major: one grayf32 pass per channel (converted to fp16 unless --fp32).
    item = 4 if args.fp32 else 2
    plane_bytes = item * args.frames * args.height * args.width
    video = os.path.join(d, "video.safetensors")
    with open(video, "wb") as f:
        f.write(safetensors_header("video", "F32" if args.fp32 else "F16",
                                   [1, 3, args.frames, args.height, args.width],
                                   3 * plane_bytes, {"fps": "24", "range": "[0,1]"}))
        for channel in "rgb":
            proc = subprocess.Popen(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
                                     "-s", size, "-i", os.path.join(d, "frames.rgb"), "-vf",
                                     f"extractplanes={channel},format=grayf32le", "-f", "rawvideo",
                                     "-"], stdout=subprocess.PIPE)
            while True:
                chunk = proc.stdout.read(1 << 22)
                if not chunk:
                    break
                if args.fp32:
                    f.write(chunk)
                else:
                    n = len(chunk) // 4
                    f.write(struct.pack(f"<{n}e", *struct.unpack(f"<{n}f", chunk)))
            if proc.wait() != 0:
                raise SystemExit("ffmpeg failed")
    data = struct.pack(f"<{len(audio)}f", *audio)
    with open(os.path.join(d, "audio.safetensors"), "wb") as f:
        f.write(safetensors_header("audio", "F32", [1, 2, args.samples], len(data),
                                   {"sample_rate": str(args.rate)}))
        f.write(data)
    with open(os.path.join(d, "frames.json"), "w") as f:
        json.dump({"format": "rgb24", "width": args.width, "height": args.height,
                   "frames": args.frames, "fps": 24,
                   "frame_bytes": args.width * args.height * 3, "source": "synthetic"}, f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--frames", type=int, default=124)
    p.add_argument("--width", type=int, default=1344)
    p.add_argument("--height", type=int, default=768)
    p.add_argument("--samples", type=int, default=165600)
    p.add_argument("--rate", type=int, default=32000)
    p.add_argument("--fp32", action="store_true", help="store fp32 planes (default fp16)")
    p.add_argument("--same", action="store_true", help="candidate identical to the provider")
    p.add_argument("--provider-dir")
    p.add_argument("--candidate-dir")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    size = f"{args.width}x{args.height}"
    a = os.path.join(args.out, "provider.rgb")
    b = os.path.join(args.out, "candidate.rgb")
    run(["ffmpeg", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=24,noise=alls=40:allf=t",
         "-frames:v", str(args.frames), "-pix_fmt", "rgb24", "-f", "rawvideo", a])
    run(["ffmpeg", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", size, "-i", a, "-vf",
         "null" if args.same else "noise=alls=6:allf=t", "-pix_fmt", "rgb24", "-f", "rawvideo", b])
    n = args.samples
    left = [0.3 * math.sin(2 * math.pi * 440 * i / args.rate) for i in range(n)]
    right = [0.2 * math.sin(2 * math.pi * 660 * i / args.rate) for i in range(n)]
    provider_audio = left + right
    candidate_audio = provider_audio if args.same else [
        v + 1e-3 * math.sin(0.37 * i) for i, v in enumerate(provider_audio)]
    write_side(args.provider_dir or os.path.join(args.out, "provider"), a, args, provider_audio)
    write_side(args.candidate_dir or os.path.join(args.out, "candidate"), b, args, candidate_audio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
