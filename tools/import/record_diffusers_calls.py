#!/usr/bin/env python3
"""Records every transformer call of a diffusers MiniMax-H3 pipeline as h3parity call files.

    from record_diffusers_calls import record_transformer_calls
    with record_transformer_calls(pipe.transformer, "calls/"):
        pipe(...)          # one transformer forward per step
    # then: h3parity import --calls calls/ --contract C.json --seed N --runs RUNS --label diffusers

A forward pre-hook keeps the call's keyword arguments and a forward hook its outputs; each call
is written as calls/NNN.safetensors (000, 001, ... in call order) holding

  inputs   hidden_states (1, Nv, 96), audio_hidden_states (1, Na, 32),
           encoder_hidden_states (1, L, text_dim), timestep (n,), timestep_indices (S,),
           token_tags (S,), position_ids (S, 3), video_indices (Nv,), audio_indices (Na,),
           text_indices (L,)  -- as the pipeline passed them: names, dtypes, shapes, values
  outputs  sample (1, Nv, 96) and audio_sample (1, Na, 32), float32

which is h3parity's transformer call file (docs/import.md; core/model/call_file.h reads it).
Nothing is converted except the outputs to float32, so `h3parity import` can require every
recorded input to equal its own replay bit for bit. Requires torch, safetensors and diffusers;
`--check DIR` validates a directory of recorded files with the standard library only.
"""
import contextlib
import json
import os
import struct
import sys

INPUTS = ("hidden_states", "audio_hidden_states", "encoder_hidden_states", "timestep",
          "timestep_indices", "token_tags", "position_ids", "video_indices", "audio_indices",
          "text_indices")
OUTPUTS = ("sample", "audio_sample")


@contextlib.contextmanager
def record_transformer_calls(transformer, out_dir, metadata=None):
    """Writes one call file per forward of `transformer` into `out_dir` while the block runs."""
    import torch
    from safetensors.torch import save_file

    os.makedirs(out_dir, exist_ok=True)
    pending, count = {}, [0]

    def before(module, args, kwargs):
        missing = [name for name in INPUTS if not torch.is_tensor(kwargs.get(name))]
        if args or missing:
            raise RuntimeError("transformer called without the keyword inputs %s" % missing)
        pending["inputs"] = {name: kwargs[name].detach().cpu().contiguous() for name in INPUTS}

    def after(module, args, kwargs, output):
        sample, audio_sample = output[:2] if isinstance(output, tuple) else (output.sample, output.audio_sample)
        tensors = dict(pending.pop("inputs"))
        tensors["sample"] = sample.detach().float().cpu().contiguous()
        tensors["audio_sample"] = audio_sample.detach().float().cpu().contiguous()
        meta = {"format": "h3parity-call", "step": str(count[0]), "generator": "record_diffusers_calls.py"}
        meta.update({k: str(v) for k, v in (metadata or {}).items()})
        path = os.path.join(out_dir, "%03d.safetensors" % count[0])
        save_file(tensors, path + ".tmp", metadata=meta)
        os.replace(path + ".tmp", path)
        count[0] += 1

    hooks = [transformer.register_forward_pre_hook(before, with_kwargs=True),
             transformer.register_forward_hook(after, with_kwargs=True)]
    try:
        yield out_dir
    finally:
        for hook in hooks:
            hook.remove()


def check(out_dir):
    """Every NNN.safetensors from 000 holds the inputs and float32 outputs; returns the count."""
    names = sorted(f for f in os.listdir(out_dir) if f.endswith(".safetensors"))
    for step, name in enumerate(names):
        if name != "%03d.safetensors" % step:
            raise SystemExit("%s: expected %03d.safetensors (a gap in the numbering)" % (name, step))
        with open(os.path.join(out_dir, name), "rb") as f:
            (size,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(size))
        for key in INPUTS + OUTPUTS:
            if key not in header:
                raise SystemExit("%s: field '%s' missing" % (name, key))
        for key in OUTPUTS:
            if header[key]["dtype"] != "F32":
                raise SystemExit("%s: field '%s' is %s, not F32" % (name, key, header[key]["dtype"]))
        if header["hidden_states"]["shape"][0] != 1:
            raise SystemExit("%s: field 'hidden_states' has no batch dimension 1" % name)
    return len(names)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--check":
        raise SystemExit(__doc__)
    print("%s: %d call files" % (sys.argv[2], check(sys.argv[2])))
