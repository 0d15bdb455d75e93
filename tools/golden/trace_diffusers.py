#!/usr/bin/env python3
"""Trace one MiniMax-H3 transformer call through diffusers, stage by stage.

Runs a call file (the diffusers forward arguments, as h3parity writes and reads them) through
`MiniMaxH3Transformer3DModel` on the chosen device and writes the intermediate stages under
the names `h3parity call --trace` uses, so the two can be compared stage by stage with
tools/golden/compare_traces.py:
  video_embeds, audio_embeds, text_embeds, refiner.<i>.attn|ff|out, refiner.final, temb,
  blocks.<i>.attn|ff|out, norm_out, sample, audio_sample
Leading batch dimensions of size 1 are dropped.

Usage: PYTHONPATH=<diffusers>/src python3 tools/golden/trace_diffusers.py \
           --model DIR --call CALL.safetensors --device cpu|cuda --out TRACE.safetensors
"""

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")

import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

from diffusers import MiniMaxH3Transformer3DModel  # noqa: E402

ARGUMENTS = ["hidden_states", "audio_hidden_states", "encoder_hidden_states", "timestep",
             "timestep_indices", "token_tags", "position_ids", "video_indices", "audio_indices",
             "text_indices"]


def squeeze_batch(t):
    while t.dim() > 2 and t.shape[0] == 1:
        t = t[0]
    return t


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="model dir (with transformer/) or transformer/")
    parser.add_argument("--call", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    model_dir = args.model
    if os.path.isdir(os.path.join(model_dir, "transformer")):
        model_dir = os.path.join(model_dir, "transformer")
    model = MiniMaxH3Transformer3DModel.from_pretrained(model_dir, torch_dtype=torch.bfloat16)
    # from_pretrained with bfloat16 keeps the fp32 modules; a pure fp32 checkpoint is reloaded so.
    stored = load_file(os.path.join(model_dir, "diffusion_pytorch_model.safetensors"))
    if all(t.dtype == torch.float32 for t in stored.values()):
        model = MiniMaxH3Transformer3DModel.from_pretrained(model_dir, torch_dtype=torch.float32)
    model = model.to(args.device).eval()

    stages = {}

    def keep(name):
        def hook(_module, _inputs, output):
            out = output[0] if isinstance(output, tuple) else output
            stages[name] = squeeze_batch(out.detach()).to("cpu").contiguous()
        return hook

    model.proj_in.register_forward_hook(keep("video_embeds"))
    model.audio_proj_in.register_forward_hook(keep("audio_embeds"))
    model.context_embedder.register_forward_hook(keep("text_embeds"))
    for i, block in enumerate(model.token_refiner.refiner_blocks):
        block.attn.register_forward_hook(keep("refiner.%d.attn" % i))
        block.ff.register_forward_hook(keep("refiner.%d.ff" % i))
        block.register_forward_hook(keep("refiner.%d.out" % i))
    model.token_refiner.final_norm.register_forward_hook(keep("refiner.final"))
    model.time_embedder.register_forward_hook(keep("temb"))
    for i, block in enumerate(model.transformer_blocks):
        block.attn.register_forward_hook(keep("blocks.%d.attn" % i))
        block.ff.register_forward_hook(keep("blocks.%d.ff" % i))
        block.register_forward_hook(keep("blocks.%d.out" % i))
    model.norm_out.register_forward_hook(keep("norm_out"))

    call = load_file(args.call)
    inputs = {name: call[name].to(args.device) for name in ARGUMENTS}
    with torch.no_grad():
        sample, audio_sample = model(**inputs, return_dict=False)
    stages["sample"] = squeeze_batch(sample).to("cpu").contiguous()
    stages["audio_sample"] = squeeze_batch(audio_sample).to("cpu").contiguous()
    save_file(stages, args.out, metadata={"torch": torch.__version__, "device": args.device})
    print("traced %d stages of %s on %s -> %s" % (len(stages), args.call, args.device, args.out))


if __name__ == "__main__":
    main()
