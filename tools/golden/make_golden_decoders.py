#!/usr/bin/env python3
"""Generate the golden reference data the C++ video and audio VAE decoders are tested against.

Builds the project's `tiny` video VAE (`AutoencoderKLMiniMaxH3`) and audio VAE
(`AutoencoderKLMiniMaxH3Audio`) with the real diffusers classes, gives every parameter a
deterministic non-trivial value, saves both with `save_pretrained`, reloads them with
`from_pretrained` and decodes normalised latents the way the modular pipeline's decode blocks do
(`MiniMaxH3VideoDecodeStep`, `MiniMaxH3AudioDecodeStep`): de-normalise with the configs' latent
means and stds, decode (video under float16 autocast on CUDA, float32 on CPU), revert the ImageNet
pixel normalisation and clamp. The layout of --out is the layout of tests/data/golden/decoders/;
its README.md lists each file.

Usage (diffusers source tree on PYTHONPATH, no network needed):
    PYTHONPATH=<diffusers>/src HF_HUB_OFFLINE=1 python3 tools/golden/make_golden_decoders.py --out <dir>

CUDA is optional: without it the "-cuda" files and the CPU/CUDA figures are skipped.
"""

import argparse
import copy
import json
import os
import platform
import sys
import traceback
import types

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")

import numpy as np  # noqa: E402
import safetensors  # noqa: E402
import torch  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

import diffusers  # noqa: E402
from diffusers.models import AutoencoderKLMiniMaxH3, AutoencoderKLMiniMaxH3Audio  # noqa: E402


# The project's `tiny` decoder presets (core/model/presets.cpp): the real latent geometry
# (spatial /16 over four 2x levels, temporal 17n+5 -> 5n+2, 24 latent channels; audio 32 latent
# channels and 800 samples per latent at 32 kHz, in five upsampling stages instead of seven).
VAE_CONFIG = dict(
    in_channels=3,
    out_channels=3,
    latent_channels=24,
    block_out_channels=(4, 4, 8, 8),
    layers_per_block=1,
    spatial_downsample_factors=(2, 2, 2, 2),
    temporal_downsample_factors=(1, 2, 2, 1),
    norm_num_groups=4,
    norm_eps=1e-6,
    spatial_padding_mode="reflect",
    decoder_num_layers=2,
    decoder_num_attention_heads=2,
    decoder_attention_head_dim=16,
    decoder_num_register_tokens=4,
    decoder_ffn_mult=4,
    decoder_rope_theta=100.0,
    decoder_rope_dim_ratio=0.75,
    decoder_norm_eps=1e-5,
    clip_length=17,
    token_drop=3,
)
AUDIO_CONFIG = dict(
    encoder_dim=1,
    encoder_rates=(2, 4, 4, 5, 5),
    latent_dim=64,
    latent_channels=32,
    num_attention_heads=2,
    decoder_dim=32,
    decoder_rates=(5, 5, 4, 4, 2),
    decoder_kernel_sizes=(11, 11, 8, 8, 4),
    resblock_kernel_sizes=(3, 7, 11),
    resblock_dilation_sizes=((1, 3, 5), (1, 3, 5), (1, 3, 5)),
    sampling_rate=32000,
)
VAE_DIR = "tiny/vae"
AUDIO_VAE_DIR = "tiny/audio_vae"
AUDIO_TARGET_RMS = 0.3  # conv_post is rescaled so the pre-clamp waveform has this RMS

# Video cases: name -> (latent shape, tiling override or None). Latents are N(0, 1) as the sampler
# leaves them (normalised). Shapes: frames 5n+2 (chunks and crossfade), 3 (padded chunk), a frame
# wider than the default 256 px tile (two blended tiles), and a small tile override (2-D blending).
VIDEO_CASES = {
    "video-chunks": ((1, 24, 12, 1, 2), None),
    "video-tiles": ((1, 24, 3, 3, 4), dict(height=32, width=32, overlap_height=16, overlap_width=16)),
    "video-wide": ((1, 24, 3, 1, 17), None),
}
AUDIO_LATENTS = 37
LATENT_SEED = 300
WEIGHT_SEED = 1234
STATS_SEED = 77

RESULTS = {"errors": []}


def save(path, tensors, meta):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
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


def base_meta(device):
    meta = {
        "torch": torch.__version__,
        "diffusers": RESULTS["diffusers_commit"],
        "diffusers_version": diffusers.__version__,
        "device": device,
        "generator": "tools/golden/make_golden_decoders.py",
    }
    if device.startswith("cuda"):
        meta["gpu"] = torch.cuda.get_device_name(0)
        meta["cuda"] = torch.version.cuda
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


def pixel_constants():
    try:
        from diffusers.modular_pipelines.minimax_h3.modular_pipeline import MiniMaxH3ModularPipeline

        return (
            tuple(MiniMaxH3ModularPipeline.pixel_mean.fget(None)),
            tuple(MiniMaxH3ModularPipeline.pixel_std.fget(None)),
        )
    except Exception:
        RESULTS["errors"].append({"section": "pixel-constants", "trace": traceback.format_exc()})
        return (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


# ---------------------------------------------------------------------------------------------
# 1. Models
# ---------------------------------------------------------------------------------------------


def reinit_parameters(model, gen):
    """Every parameter gets a deterministic draw, module by module in named_modules() order."""
    norms = (torch.nn.GroupNorm, torch.nn.LayerNorm, torch.nn.RMSNorm)
    touched = set()
    with torch.no_grad():
        for _, module in model.named_modules():
            for pname, p in module.named_parameters(recurse=False):
                if isinstance(module, norms):
                    value = 1.0 + 0.1 * torch.randn(p.shape, generator=gen) if pname == "weight" else None
                    if pname == "bias":
                        value = 0.1 * torch.randn(p.shape, generator=gen)
                elif pname == "weight_v":
                    value = torch.randn(p.shape, generator=gen)
                elif pname == "weight_g":  # the effective weight's norm per (dim 0) slice
                    value = 1.0 + 0.1 * torch.randn(p.shape, generator=gen)
                elif pname == "weight":
                    fan_in = p[0].numel()
                    value = torch.randn(p.shape, generator=gen) / fan_in**0.5
                elif pname in ("bias", "q_bias", "v_bias"):
                    value = 0.1 * torch.randn(p.shape, generator=gen)
                elif pname == "register_tokens":
                    value = torch.randn(p.shape, generator=gen)
                elif pname in ("scale1", "scale2"):
                    value = 0.5 + 0.2 * torch.randn(p.shape, generator=gen)
                elif pname == "alpha" and type(module).__name__.endswith("Snake1d"):
                    value = 1.0 + 0.1 * torch.randn(p.shape, generator=gen)
                elif pname in ("alpha", "beta"):  # SnakeBeta, log space
                    value = 0.2 * torch.randn(p.shape, generator=gen)
                else:
                    value = None
                if value is None:
                    raise RuntimeError(f"no initialisation rule for {type(module).__name__}.{pname}")
                p.copy_(value)
                touched.add(id(p))
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


def denorm_stats(gen, channels):
    mean = (0.1 * torch.randn(channels, generator=gen)).tolist()
    std = (0.6 + 0.8 * torch.rand(channels, generator=gen)).tolist()
    return mean, std


def audio_latents(seed, num):
    gen = torch.Generator("cpu").manual_seed(seed)
    return torch.randn((2, AUDIO_CONFIG["latent_channels"], num), generator=gen, dtype=torch.float32)


@section("models")
def make_models():
    stats_gen = torch.Generator("cpu").manual_seed(STATS_SEED)
    video_mean, video_std = denorm_stats(stats_gen, VAE_CONFIG["latent_channels"])
    audio_mean, audio_std = denorm_stats(stats_gen, AUDIO_CONFIG["latent_channels"])

    torch.manual_seed(0)
    vae = AutoencoderKLMiniMaxH3(**VAE_CONFIG, latents_mean=tuple(video_mean), latents_std=tuple(video_std))
    reinit_parameters(vae, torch.Generator("cpu").manual_seed(WEIGHT_SEED))
    vae = vae.to(torch.float32).eval()
    vae.save_pretrained(VAE_DIR, safe_serialization=True)
    strip_name_or_path(VAE_DIR)

    torch.manual_seed(0)
    audio_vae = AutoencoderKLMiniMaxH3Audio(**AUDIO_CONFIG, latents_mean=audio_mean, latents_std=audio_std)
    reinit_parameters(audio_vae, torch.Generator("cpu").manual_seed(WEIGHT_SEED + 1))
    audio_vae = audio_vae.to(torch.float32).eval()
    # Calibrate the output scale so the [-1, 1] clamp at the end of the decoder rarely bites.
    captured = {}
    hook = audio_vae.decoder.conv_post.register_forward_hook(lambda m, i, o: captured.__setitem__("x", o.detach()))
    with torch.no_grad():
        mean = torch.tensor(audio_mean).view(1, -1, 1)
        std = torch.tensor(audio_std).view(1, -1, 1)
        audio_vae.decode(audio_latents(LATENT_SEED, AUDIO_LATENTS) * std + mean)
    hook.remove()
    rms = captured["x"].pow(2).mean().sqrt().item()
    with torch.no_grad():
        audio_vae.decoder.conv_post.weight_g.mul_(AUDIO_TARGET_RMS / rms)
    RESULTS["audio_conv_post_rescale"] = AUDIO_TARGET_RMS / rms
    audio_vae.save_pretrained(AUDIO_VAE_DIR, safe_serialization=True)
    strip_name_or_path(AUDIO_VAE_DIR)

    vae = AutoencoderKLMiniMaxH3.from_pretrained(VAE_DIR).eval()
    audio_vae = AutoencoderKLMiniMaxH3Audio.from_pretrained(AUDIO_VAE_DIR).eval()
    RESULTS["models"] = dict(
        vae_parameters=sum(p.numel() for p in vae.parameters()),
        audio_vae_parameters=sum(p.numel() for p in audio_vae.parameters()),
        vae_dtypes=sorted({str(p.dtype) for p in vae.parameters()}),
        audio_vae_dtypes=sorted({str(p.dtype) for p in audio_vae.parameters()}),
        audio_hop_length=audio_vae.hop_length,
        vae_spatial_ratio=vae.spatial_compression_ratio,
        vae_temporal_ratio=vae.temporal_compression_ratio,
        vae_frame_pre_padding=vae.frame_pre_padding,
        vae_tokens_chunk_size=vae.tokens_chunk_size,
        vae_token_overlap=vae.token_overlap,
        vae_frame_overlap=vae.frame_overlap,
    )
    return vae, audio_vae


# ---------------------------------------------------------------------------------------------
# 2. Decoding as the pipeline's decode blocks do it
# ---------------------------------------------------------------------------------------------


def set_tiling(vae, tiling):
    t = tiling or dict(height=256, width=256, overlap_height=64, overlap_width=64)
    vae.use_tiling = True
    vae.tile_sample_min_height = t["height"]
    vae.tile_sample_min_width = t["width"]
    vae.tile_sample_min_overlap_height = t["overlap_height"]
    vae.tile_sample_min_overlap_width = t["overlap_width"]


def video_written_out(vae, latents, device, autocast):
    """The video decode block's arithmetic, written out: returns (raw VAE output fp32, video)."""
    pixel_mean, pixel_std = pixel_constants()
    with torch.no_grad():
        mean = torch.tensor(vae.config.latents_mean, device=device).view(1, -1, 1, 1, 1)
        std = torch.tensor(vae.config.latents_std, device=device).view(1, -1, 1, 1, 1)
        z = latents.to(device) * std + mean
        with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=autocast):
            raw = vae.decode(z, return_dict=False)[0]
        pm = torch.tensor(pixel_mean, device=device).view(1, -1, 1, 1, 1)
        ps = torch.tensor(pixel_std, device=device).view(1, -1, 1, 1, 1)
        video = (raw.float() * ps + pm).clamp(0, 1)
    return raw.float(), video


def video_block(vae, latents, device):
    """The same through diffusers' own MiniMaxH3VideoDecodeStep; returns (1, 3, F, H, W)."""
    from diffusers.modular_pipelines.minimax_h3.decoders import MiniMaxH3VideoDecodeStep
    from diffusers.modular_pipelines.modular_pipeline import PipelineState
    from diffusers.video_processor import VideoProcessor

    pixel_mean, pixel_std = pixel_constants()
    components = types.SimpleNamespace(
        vae=vae,
        _execution_device=device,
        pixel_mean=pixel_mean,
        pixel_std=pixel_std,
        video_processor=VideoProcessor(vae_scale_factor=16, do_normalize=False),
    )
    state = PipelineState()
    state.set("latents", latents.to(device))
    state.set("output_type", "pt")
    MiniMaxH3VideoDecodeStep()(components, state)
    return state.get("videos").permute(0, 2, 1, 3, 4).contiguous()


def audio_written_out(audio_vae, latents, device):
    with torch.no_grad():
        mean = torch.tensor(audio_vae.config.latents_mean, device=device).view(1, -1, 1)
        std = torch.tensor(audio_vae.config.latents_std, device=device).view(1, -1, 1)
        decoded = audio_vae.decode(latents.to(device) * std + mean, return_dict=False)[0]
        return decoded.float().permute(1, 0, 2)


def audio_block(audio_vae, latents, device):
    from diffusers.modular_pipelines.minimax_h3.decoders import MiniMaxH3AudioDecodeStep
    from diffusers.modular_pipelines.modular_pipeline import PipelineState

    components = types.SimpleNamespace(
        audio_vae=audio_vae, _execution_device=device, audio_sampling_rate=AUDIO_CONFIG["sampling_rate"]
    )
    state = PipelineState()
    state.set("audio_latents", latents.to(device))
    MiniMaxH3AudioDecodeStep()(components, state)
    return state.get("audio")


def compare_block(name, block_fn, written):
    try:
        out = block_fn()
        return dict(block_bitwise_equal=bool(torch.equal(out.cpu(), written.cpu())), block_rel_l2=rel_l2(written, out))
    except Exception:
        RESULTS["errors"].append({"section": f"{name}-block", "trace": traceback.format_exc()})
        traceback.print_exc()
        return dict(block_bitwise_equal=None)


def video_latents(name, shape):
    seed = LATENT_SEED + 1 + sorted(VIDEO_CASES).index(name)
    gen = torch.Generator("cpu").manual_seed(seed)
    return torch.randn(shape, generator=gen, dtype=torch.float32), seed


@section("video")
def make_video(vae):
    cpu = torch.device("cpu")
    summary = {}
    cuda = torch.cuda.is_available()
    vae_cuda = copy.deepcopy(vae).to("cuda") if cuda else None
    for name, (shape, tiling) in VIDEO_CASES.items():
        latents, seed = video_latents(name, shape)
        set_tiling(vae, tiling)
        raw, video = video_written_out(vae, latents, cpu, autocast=False)
        _, again = video_written_out(vae, latents, cpu, autocast=False)
        entry = dict(
            latent_shape=list(shape),
            latent_seed=seed,
            tiling=tiling or "default (256 px tiles, 64 px minimum overlap)",
            video_shape=list(video.shape),
            cpu_rerun_bitwise_equal=bool(torch.equal(video, again)),
            raw_rms=raw.pow(2).mean().sqrt().item(),
            clamped_fraction=((video == 0) | (video == 1)).float().mean().item(),
        )
        entry.update(compare_block(name, lambda: video_block(vae, latents, cpu), video))
        tensors = dict(latents=latents, video=video)
        if name == "video-chunks":
            tensors["video_raw"] = raw
        meta = base_meta("cpu")
        meta.update(model_dir=VAE_DIR, latent_seed=seed, tiling=json.dumps(tiling) if tiling else "default")
        save(f"{name}.safetensors", tensors, meta)
        if cuda:
            set_tiling(vae_cuda, tiling)
            raw16, video16 = video_written_out(vae_cuda, latents, torch.device("cuda"), autocast=True)
            raw32, video32 = video_written_out(vae_cuda, latents, torch.device("cuda"), autocast=False)
            entry.update(
                cuda_fp16_autocast_rel_l2_video=rel_l2(video, video16),
                cuda_fp16_autocast_max_abs_video=max_abs(video, video16),
                cuda_fp16_autocast_rel_l2_raw=rel_l2(raw, raw16),
                cuda_fp32_rel_l2_video=rel_l2(video, video32),
                cuda_fp32_max_abs_video=max_abs(video, video32),
                cuda_fp32_bitwise_equal=bool(torch.equal(video, video32.cpu())),
            )
            entry.update(
                {"cuda_" + k: v for k, v in compare_block(name + "-cuda", lambda: video_block(
                    vae_cuda, latents, torch.device("cuda")), video16).items()}
            )
            if name == "video-chunks":
                meta = base_meta("cuda")
                meta.update(model_dir=VAE_DIR, latent_seed=seed, autocast="float16", tiling="default")
                save(f"{name}-cuda.safetensors", dict(latents=latents, video=video16, video_raw=raw16), meta)
        summary[name] = entry
    set_tiling(vae, None)
    RESULTS["video"] = summary


@section("audio")
def make_audio(audio_vae):
    cpu = torch.device("cpu")
    latents = audio_latents(LATENT_SEED, AUDIO_LATENTS)
    audio = audio_written_out(audio_vae, latents, cpu)
    again = audio_written_out(audio_vae, latents, cpu)
    entry = dict(
        latent_shape=list(latents.shape),
        latent_seed=LATENT_SEED,
        audio_shape=list(audio.shape),
        cpu_rerun_bitwise_equal=bool(torch.equal(audio, again)),
        rms=audio.pow(2).mean().sqrt().item(),
        clamped_fraction=(audio.abs() == 1).float().mean().item(),
    )
    entry.update(compare_block("audio", lambda: audio_block(audio_vae, latents, cpu), audio))
    meta = base_meta("cpu")
    meta.update(model_dir=AUDIO_VAE_DIR, latent_seed=LATENT_SEED, sampling_rate=AUDIO_CONFIG["sampling_rate"])
    save("audio.safetensors", dict(audio_latents=latents, audio=audio), meta)
    RESULTS["audio"] = entry
    if torch.cuda.is_available():
        # A weight-normed module cannot be deep-copied: load a second instance from disk.
        audio_cuda = AutoencoderKLMiniMaxH3Audio.from_pretrained(AUDIO_VAE_DIR).to("cuda").eval()
        gpu = audio_written_out(audio_cuda, latents, torch.device("cuda"))
        entry.update(
            cuda_rel_l2=rel_l2(audio, gpu),
            cuda_max_abs=max_abs(audio, gpu),
            cuda_bitwise_equal=bool(torch.equal(audio, gpu.cpu())),
        )
        entry.update(
            {"cuda_" + k: v for k, v in compare_block("audio-cuda", lambda: audio_block(
                audio_cuda, latents, torch.device("cuda")), gpu).items()}
        )
        meta = base_meta("cuda")
        meta.update(model_dir=AUDIO_VAE_DIR, latent_seed=LATENT_SEED, sampling_rate=AUDIO_CONFIG["sampling_rate"])
        save("audio-cuda.safetensors", dict(audio_latents=latents, audio=gpu), meta)


# ---------------------------------------------------------------------------------------------
# 3. Stage traces (small inputs, for localising a difference)
# ---------------------------------------------------------------------------------------------


def capture(modules):
    store, hooks = {}, []
    for key, module in modules.items():
        hooks.append(module.register_forward_hook(
            lambda m, i, o, key=key: store.__setitem__(key, (o[0] if isinstance(o, tuple) else o).detach().clone())
        ))
    return store, hooks


@section("traces")
def make_traces(vae, audio_vae):
    tensors = {}
    # Video: one clip (7 latent frames, 1 x 1 latent pixels), no tiling involved.
    gen = torch.Generator("cpu").manual_seed(LATENT_SEED + 50)
    z = torch.randn((1, 24, 7, 1, 1), generator=gen, dtype=torch.float32)
    mean = torch.tensor(vae.config.latents_mean).view(1, -1, 1, 1, 1)
    std = torch.tensor(vae.config.latents_std).view(1, -1, 1, 1, 1)
    modules = {"post_quant_conv": vae.post_quant_conv, "proj_in": vae.decoder.proj_in,
               "norm_out": vae.decoder.norm_out, "proj_out": vae.decoder.proj_out}
    for i, block in enumerate(vae.decoder.transformer_blocks):
        modules[f"block{i}"] = block
    store, hooks = capture(modules)
    with torch.no_grad():
        clip = vae.decoder(vae.post_quant_conv(z * std + mean))
    for h in hooks:
        h.remove()
    tensors["video_latents"] = z
    tensors["video_clip"] = clip
    for key, value in store.items():
        tensors["video_" + key] = value
    # Audio: three latents per channel.
    a = audio_latents(LATENT_SEED + 60, 3)
    modules = {"dec_in_proj": audio_vae.dec_in_proj, "conv_pre": audio_vae.decoder.conv_pre,
               "activation_post": audio_vae.decoder.activation_post, "conv_post": audio_vae.decoder.conv_post}
    for i, up in enumerate(audio_vae.decoder.ups):
        modules[f"ups{i}"] = up[0]
    for i, block in enumerate(audio_vae.decoder.resblocks):
        modules[f"resblock{i}"] = block
    store, hooks = capture(modules)
    amean = torch.tensor(audio_vae.config.latents_mean).view(1, -1, 1)
    astd = torch.tensor(audio_vae.config.latents_std).view(1, -1, 1)
    with torch.no_grad():
        out = audio_vae.decode(a * astd + amean, return_dict=False)[0]
    for h in hooks:
        h.remove()
    tensors["audio_latents"] = a
    tensors["audio_decoded"] = out
    for key, value in store.items():
        tensors["audio_" + key] = value
    meta = base_meta("cpu")
    meta.update(note="video: vae.decoder(post_quant_conv(denormalised)) of one clip; audio: decoder stages")
    save("traces.safetensors", tensors, meta)


def versions():
    info = dict(
        python=sys.version.split()[0],
        platform=platform.platform(),
        torch=torch.__version__,
        torch_num_threads=torch.get_num_threads(),
        numpy=np.__version__,
        safetensors=safetensors.__version__,
        diffusers=RESULTS["diffusers_commit"],
        diffusers_version=diffusers.__version__,
        cuda_available=torch.cuda.is_available(),
    )
    if torch.cuda.is_available():
        info.update(gpu=torch.cuda.get_device_name(0), cuda=torch.version.cuda,
                    cudnn=str(torch.backends.cudnn.version()))
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output directory (the layout of tests/data/golden/decoders)")
    parser.add_argument("--diffusers-commit", default="unknown", help="recorded in every file's metadata")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.chdir(args.out)
    RESULTS["diffusers_commit"] = args.diffusers_commit
    RESULTS["versions"] = versions()
    print(json.dumps(RESULTS["versions"], indent=2), flush=True)

    models = make_models()
    if models is not None:
        vae, audio_vae = models
        make_video(vae)
        make_audio(audio_vae)
        make_traces(vae, audio_vae)
    RESULTS["vae_config"] = VAE_CONFIG
    RESULTS["audio_vae_config"] = AUDIO_CONFIG
    with open("summary.json", "w") as f:
        json.dump(RESULTS, f, indent=2, sort_keys=True, default=str)
        f.write("\n")
    print(json.dumps({k: v for k, v in RESULTS.items() if k != "errors"}, indent=2, default=str))
    if RESULTS["errors"]:
        print(f"{len(RESULTS['errors'])} section(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
