#!/usr/bin/env python3
"""Generate the golden reference data the C++ provider is tested against.

Runs the real diffusers MiniMax-H3 code (transformer, scheduler and the modular pipeline's layout,
timestep and denoise-loop blocks) on a tiny, deterministically initialised model and writes every
tensor as safetensors under --out. The layout of --out is the layout of tests/data/golden/; its
README.md lists each file.

Usage (diffusers source tree on PYTHONPATH, no network needed):
    PYTHONPATH=<diffusers>/src HF_HUB_OFFLINE=1 python3 tools/golden/make_golden.py --out <dir>

CUDA is optional: without it the "-cuda" call files and the CPU/CUDA comparison are skipped.
"""

import argparse
import copy
import json
import os
import platform
import sys
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")

import numpy as np  # noqa: E402
import safetensors  # noqa: E402
import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

import diffusers  # noqa: E402
from diffusers import MiniMaxH3Scheduler, MiniMaxH3Transformer3DModel  # noqa: E402
from diffusers.modular_pipelines.minimax_h3.before_denoise import (  # noqa: E402
    MiniMaxH3PrepareLayoutStep,
    MiniMaxH3SetTimestepsStep,
    patchify_video_latents,
)
from diffusers.modular_pipelines.minimax_h3.denoise import (  # noqa: E402
    MiniMaxH3LoopDenoiser,
    MiniMaxH3LoopSchedulerStep,
)
from diffusers.modular_pipelines.minimax_h3.modular_pipeline import (  # noqa: E402
    MINIMAX_H3_AUDIO_CHANNELS,
    MINIMAX_H3_AUDIO_TAG,
    MINIMAX_H3_VIDEO_TAG,
    align_num_frames,
    audio_latent_num_frames,
    video_latent_num_frames,
)
from diffusers.modular_pipelines.modular_pipeline import BlockState  # noqa: E402
from diffusers.utils.torch_utils import randn_tensor  # noqa: E402


# The project's `tiny` transformer config (real latent widths).
TINY_CONFIG = dict(
    num_attention_heads=2,
    attention_head_dim=32,
    hidden_size=48,
    num_layers=2,
    num_refiner_layers=2,
    ffn_dim=128,
    in_channels=24,
    audio_in_channels=32,
    patch_size=(1, 2, 2),
    text_dim=48,
    freq_dim=16,
    time_embed_hidden_dim=64,
    time_embed_dim=32,
    rope_freq_dim=4,
    rope_theta=10000.0,
)
FP32_PREFIXES = ("proj_in", "audio_proj_in", "time_embedder", "proj_out", "audio_proj_out")

FP32_DIR = "tiny-fp32/transformer"
MIXED_DIR = "tiny-mixed/transformer"

# Pipeline constants (video VAE chunking, fps, keyframe noise level, schedule shifts).
FRAMES_PER_CHUNK = 17
LATENTS_PER_CHUNK = 5
SPATIAL_RATIO = 16
LATENT_CHANNELS = 24
AUDIO_LATENT_CHANNELS = 32
KEYFRAME_NOISE_AUG = 0.999
VIDEO_SHIFT = 12.0
AUDIO_SHIFT = 3.0
NUM_GRID_POINTS = 50

GEOMETRY = dict(num_frames=22, width=128, height=96)
LAYOUTS = {
    "A": dict(text_token_tags=[1] * 12, keyframe_anchors=()),
    "B": dict(text_token_tags=[1] * 7 + [0] * 3, keyframe_anchors=("first",)),
}
INPUT_SEEDS = {"A": 100, "B": 200}

RESULTS = {"errors": []}


def i64(value):
    return torch.tensor([int(value)], dtype=torch.int64)


def save(path, tensors, meta):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    clean = {k: v.detach().cpu().contiguous().clone() for k, v in tensors.items()}
    save_file(clean, path, metadata={k: str(v) for k, v in meta.items()})
    print(f"wrote {path}: " + ", ".join(f"{k}{tuple(v.shape)}:{str(v.dtype)[6:]}" for k, v in clean.items()))


def rel_l2(ref, other):
    ref = ref.detach().cpu().double()
    other = other.detach().cpu().double()
    denom = ref.norm().item()
    return (ref - other).norm().item() / denom if denom else float("nan")


def max_abs(ref, other):
    return (ref.detach().cpu().double() - other.detach().cpu().double()).abs().max().item()


def base_meta(device, model_dir=""):
    meta = {
        "torch": torch.__version__,
        "diffusers": RESULTS["diffusers_commit"],
        "diffusers_version": diffusers.__version__,
        "device": device,
        "generator": "tools/golden/make_golden.py",
    }
    if model_dir:
        meta["model_dir"] = model_dir
    return meta


def section(name):
    def wrap(fn):
        def run(*args, **kwargs):
            print(f"== {name}", flush=True)
            try:
                return fn(*args, **kwargs)
            except Exception:  # keep going: one broken part must not cost the others
                RESULTS["errors"].append({"section": name, "trace": traceback.format_exc()})
                traceback.print_exc()
                return None

        return run

    return wrap


# ---------------------------------------------------------------------------------------------
# 1. Models
# ---------------------------------------------------------------------------------------------


def reinit_parameters(model, seed=1234):
    """Every parameter gets a deterministic draw of noticeable magnitude (AdaLN zero-inits hide bugs)."""
    gen = torch.Generator("cpu").manual_seed(seed)
    touched = set()
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Linear):
                module.weight.copy_(torch.randn(module.weight.shape, generator=gen) * 0.2)
                touched.add(id(module.weight))
                if module.bias is not None:
                    module.bias.copy_(torch.randn(module.bias.shape, generator=gen) * 0.1)
                    touched.add(id(module.bias))
            elif isinstance(module, torch.nn.RMSNorm):
                if module.weight is not None:
                    module.weight.copy_(1.0 + 0.1 * torch.randn(module.weight.shape, generator=gen))
                    touched.add(id(module.weight))
    missing = [n for n, p in model.named_parameters() if id(p) not in touched]
    if missing:
        raise RuntimeError(f"parameters not re-initialised: {missing}")


def strip_name_or_path(model_dir):
    path = os.path.join(model_dir, "config.json")
    with open(path) as f:
        config = json.load(f)
    config.pop("_name_or_path", None)
    with open(path, "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")


@section("models")
def make_models():
    torch.manual_seed(0)
    model = MiniMaxH3Transformer3DModel(**TINY_CONFIG)
    reinit_parameters(model)
    model = model.to(torch.float32).eval()
    model.save_pretrained(FP32_DIR, safe_serialization=True)
    strip_name_or_path(FP32_DIR)

    # Mixed precision: let `_keep_in_fp32_modules` decide while casting the rest to bf16.
    mixed = MiniMaxH3Transformer3DModel.from_pretrained(FP32_DIR, torch_dtype=torch.bfloat16)
    mixed.save_pretrained(MIXED_DIR, safe_serialization=True)
    strip_name_or_path(MIXED_DIR)

    fp32_state = load_file(os.path.join(FP32_DIR, "diffusion_pytorch_model.safetensors"))
    mixed_state = load_file(os.path.join(MIXED_DIR, "diffusion_pytorch_model.safetensors"))
    report = {"num_tensors": len(mixed_state), "num_parameters": sum(v.numel() for v in fp32_state.values())}
    bad = []
    for name, tensor in mixed_state.items():
        want = torch.float32 if name.split(".")[0] in FP32_PREFIXES else torch.bfloat16
        if tensor.dtype != want:
            bad.append(f"{name}: {tensor.dtype} (want {want})")
        if not torch.equal(tensor, fp32_state[name].to(want)):
            bad.append(f"{name}: values are not the rounded fp32 weights")
    if set(mixed_state) != set(fp32_state):
        bad.append("key sets differ between tiny-fp32 and tiny-mixed")
    for name, tensor in fp32_state.items():
        if tensor.dtype != torch.float32:
            bad.append(f"fp32 file {name}: {tensor.dtype}")
    report["fp32_tensors"] = sorted(n for n, t in mixed_state.items() if t.dtype == torch.float32)
    report["dtype_problems"] = bad
    RESULTS["models"] = report
    if bad:
        raise RuntimeError("precision contract violated: " + "; ".join(bad[:10]))


def load_models():
    fp32 = MiniMaxH3Transformer3DModel.from_pretrained(FP32_DIR).eval()
    mixed = MiniMaxH3Transformer3DModel.from_pretrained(MIXED_DIR, torch_dtype=torch.bfloat16).eval()
    loaded = {
        "fp32_param_dtypes": sorted({str(p.dtype) for p in fp32.parameters()}),
        "mixed_param_dtypes": {n: str(p.dtype) for n, p in mixed.named_parameters()},
        "fp32_rope_inv_freq_dtype": str(fp32.rope.inv_freq.dtype),
        "mixed_rope_inv_freq_dtype": str(mixed.rope.inv_freq.dtype),
    }
    problems = []
    for name, param in mixed.named_parameters():
        want = torch.float32 if name.split(".")[0] in FP32_PREFIXES else torch.bfloat16
        if param.dtype != want:
            problems.append(f"{name}: {param.dtype}")
    loaded["reloaded_mixed_problems"] = problems
    RESULTS["loaded_models"] = {k: v for k, v in loaded.items() if k != "mixed_param_dtypes"}
    return fp32, mixed


# ---------------------------------------------------------------------------------------------
# 2. Layouts
# ---------------------------------------------------------------------------------------------


def geometry():
    num_frames = align_num_frames(GEOMETRY["num_frames"], FRAMES_PER_CHUNK, LATENTS_PER_CHUNK)
    geo = dict(
        num_frames=num_frames,
        num_latent_frames=video_latent_num_frames(num_frames, FRAMES_PER_CHUNK, LATENTS_PER_CHUNK),
        latent_height=GEOMETRY["height"] // SPATIAL_RATIO,
        latent_width=GEOMETRY["width"] // SPATIAL_RATIO,
        num_audio_latents=audio_latent_num_frames(num_frames),
    )
    assert (geo["num_frames"], geo["num_latent_frames"], geo["latent_height"], geo["latent_width"]) == (22, 7, 6, 8), geo
    return geo


def build_layout(name):
    geo = geometry()
    spec = LAYOUTS[name]
    text_token_tags = torch.tensor(spec["text_token_tags"], dtype=torch.int64)
    (
        position_ids,
        token_tags,
        video_indices,
        audio_indices,
        text_indices,
        num_condition_video_rows,
        num_condition_audio_rows,
    ) = MiniMaxH3PrepareLayoutStep.build_packed_sequence(
        text_token_tags,
        geo["num_latent_frames"],
        geo["latent_height"],
        geo["latent_width"],
        geo["num_audio_latents"],
        TINY_CONFIG["patch_size"],
        MINIMAX_H3_AUDIO_CHANNELS,
        MINIMAX_H3_AUDIO_TAG,
        MINIMAX_H3_VIDEO_TAG,
        spec["keyframe_anchors"],
    )
    return dict(
        geo=geo,
        text_token_tags=text_token_tags,
        position_ids=position_ids,
        token_tags=token_tags,
        video_indices=video_indices,
        audio_indices=audio_indices,
        text_indices=text_indices,
        num_condition_video_rows=int(num_condition_video_rows),
        num_condition_audio_rows=int(num_condition_audio_rows),
    )


@section("layouts")
def make_layouts():
    info = {}
    for name in LAYOUTS:
        lay = build_layout(name)
        geo = lay["geo"]
        tensors = {
            "position_ids": lay["position_ids"],
            "token_tags": lay["token_tags"],
            "video_indices": lay["video_indices"],
            "audio_indices": lay["audio_indices"],
            "text_indices": lay["text_indices"],
            "text_token_tags": lay["text_token_tags"],
            "num_condition_video_rows": i64(lay["num_condition_video_rows"]),
            "num_condition_audio_rows": i64(lay["num_condition_audio_rows"]),
            "num_frames": i64(geo["num_frames"]),
            "num_latent_frames": i64(geo["num_latent_frames"]),
            "latent_height": i64(geo["latent_height"]),
            "latent_width": i64(geo["latent_width"]),
            "num_audio_latents": i64(geo["num_audio_latents"]),
        }
        meta = base_meta("cpu")
        meta.update(
            layout=name,
            width=GEOMETRY["width"],
            height=GEOMETRY["height"],
            keyframe_anchors=",".join(LAYOUTS[name]["keyframe_anchors"]),
        )
        save(f"layouts/layout-{name}.safetensors", tensors, meta)
        info[name] = dict(
            sequence_length=int(lay["position_ids"].shape[0]),
            num_video_rows=int(lay["video_indices"].numel()),
            num_audio_rows=int(lay["audio_indices"].numel()),
            num_text_rows=int(lay["text_indices"].numel()),
            **geo,
        )
    RESULTS["layouts"] = info


# ---------------------------------------------------------------------------------------------
# 3. Transformer calls
# ---------------------------------------------------------------------------------------------


def schedules(num_grid_points):
    video = MiniMaxH3Scheduler(shift=VIDEO_SHIFT)
    audio = MiniMaxH3Scheduler(shift=AUDIO_SHIFT)
    video.set_timesteps(num_grid_points, device="cpu")
    audio.set_timesteps(num_grid_points, device="cpu")
    return video, audio


def row_plan(lay, t, audio_t):
    return MiniMaxH3SetTimestepsStep.build_row_timesteps(
        lay["video_indices"],
        lay["audio_indices"],
        lay["num_condition_video_rows"],
        lay["num_condition_audio_rows"],
        lay["text_indices"].numel(),
        float(t),
        float(audio_t),
        max(float(t), KEYFRAME_NOISE_AUG),
        1.0,
    )


def call_inputs(name, step, text_dtype):
    lay = build_layout(name)
    video_sched, audio_sched = schedules(NUM_GRID_POINTS)
    t = video_sched.timesteps[step]
    audio_t = audio_sched.timesteps[step]
    timestep, timestep_indices = row_plan(lay, t, audio_t)
    gen = torch.Generator("cpu").manual_seed(INPUT_SEEDS[name] + step)
    num_video_rows = lay["video_indices"].numel()
    num_audio_rows = lay["audio_indices"].numel()
    video_width = TINY_CONFIG["in_channels"] * 4
    hidden_states = torch.randn((1, num_video_rows, video_width), generator=gen, dtype=torch.float32)
    audio_hidden_states = torch.randn((1, num_audio_rows, AUDIO_LATENT_CHANNELS), generator=gen, dtype=torch.float32)
    text = torch.randn((1, lay["text_indices"].numel(), TINY_CONFIG["text_dim"]), generator=gen, dtype=torch.float32)
    inputs = dict(
        hidden_states=hidden_states,
        audio_hidden_states=audio_hidden_states,
        encoder_hidden_states=text.to(text_dtype),
        timestep=timestep,
        timestep_indices=timestep_indices,
        token_tags=lay["token_tags"],
        position_ids=lay["position_ids"],
        video_indices=lay["video_indices"],
        audio_indices=lay["audio_indices"],
        text_indices=lay["text_indices"],
    )
    extra = dict(video_timestep=float(t), audio_timestep=float(audio_t))
    return inputs, extra


def forward(model, inputs, device):
    moved = {k: v.to(device) for k, v in inputs.items()}
    with torch.no_grad():
        sample, audio_sample = model(**moved, return_dict=False)
    return sample.float().cpu(), audio_sample.float().cpu()


def write_call(file_name, inputs, outputs, extra, device, model_dir, name, step):
    tensors = dict(inputs)
    tensors["sample"], tensors["audio_sample"] = outputs
    meta = base_meta(device, model_dir)
    meta.update(layout=name, step=step, num_grid_points=NUM_GRID_POINTS, video_shift=VIDEO_SHIFT,
                audio_shift=AUDIO_SHIFT, **extra)
    if device.startswith("cuda"):
        meta["gpu"] = torch.cuda.get_device_name(0)
        meta["cuda"] = torch.version.cuda
    save(f"calls/{file_name}.safetensors", tensors, meta)


@section("calls")
def make_calls(fp32_model, mixed_model):
    summary = {"fp32": {}, "mixed": {}}
    cuda = torch.cuda.is_available()
    for file_name, name, step in (("fp32-A-step0", "A", 0), ("fp32-A-step30", "A", 30), ("fp32-B-step0", "B", 0)):
        inputs, extra = call_inputs(name, step, torch.float32)
        out = forward(fp32_model, inputs, "cpu")
        again = forward(fp32_model, inputs, "cpu")
        write_call(file_name, inputs, out, extra, "cpu", FP32_DIR, name, step)
        entry = dict(
            cpu_rerun_bitwise_equal=bool(torch.equal(out[0], again[0]) and torch.equal(out[1], again[1])),
            sample_rms=out[0].pow(2).mean().sqrt().item(),
            audio_sample_rms=out[1].pow(2).mean().sqrt().item(),
            timestep=[float(x) for x in inputs["timestep"]],
        )
        if cuda:  # informational only: no file is written for fp32 on CUDA
            model_cuda = copy.deepcopy(fp32_model).to("cuda")
            gpu = forward(model_cuda, inputs, "cuda")
            entry.update(
                cuda_bitwise_equal=bool(torch.equal(out[0], gpu[0]) and torch.equal(out[1], gpu[1])),
                cuda_rel_l2_sample=rel_l2(out[0], gpu[0]),
                cuda_rel_l2_audio_sample=rel_l2(out[1], gpu[1]),
            )
            del model_cuda
        summary["fp32"][file_name] = entry

    mixed_cuda = copy.deepcopy(mixed_model).to("cuda") if cuda else None
    for file_name, name, step in (("mixed-A-step0", "A", 0), ("mixed-B-step30", "B", 30)):
        inputs, extra = call_inputs(name, step, torch.bfloat16)
        out = forward(mixed_model, inputs, "cpu")
        again = forward(mixed_model, inputs, "cpu")
        write_call(file_name, inputs, out, extra, "cpu", MIXED_DIR, name, step)
        entry = dict(
            cpu_rerun_bitwise_equal=bool(torch.equal(out[0], again[0]) and torch.equal(out[1], again[1])),
            sample_rms=out[0].pow(2).mean().sqrt().item(),
            audio_sample_rms=out[1].pow(2).mean().sqrt().item(),
            timestep=[float(x) for x in inputs["timestep"]],
        )
        fp32_inputs = dict(inputs, encoder_hidden_states=inputs["encoder_hidden_states"].float())
        ref32 = forward(fp32_model, fp32_inputs, "cpu")
        entry.update(
            rel_l2_vs_fp32_model_sample=rel_l2(ref32[0], out[0]),
            rel_l2_vs_fp32_model_audio_sample=rel_l2(ref32[1], out[1]),
        )
        if cuda:
            gpu = forward(mixed_cuda, inputs, "cuda")
            gpu_again = forward(mixed_cuda, inputs, "cuda")
            write_call(file_name + "-cuda", inputs, gpu, extra, "cuda", MIXED_DIR, name, step)
            entry.update(
                cpu_cuda_bitwise_equal_sample=bool(torch.equal(out[0], gpu[0])),
                cpu_cuda_bitwise_equal_audio_sample=bool(torch.equal(out[1], gpu[1])),
                cpu_cuda_rel_l2_sample=rel_l2(out[0], gpu[0]),
                cpu_cuda_rel_l2_audio_sample=rel_l2(out[1], gpu[1]),
                cpu_cuda_max_abs_sample=max_abs(out[0], gpu[0]),
                cpu_cuda_max_abs_audio_sample=max_abs(out[1], gpu[1]),
                cuda_rerun_bitwise_equal=bool(torch.equal(gpu[0], gpu_again[0]) and torch.equal(gpu[1], gpu_again[1])),
            )
        summary["mixed"][file_name] = entry
    summary["cuda_available"] = cuda
    summary["torch"] = torch.__version__
    summary["diffusers"] = RESULTS["diffusers_commit"]
    RESULTS["calls"] = summary
    os.makedirs("calls", exist_ok=True)
    with open("calls/summary.json", "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------------------------------------
# 4. Scheduler
# ---------------------------------------------------------------------------------------------


@section("scheduler")
def make_scheduler():
    grids = {}
    for n in (2, 3, 5, 10, 30, 50, 100):
        for shift in (1.0, 3.0, 12.0, 5.5):
            sched = MiniMaxH3Scheduler(shift=shift)
            sched.set_timesteps(n, device="cpu")
            grids[f"sigmas_N{n}_s{shift}"] = sched.sigmas
            grids[f"timesteps_N{n}_s{shift}"] = sched.timesteps
    meta = base_meta("cpu")
    meta.update(num_grid_points="2,3,5,10,30,50,100", shifts="1.0,3.0,12.0,5.5")
    save("scheduler/grids.safetensors", grids, meta)

    steps = {}
    gen = torch.Generator("cpu").manual_seed(7)
    indices = (0, 1, 2, 10, 24, 30, 47, 48)
    for shift, shape in ((12.0, (12, 96)), (3.0, (8, 32))):
        for index in indices:
            sched = MiniMaxH3Scheduler(shift=shift)
            sched.set_timesteps(NUM_GRID_POINTS, device="cpu")
            t = sched.timesteps[index]
            sample = torch.randn(shape, generator=gen, dtype=torch.float32)
            velocity = torch.randn(shape, generator=gen, dtype=torch.float32)
            prev = sched.step(velocity, t, sample, return_dict=False)[0]
            key = f"s{shift}_i{index}"
            steps[key + "_sample"] = sample
            steps[key + "_model_output"] = velocity
            steps[key + "_timestep"] = t.reshape(1)
            steps[key + "_sigma"] = sched.sigmas[index].reshape(1)
            steps[key + "_sigma_next"] = sched.sigmas[index + 1].reshape(1)
            steps[key + "_prev_sample"] = prev
    x0 = torch.randn((12, 96), generator=gen, dtype=torch.float32)
    noise = torch.randn((12, 96), generator=gen, dtype=torch.float32)
    sched = MiniMaxH3Scheduler(shift=VIDEO_SHIFT)
    steps["scale_noise_sample"] = x0
    steps["scale_noise_noise"] = noise
    steps["scale_noise_timestep"] = torch.tensor([KEYFRAME_NOISE_AUG], dtype=torch.float32)
    steps["scale_noise_out"] = sched.scale_noise(x0, KEYFRAME_NOISE_AUG, noise)
    meta = base_meta("cpu")
    meta.update(num_grid_points=NUM_GRID_POINTS, shifts="12.0,3.0", indices=",".join(map(str, indices)))
    save("scheduler/steps.safetensors", steps, meta)


# ---------------------------------------------------------------------------------------------
# 5. Noise
# ---------------------------------------------------------------------------------------------


def draw_noise(seed, with_keyframe):
    geo = geometry()
    gen = torch.Generator("cpu").manual_seed(seed)
    out = {}
    if with_keyframe:
        shape = (1, LATENT_CHANNELS, 1, geo["latent_height"], geo["latent_width"])
        out["keyframe"] = randn_tensor(shape, generator=gen, device=torch.device("cpu"), dtype=torch.float32)
    video_shape = (1, LATENT_CHANNELS, geo["num_latent_frames"], geo["latent_height"], geo["latent_width"])
    out["video"] = randn_tensor(video_shape, generator=gen, device=torch.device("cpu"), dtype=torch.float32)
    audio_shape = (geo["num_audio_latents"] * MINIMAX_H3_AUDIO_CHANNELS, AUDIO_LATENT_CHANNELS)
    out["audio"] = randn_tensor(audio_shape, generator=gen, device=torch.device("cpu"), dtype=torch.float32)
    out["video_rows"] = patchify_video_latents(out["video"], TINY_CONFIG["patch_size"])
    if with_keyframe:
        out["keyframe_rows"] = patchify_video_latents(out["keyframe"], TINY_CONFIG["patch_size"])
    return out


@section("noise")
def make_noise():
    meta = base_meta("cpu")
    meta.update(seed=42, draw_order="video,audio")
    save("noise/seed42.safetensors", draw_noise(42, False), meta)
    meta = base_meta("cpu")
    meta.update(seed=43, draw_order="keyframe,video,audio")
    save("noise/seed43-keyframe.safetensors", draw_noise(43, True), meta)


# ---------------------------------------------------------------------------------------------
# 6. Trajectory
# ---------------------------------------------------------------------------------------------


def run_loop(model, lay, text, latents, audio_latents, num_grid_points, use_blocks):
    video_sched, audio_sched = schedules(num_grid_points)
    timesteps = video_sched.timesteps
    audio_timesteps = audio_sched.timesteps
    plan = [row_plan(lay, t, at) for t, at in zip(timesteps, audio_timesteps)]
    components = BlockState(transformer=model, scheduler=video_sched, audio_scheduler=audio_sched)
    state = BlockState(
        latents=latents.clone(),
        audio_latents=audio_latents.clone(),
        prompt_embeds=text,
        row_timestep_plan=plan,
        denoiser_input_fields=dict(
            token_tags=lay["token_tags"],
            position_ids=lay["position_ids"],
            video_indices=lay["video_indices"],
            audio_indices=lay["audio_indices"],
            text_indices=lay["text_indices"],
        ),
        attention_kwargs=None,
        audio_timesteps=audio_timesteps,
        num_condition_video_rows=lay["num_condition_video_rows"],
        num_condition_audio_rows=lay["num_condition_audio_rows"],
    )
    denoiser = MiniMaxH3LoopDenoiser()
    update = MiniMaxH3LoopSchedulerStep()
    record = []
    for i, t in enumerate(timesteps):
        if use_blocks:
            components, state = denoiser(components, state, i=i, t=t)
            pred, audio_pred = state.noise_pred.clone(), state.audio_noise_pred.clone()
            components, state = update(components, state, i=i, t=t)
        else:  # the same semantics written out, as a cross-check of the block calls
            unique_t, t_indices = plan[i]
            with torch.no_grad():
                pred, audio_pred = model(
                    hidden_states=state.latents[None],
                    audio_hidden_states=state.audio_latents[None],
                    encoder_hidden_states=text,
                    timestep=unique_t,
                    timestep_indices=t_indices,
                    return_dict=False,
                    **state.denoiser_input_fields,
                )
            nv, na = state.num_condition_video_rows, state.num_condition_audio_rows
            state.latents[nv:] = video_sched.step(pred[0, nv:].float(), t, state.latents[nv:], return_dict=False)[0]
            state.audio_latents[na:] = audio_sched.step(
                audio_pred[0, na:].float(), audio_timesteps[i], state.audio_latents[na:], return_dict=False
            )[0]
        record.append(
            dict(
                timestep=plan[i][0].clone(),
                timestep_indices=plan[i][1].clone(),
                noise_pred=pred.float().clone(),
                audio_noise_pred=audio_pred.float().clone(),
                latents=state.latents.clone(),
                audio_latents=state.audio_latents.clone(),
            )
        )
    return video_sched, audio_sched, record, state


@section("trajectory")
def make_trajectory(fp32_model):
    lay = build_layout("A")
    noise = draw_noise(42, False)
    gen = torch.Generator("cpu").manual_seed(4242)
    text = torch.randn((1, lay["text_indices"].numel(), TINY_CONFIG["text_dim"]), generator=gen, dtype=torch.float32)
    latents = noise["video_rows"].clone()
    audio_latents = noise["audio"].clone()
    num_grid_points = 5

    used = "blocks"
    try:
        video_sched, audio_sched, record, state = run_loop(
            fp32_model, lay, text, latents, audio_latents, num_grid_points, True
        )
    except Exception:
        RESULTS["errors"].append({"section": "trajectory-blocks", "trace": traceback.format_exc()})
        traceback.print_exc()
        used = "manual"
        video_sched, audio_sched, record, state = run_loop(
            fp32_model, lay, text, latents, audio_latents, num_grid_points, False
        )
    _, _, manual, manual_state = run_loop(fp32_model, lay, text, latents, audio_latents, num_grid_points, False)
    RESULTS["trajectory"] = dict(
        loop=used,
        blocks_vs_manual_bitwise_equal=bool(
            torch.equal(state.latents, manual_state.latents)
            and torch.equal(state.audio_latents, manual_state.audio_latents)
        ),
        num_calls=len(record),
    )

    tensors = dict(
        encoder_hidden_states=text,
        text_token_tags=lay["text_token_tags"],
        initial_latents=latents,
        initial_audio_latents=audio_latents,
        timesteps=video_sched.timesteps,
        audio_timesteps=audio_sched.timesteps,
        sigmas=video_sched.sigmas,
        audio_sigmas=audio_sched.sigmas,
        final_latents=state.latents,
        final_audio_latents=state.audio_latents,
    )
    for i, step in enumerate(record):
        for key, value in step.items():
            tensors[f"step{i}_{key}"] = value
    meta = base_meta("cpu", FP32_DIR)
    meta.update(layout="A", noise="noise/seed42.safetensors", text_seed=4242, num_grid_points=num_grid_points,
                video_shift=VIDEO_SHIFT, audio_shift=AUDIO_SHIFT, loop=used)
    save("trajectory/fp32-A.safetensors", tensors, meta)


# ---------------------------------------------------------------------------------------------
# 7. Conditioning
# ---------------------------------------------------------------------------------------------


@section("conditioning")
def make_conditioning():
    gen = torch.Generator("cpu").manual_seed(77)
    text = torch.randn((1, 12, TINY_CONFIG["text_dim"]), generator=gen, dtype=torch.float32)
    tensors = dict(
        encoder_hidden_states=text.to(torch.bfloat16),
        text_token_tags=torch.ones(12, dtype=torch.int64),
    )
    meta = base_meta("cpu")
    meta.update(seed=77, note="example conditioning as handed to the denoiser (tiny text_dim 48)")
    save("conditioning/demo-conditioning.safetensors", tensors, meta)


def versions():
    info = dict(
        python=sys.version.split()[0],
        platform=platform.platform(),
        torch=torch.__version__,
        torch_num_threads=torch.get_num_threads(),
        numpy=np.__version__,
        safetensors=safetensors.__version__,
        diffusers_version=diffusers.__version__,
        diffusers_commit=RESULTS["diffusers_commit"],
        cuda_available=torch.cuda.is_available(),
    )
    for name in ("transformers", "accelerate", "huggingface_hub"):
        try:
            info[name] = __import__(name).__version__
        except Exception as err:  # noqa: BLE001
            info[name] = f"unavailable: {err}"
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        info["cpu"] = ""
    if torch.cuda.is_available():
        info.update(gpu=torch.cuda.get_device_name(0), cuda=torch.version.cuda,
                    cudnn=str(torch.backends.cudnn.version()))
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder (becomes tests/data/golden)")
    parser.add_argument("--diffusers-commit", default="diffusers-main", help="recorded in every file")
    args = parser.parse_args()

    RESULTS["diffusers_commit"] = args.diffusers_commit
    os.makedirs(args.out, exist_ok=True)
    # Lazily imported diffusers modules are found through sys.path after the chdir below.
    sys.path[:] = [os.path.abspath(entry) if entry else entry for entry in sys.path]
    os.chdir(args.out)  # all paths below are relative, so nothing machine-specific lands in the files
    RESULTS["versions"] = versions()
    print(json.dumps(RESULTS["versions"], indent=2), flush=True)

    make_models()
    models = section("load-models")(load_models)()
    make_layouts()
    if models is not None:
        make_calls(*models)
    make_scheduler()
    make_noise()
    if models is not None:
        make_trajectory(models[0])
    make_conditioning()

    with open("generation.json", "w") as f:
        json.dump(RESULTS, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps({k: v for k, v in RESULTS.items() if k != "versions"}, indent=2))
    if RESULTS["errors"]:
        print(f"FAILED sections: {[e['section'] for e in RESULTS['errors']]}")
        return 1
    print("all sections done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
