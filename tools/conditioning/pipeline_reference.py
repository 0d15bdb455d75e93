#!/usr/bin/env python3
"""The diffusers side of the conditioning parity check (tools/conditioning/parity.sh).

Subcommands:
  keyframes  write two deterministic keyframe PNGs (first.png at the canvas aspect, larger than
             the canvas; last.png at another aspect), so both keyframe placements of the
             pipeline's canvas step (stretch, cover-crop) are exercised
  run        run the diffusers MiniMax-H3 modular pipeline end to end from a prompt (and
             keyframes) up to the final latents, recording every transformer call, and write it
             all as one reference safetensors file
  compare    compare an exported conditioning file, the reference file and an h3parity run
             directory stage by stage; exit 0 only when every tensor is bitwise equal
  summary    print one table over the JSON reports of several compares; exit 0 only if all passed

Usage (diffusers source tree on PYTHONPATH, local files only):
    python3 tools/conditioning/pipeline_reference.py keyframes --out DIR --width 128 --height 96
    PYTHONPATH=<diffusers>/src python3 tools/conditioning/pipeline_reference.py run --model MODEL \\
        --prompt "..." [--first F.png --last L.png] --width 128 --height 96 --frames 124 \\
        --steps 6 --seed 42 --device cuda --out reference.safetensors
    python3 tools/conditioning/pipeline_reference.py compare --conditioning C.safetensors \\
        --reference reference.safetensors --run RUNS/<contract>/provider/seed-42 --label t2va-cuda
"""

import argparse
import glob
import json
import os
import sys
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_conditioning as exporter  # noqa: E402

# The transformer forward arguments h3parity's call files hold (model::call_input_names), and its outputs.
CALL_INPUTS = ("hidden_states", "audio_hidden_states", "encoder_hidden_states", "timestep", "timestep_indices",
               "token_tags", "position_ids", "video_indices", "audio_indices", "text_indices")
CALL_OUTPUTS = ("sample", "audio_sample")


# ---------------------------------------------------------------------------------------------
# keyframes
# ---------------------------------------------------------------------------------------------


def keyframe_pixels(width, height, seed, phase):
    """A smooth colour field with a bright disc and a little texture; deterministic in its arguments."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    u, v = x / max(width - 1, 1), y / max(height - 1, 1)
    red = 0.5 + 0.5 * np.sin(2 * np.pi * (u + phase))
    green = 0.5 + 0.5 * np.cos(2 * np.pi * (v * 1.5 - phase))
    blue = 0.5 + 0.5 * np.sin(2 * np.pi * (u + v) * 0.75)
    cx, cy, radius = width * (0.3 + 0.4 * phase), height * 0.5, 0.22 * min(width, height)
    disc = ((x - cx) ** 2 + (y - cy) ** 2) < radius ** 2
    image = np.stack([red, green, blue], axis=-1)
    image[disc] = 0.15 + 0.8 * image[disc] ** 0.3
    image += 0.04 * rng.standard_normal(image.shape)
    return (np.clip(image, 0.0, 1.0) * 255.0).round().astype(np.uint8)


def cmd_keyframes(args):
    from PIL import Image

    os.makedirs(args.out, exist_ok=True)
    # First: the canvas aspect at 5/4 of its size (stretched onto the canvas). Last: a wider
    # aspect (cover-cropped onto the canvas).
    plans = (("first.png", args.width * 5 // 4, args.height * 5 // 4, 11, 0.0),
             ("last.png", args.width * 3 // 2, args.height, 12, 0.6))
    for name, width, height, seed, phase in plans:
        path = os.path.join(args.out, name)
        Image.fromarray(keyframe_pixels(width, height, seed, phase), "RGB").save(path)
        print(f"wrote {path}: {width}x{height}")
    return 0


# ---------------------------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------------------------


def safetensors_dtypes(path):
    """The dtype names ("BF16", "F32", ...) a safetensors file stores, read from its header."""
    import struct

    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    return {entry["dtype"] for name, entry in header.items() if name != "__metadata__"}


def stored_transformer_dtype(folder):
    """bf16 when the checkpoint stores any bf16 tensor (the mixed-precision layout), else fp32."""
    import torch

    files = sorted(glob.glob(os.path.join(folder, "*.safetensors")))
    if not files:
        raise exporter.InputProblem(f"{folder}: no .safetensors weights (diffusers loads weight files only; "
                                    "write the model with `h3parity init-model` weight files)")
    dtypes = set().union(*(safetensors_dtypes(path) for path in files))
    return torch.bfloat16 if "BF16" in dtypes else torch.float32


def load_denoise_components(model_dir, device, video_shift, audio_shift):
    """The transformer at its stored precision, and the two schedules with the contract's shifts."""
    from diffusers import MiniMaxH3Scheduler, MiniMaxH3Transformer3DModel

    folder = exporter.component_dir(model_dir, "transformer", exporter.index_subfolders(model_dir))
    dtype = stored_transformer_dtype(folder)
    transformer = MiniMaxH3Transformer3DModel.from_pretrained(folder, torch_dtype=dtype, local_files_only=True)
    return {
        "transformer": transformer.to(device).eval(),
        "scheduler": MiniMaxH3Scheduler(shift=video_shift),
        "audio_scheduler": MiniMaxH3Scheduler(shift=audio_shift),
    }


def generation_blocks():
    """MiniMaxH3Blocks without its decode stage: the run ends at the final latents."""
    from diffusers.modular_pipelines.minimax_h3.modular_blocks_minimax_h3 import MiniMaxH3Blocks

    blocks = MiniMaxH3Blocks()
    blocks.sub_blocks.pop("decode")
    return blocks


class CallRecorder:
    """Hooks on the transformer: every call's keyword inputs (before the forward) and outputs
    (after it), copied to the CPU."""

    def __init__(self, transformer):
        self.calls, self.pending = [], None
        self.handles = [transformer.register_forward_pre_hook(self.before, with_kwargs=True),
                        transformer.register_forward_hook(self.after, with_kwargs=True)]

    @staticmethod
    def copy(value):
        return value.detach().clone().cpu()

    def before(self, module, args, kwargs):
        if args:
            raise RuntimeError("the transformer was called with positional arguments; the recorder reads keywords")
        self.pending = {name: self.copy(kwargs[name]) for name in CALL_INPUTS if kwargs.get(name) is not None}

    def after(self, module, args, kwargs, output):
        outputs = output[:2] if isinstance(output, (tuple, list)) else (output.sample, output.audio_sample)
        record, self.pending = self.pending, None
        record.update({name: self.copy(value) for name, value in zip(CALL_OUTPUTS, outputs)})
        self.calls.append(record)

    def close(self):
        for handle in self.handles:
            handle.remove()


def redraw_noise(seed, condition_shapes, video_shape, audio_rows_shape):
    """The request generator's draws in the pipeline's order: one per condition, the video
    latents, the audio rows (CPU generator, float32), named as h3parity's inputs/noise file."""
    import torch
    from diffusers.utils.torch_utils import randn_tensor

    gen = torch.Generator("cpu").manual_seed(seed)
    cpu = torch.device("cpu")
    noise = {}
    for index, shape in enumerate(condition_shapes):
        noise[f"keyframe_noise_{index}"] = randn_tensor(shape, generator=gen, device=cpu, dtype=torch.float32)
    noise["video_noise"] = randn_tensor(video_shape, generator=gen, device=cpu, dtype=torch.float32)
    noise["audio_noise_rows"] = randn_tensor(audio_rows_shape, generator=gen, device=cpu, dtype=torch.float32)
    return noise


def reference_tensors(out, calls, noise):
    import torch

    tensors = {
        "prompt_embeds": out["prompt_embeds"],
        "text_token_tags": out["text_token_tags"],
        "latents": out["latents"],
        "audio_latents": out["audio_latents"],
        "timesteps": out["timesteps"],
        "audio_timesteps": out["audio_timesteps"],
    }
    if out.get("condition_latents"):
        tensors["condition_latents"] = torch.cat([c.float().cpu() for c in out["condition_latents"]], dim=2)
    tensors.update({f"noise.{name}": value for name, value in noise.items()})
    for index, record in enumerate(calls):
        tensors.update({f"call{index:03d}.{name}": value for name, value in record.items()})
    return {name: value.detach().cpu().contiguous() for name, value in tensors.items()}


def cmd_run(args):
    import torch
    from safetensors.torch import save_file

    exporter.check_request(args)
    keyframes, facts = exporter.load_keyframes(args)
    exporter.import_stack()
    device = exporter.resolve_device(args.device)
    components, _ = exporter.load_encoder_components(args.model, device, exporter.torch_dtype(args.dtype),
                                                     bool(keyframes))
    components.update(load_denoise_components(args.model, device, args.video_shift, args.audio_shift))
    pipe = exporter.build_pipeline(generation_blocks(), components)
    recorder = CallRecorder(pipe.transformer)
    generator = torch.Generator("cpu").manual_seed(args.seed)
    names = ["prompt_embeds", "text_token_tags", "condition_latents", "keyframe_anchors", "latents",
             "audio_latents", "timesteps", "audio_timesteps"]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pipe(prompt=args.prompt, image=keyframes[0] if keyframes else None,
                   last_image=keyframes[1] if len(keyframes) > 1 else None, height=args.height, width=args.width,
                   num_frames=args.frames, num_inference_steps=args.steps, generator=generator, output=names)
    recorder.close()

    conditions = [tuple(c.shape) for c in (out.get("condition_latents") or [])]
    audio_latents = out["audio_latents"]  # (channels, audio_latent_channels, num_audio_latents)
    audio_rows = (audio_latents.shape[0] * audio_latents.shape[2], audio_latents.shape[1])
    noise = redraw_noise(args.seed, conditions, tuple(out["latents"].shape), audio_rows)
    tensors = reference_tensors(out, recorder.calls, noise)
    meta = {
        "generator": "tools/conditioning/pipeline_reference.py",
        "workflow": "fl2va" if keyframes else "t2va",
        "seed": str(args.seed),
        "device": args.device,
        "num_calls": str(len(recorder.calls)),
        "keyframe_anchors": ",".join(out.get("keyframe_anchors") or ()),
        "prompt": args.prompt,
        "keyframes": ",".join(f["sha256"] for f in facts),
        "transformer_dtype": str(pipe.transformer.dtype).replace("torch.", ""),
        "torch": torch.__version__,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    save_file(tensors, args.out, metadata=meta)
    print(f"wrote {args.out}: {len(recorder.calls)} transformer calls, latents {tuple(out['latents'].shape)}, "
          f"audio_latents {tuple(audio_latents.shape)}, prompt_embeds {tuple(out['prompt_embeds'].shape)}")
    return 0


# ---------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------


def diff(name, want, got):
    """One comparison: bitwise after promotion to a common dtype; max |diff| when not equal."""
    import torch

    row = {"tensor": name, "equal": False, "note": ""}
    if want is None or got is None:
        row["note"] = "missing in the " + ("reference" if want is None else "h3parity/exported") + " side"
        return row
    if tuple(want.shape) != tuple(got.shape):
        row["note"] = f"shape {tuple(want.shape)} vs {tuple(got.shape)}"
        return row
    if want.dtype != got.dtype:
        row["note"] = f"dtype {str(want.dtype)[6:]} vs {str(got.dtype)[6:]}"
        common = torch.promote_types(want.dtype, got.dtype)
        want, got = want.to(common), got.to(common)
    row["equal"] = bool(torch.equal(want, got))
    if not row["equal"] and want.numel():
        delta = (want.double() - got.double()).abs()
        row["max_abs"] = float(delta[torch.isfinite(delta)].max()) if torch.isfinite(delta).any() else float("nan")
        row["num_differ"] = int((want != got).sum())
    return row


def load(path):
    from safetensors.torch import load_file

    return load_file(path) if os.path.isfile(path) else {}


def compare_conditioning(cond, ref):
    rows = [diff("encoder_hidden_states = prompt_embeds", ref.get("prompt_embeds"), cond.get("encoder_hidden_states")),
            diff("text_token_tags", ref.get("text_token_tags"), cond.get("text_token_tags"))]
    if "condition_latents" in ref or "keyframe_latents" in cond:
        rows.append(diff("keyframe_latents = condition_latents", ref.get("condition_latents"),
                         cond.get("keyframe_latents")))
    return rows


def compare_run_inputs(cond, run_cond):
    return [diff(f"{name} (as the run read it)", cond[name], run_cond.get(name)) for name in sorted(cond)]


def compare_noise(ref, run_noise):
    names = sorted(n[len("noise."):] for n in ref if n.startswith("noise."))
    return [diff(name, ref[f"noise.{name}"], run_noise.get(name)) for name in names]


def compare_steps(ref, run_dir):
    """Per call and tensor: the first step that differs. Returns rows and the first differing step."""
    num_ref = len({n.split(".")[0] for n in ref if n.startswith("call")})
    files = sorted(glob.glob(os.path.join(run_dir, "steps", "[0-9][0-9][0-9]*.safetensors")))
    rows, first_bad = [], None
    per_tensor = {}
    for index in range(max(num_ref, len(files))):
        saved = load(files[index]) if index < len(files) else {}
        for name in CALL_INPUTS + CALL_OUTPUTS:
            want = ref.get(f"call{index:03d}.{name}")
            got = saved.get(name)
            if want is None and got is None:
                continue
            if got is None and name in CALL_INPUTS and index < len(files):
                continue  # inputs not saved for this step (--save-inputs first|none)
            row = diff(name, want, got)
            entry = per_tensor.setdefault(name, {"tensor": f"step {name}", "equal": True, "note": "", "steps": 0})
            entry["steps"] += 1
            if not row["equal"] and entry["equal"]:
                entry.update(equal=False, first_step=index, note=row["note"],
                             **{k: row[k] for k in ("max_abs", "num_differ") if k in row})
                first_bad = index if first_bad is None else min(first_bad, index)
    rows.extend(per_tensor.values())
    if num_ref != len(files):
        rows.append({"tensor": "number of calls", "equal": False, "note": f"reference {num_ref}, h3parity {len(files)}"})
    return rows, first_bad


def compare_final(ref, run_latents):
    return [diff(name, ref.get(name), run_latents.get(name)) for name in ("latents", "audio_latents")]


def format_row(row):
    if row["equal"]:
        verdict = "bitwise equal"
    elif "max_abs" in row:
        verdict = f"DIFFERS max|diff| {row['max_abs']:.3g} ({row.get('num_differ', '?')} values)"
    else:
        verdict = "DIFFERS"
    if "first_step" in row:
        verdict += f", first at step {row['first_step']}"
    if "steps" in row:
        verdict += f" [{row['steps']} steps]"
    note = f"  ({row['note']})" if row.get("note") else ""
    return f"  {row['tensor']:<44} {verdict}{note}"


def cmd_compare(args):
    cond, ref = load(args.conditioning), load(args.reference)
    run_cond = load(os.path.join(args.run, "inputs", "conditioning.safetensors"))
    run_noise = load(os.path.join(args.run, "inputs", "noise.safetensors"))
    run_latents = load(os.path.join(args.run, "latents.safetensors"))
    missing = [path for path, value in ((args.conditioning, cond), (args.reference, ref),
                                        (os.path.join(args.run, "latents.safetensors"), run_latents)) if not value]
    stages = {}
    if missing:
        stages["files"] = [{"tensor": path, "equal": False, "note": "missing or empty"} for path in missing]
    stages["1 conditioning: exported vs the pipeline's own"] = compare_conditioning(cond, ref)
    stages["2 conditioning: exported vs the run's inputs"] = compare_run_inputs(cond, run_cond)
    stages["3 initial noise: h3parity vs the pipeline's generator"] = compare_noise(ref, run_noise)
    step_rows, first_bad = compare_steps(ref, args.run)
    stages["4 transformer calls: h3parity steps vs the pipeline's"] = step_rows
    stages["5 final latents: h3parity vs the pipeline"] = compare_final(ref, run_latents)

    print(f"== {args.label}")
    first_stage = None
    for stage, rows in stages.items():
        print(f" {stage}")
        for row in rows:
            print(format_row(row))
        if first_stage is None and not all(row["equal"] for row in rows):
            first_stage = stage
    passed = first_stage is None
    print(f" {args.label}: " + ("PASS, everything bitwise equal" if passed else f"FAIL, first differing stage: {first_stage}"
                                 + (f" (step {first_bad})" if first_bad is not None else "")))
    report = {"label": args.label, "passed": passed, "first_differing_stage": first_stage,
              "first_differing_step": first_bad, "stages": stages}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0 if passed else 1


def stage_cell(rows):
    if all(row["equal"] for row in rows):
        return "equal"
    worst = max((row.get("max_abs", float("nan")) for row in rows if not row["equal"]), default=float("nan"))
    return f"max {worst:.2g}" if worst == worst else "DIFFERS"


def cmd_summary(args):
    columns = (("conditioning", "1 "), ("run inputs", "2 "), ("noise", "3 "), ("calls", "4 "), ("final", "5 "))
    print(f"{'case':<16}" + "".join(f"{title:<14}" for title, _ in columns) + "verdict")
    all_passed = bool(args.reports)
    for path in args.reports:
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError):
            print(f"{os.path.basename(os.path.dirname(path)) or path:<16}" + "no report".ljust(14 * len(columns)) + "FAIL")
            all_passed = False
            continue
        cells = []
        for _, prefix in columns:
            rows = [row for stage, stage_rows in report["stages"].items() if stage.startswith(prefix)
                    for row in stage_rows]
            cells.append(stage_cell(rows) if rows else "-")
        verdict = "PASS" if report["passed"] else "FAIL"
        if not report["passed"] and report.get("first_differing_step") is not None:
            verdict += f" (step {report['first_differing_step']})"
        print(f"{report['label']:<16}" + "".join(f"{cell:<14}" for cell in cells) + verdict)
        all_passed = all_passed and report["passed"]
    print("all cases bitwise equal" if all_passed else "parity FAILED")
    return 0 if all_passed else 1


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    sub = parser.add_subparsers(dest="command", required=True)

    keyframes = sub.add_parser("keyframes", help="write first.png and last.png")
    keyframes.add_argument("--out", required=True, help="folder to write into")
    keyframes.add_argument("--width", type=int, required=True)
    keyframes.add_argument("--height", type=int, required=True)

    run = sub.add_parser("run", help="run the diffusers pipeline and write the reference file")
    exporter.add_request_arguments(run)
    run.add_argument("--frames", type=int, default=124)
    run.add_argument("--steps", type=int, required=True, help="num_inference_steps (the contract's sampling_steps)")
    run.add_argument("--video-shift", type=float, default=12.0)
    run.add_argument("--audio-shift", type=float, default=3.0)
    run.add_argument("--seed", type=int, required=True)
    run.add_argument("--out", required=True, help="reference .safetensors to write")

    compare = sub.add_parser("compare", help="compare exported conditioning, reference and an h3parity run")
    compare.add_argument("--conditioning", required=True)
    compare.add_argument("--reference", required=True)
    compare.add_argument("--run", required=True, help="h3parity run directory (RUNS/<contract>/<impl>/seed-<n>)")
    compare.add_argument("--label", default="case")
    compare.add_argument("--json", help="write the report here")

    summary = sub.add_parser("summary", help="one table over compare reports")
    summary.add_argument("reports", nargs="*")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    commands = {"keyframes": cmd_keyframes, "run": cmd_run, "compare": cmd_compare, "summary": cmd_summary}
    try:
        return commands[args.command](args)
    except exporter.InputProblem as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
