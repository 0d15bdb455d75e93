#!/usr/bin/env python3
"""Reference decode of a model directory's video and audio VAEs through diffusers' own decode steps.

Loads `vae/` and `audio_vae/` of MODEL with diffusers' `from_pretrained` (fp32, as the released
VAEs are stored), draws normalised latents from a CPU generator, and decodes them as the modular
pipeline's `MiniMaxH3VideoDecodeStep` and `MiniMaxH3AudioDecodeStep` do (fp16 autocast on CUDA,
the VAE's default tiling of 256 px tiles with >= 64 px overlap, 5+2-frame chunks with their
crossfade). Writes one safetensors file holding the inputs (`latents`, `audio_latents`) and the
outputs (`video`, `audio`), which `h3parity decode --latents FILE` decodes again and compares
against, and prints the time and peak GPU memory of each decode as JSON.

Usage (diffusers source tree on PYTHONPATH, no network needed):
    PYTHONPATH=<diffusers>/src python3 tools/golden/decoder_parity.py --model DIR \\
        --latent-shape 12x20x24 --audio-latents 207 --device cuda --out ref.safetensors
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")

import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden_decoders import audio_block, video_block  # noqa: E402

from diffusers.models import AutoencoderKLMiniMaxH3, AutoencoderKLMiniMaxH3Audio  # noqa: E402


def parse_shape(text):
    """'TxHxW' latent frames, rows and columns -> (1, 24, T, H, W)."""
    try:
        t, h, w = (int(x) for x in text.split("x"))
    except ValueError:
        raise SystemExit(f"--latent-shape: expected TxHxW, got '{text}'")
    if (t - 2) % 5 != 0 or t < 2 or h < 1 or w < 1:
        raise SystemExit(f"--latent-shape: T must be 5n+2 and H, W positive, got '{text}'")
    return (1, 24, t, h, w)


def timed(device, fn):
    """(result, seconds, peak GPU bytes or None) of fn() on `device`."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    out = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    return out, seconds, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="model directory with vae/ and audio_vae/")
    ap.add_argument("--latent-shape", default="12x20x24", help="video latents TxHxW (T = 5n+2)")
    ap.add_argument("--audio-latents", type=int, default=207, help="audio latents per channel")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=300, help="latent seed (CPU generator)")
    ap.add_argument("--out", required=True, help="safetensors file to write")
    args = ap.parse_args()
    device = torch.device(args.device)
    for sub in ("vae", "audio_vae"):
        if not os.path.isfile(os.path.join(args.model, sub, "config.json")):
            raise SystemExit(f"{args.model}/{sub}: no config.json")

    gen = torch.Generator("cpu").manual_seed(args.seed)
    latents = torch.randn(parse_shape(args.latent_shape), generator=gen)
    audio_latents = torch.randn((2, 32, args.audio_latents), generator=gen)

    figures = {"device": str(device), "torch": torch.__version__}
    vae, seconds, _ = timed(device, lambda: AutoencoderKLMiniMaxH3.from_pretrained(
        os.path.join(args.model, "vae"), torch_dtype=torch.float32).to(device).eval())
    figures["video_load_seconds"] = seconds
    video, seconds, peak = timed(device, lambda: video_block(vae, latents, device))
    figures.update(video_seconds=seconds, video_peak_gpu_bytes=peak, video_shape=list(video.shape))
    del vae
    audio_vae, _, _ = timed(device, lambda: AutoencoderKLMiniMaxH3Audio.from_pretrained(
        os.path.join(args.model, "audio_vae"), torch_dtype=torch.float32).to(device).eval())
    audio, seconds, peak = timed(device, lambda: audio_block(audio_vae, audio_latents, device))
    figures.update(audio_seconds=seconds, audio_peak_gpu_bytes=peak, audio_shape=list(audio.shape))

    tensors = {"latents": latents, "audio_latents": audio_latents,
               "video": video.float().cpu().contiguous(), "audio": audio.float().cpu().reshape(1, 2, -1).contiguous()}
    save_file(tensors, args.out, metadata={"torch": torch.__version__, "device": str(device),
                                           "decoder": "diffusers MiniMaxH3 decode steps"})
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
