#!/usr/bin/env python3
"""Export an h3parity conditioning file with the diffusers MiniMax-H3 modular pipeline's own encoders.

The prompt (and, for `fl2va`, a first and optionally a last keyframe) go through the first three
stages of `MiniMaxH3Blocks` exactly as the pipeline runs them: the keyframe canvas step, the
Qwen3-VL text encoder step (its presentation, its vision block, its hidden layer) and the keyframe
VAE encoder step. Their outputs are written as the conditioning file `h3parity generate` reads
(`encoder_hidden_states` (1, L, text_dim) bf16, `text_token_tags` (L,) int64, and for keyframes
`keyframe_latents` (1, 24, K, H/16, W/16) fp32), plus, with --contract, a generation contract that
names the file by a path relative to the contract.

Usage (diffusers source tree on PYTHONPATH, local files only):
    PYTHONPATH=<diffusers>/src python3 tools/conditioning/export_conditioning.py \\
        --model MODEL_DIR --prompt "..." [--first FIRST.png [--last LAST.png]] \\
        --width 1344 --height 768 --frames 124 --device cuda \\
        --out cond.safetensors [--contract contract.json --transformer-model MODEL_DIR]

MODEL_DIR is a diffusers-layout repository: text_encoder/, tokenizer/, processor/ and (for
keyframes) vae/. Exit codes: 0 written, 2 bad input (a missing file or folder, a bad image or
canvas, an encoder that does not fit the transformer), 1 anything else.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")

GENERATOR = "tools/conditioning/export_conditioning.py"

# The stages of `MiniMaxH3Blocks` that produce conditioning, in pipeline order.
ENCODER_STAGES = ("before_encode", "text_encoder", "vae_encoder")

# h3parity's geometry rules (core/sampling/geometry.h) and the diffusers pipeline's.
CANVAS_MULTIPLE = 32
SPATIAL_COMPRESSION = 16
LATENT_CHANNELS = 24
FRAMES_PER_CHUNK = 17
LATENTS_PER_CHUNK = 5
PIPELINE_FPS = 24
MIN_SECONDS, MAX_SECONDS = 5.0, 15.0

# text_dim of the built-in presets a contract may name (core/model/presets.cpp).
PRESET_TEXT_DIMS = {"tiny": 48, "small": 256, "full-shape": 5120}

DEFAULT_BOUNDS = {"psnr_db_min": 30.0, "ssim_min": 0.99, "temporal_rmse_max": 0.01, "audio_rel_l2_max": 0.05}

DTYPES = ("bf16", "fp32")


class InputProblem(Exception):
    """Bad input named by its argument or file; the command exits 2."""


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------


def add_request_arguments(parser):
    """The arguments that define what the encoders see; shared with the parity reference."""
    parser.add_argument("--model", required=True, help="diffusers-layout model repository (local directory)")
    parser.add_argument("--prompt", required=True, help="the prompt, one string")
    parser.add_argument("--first", help="first keyframe image (fl2va)")
    parser.add_argument("--last", help="last keyframe image (fl2va, needs --first)")
    parser.add_argument("--width", type=int, required=True, help="canvas width in pixels, a multiple of 32")
    parser.add_argument("--height", type=int, required=True, help="canvas height in pixels, a multiple of 32")
    parser.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N (default: cpu)")
    parser.add_argument("--dtype", default="bf16", choices=DTYPES,
                        help="dtype the text encoder runs in (default bf16, as the released weights)")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]))
    add_request_arguments(parser)
    parser.add_argument("--frames", type=int, default=124, help="frames to generate, as the contract's (default 124)")
    parser.add_argument("--fps", type=int, default=PIPELINE_FPS, help="frame rate, as the contract's (default 24)")
    parser.add_argument("--out", required=True, help="conditioning file to write (.safetensors)")
    parser.add_argument("--diffusers-commit", default="",
                        help="recorded in the file's metadata (default: read from the diffusers git checkout)")
    contract = parser.add_argument_group("contract (written only with --contract)")
    contract.add_argument("--contract", help="contract JSON to write; names --out by a relative path")
    contract.add_argument("--contract-name", help="contract name (default: the stem of --out)")
    contract.add_argument("--transformer-model",
                          help="the contract's model: a model directory (default: --model), or a built-in "
                               "model such as 'preset:tiny' or 'seeded:full-shape?layers=2'")
    contract.add_argument("--seeds", default="42", help="comma-separated seeds (default 42)")
    contract.add_argument("--steps", type=int, default=50, help="sampling_steps: sigma grid points (default 50)")
    contract.add_argument("--video-shift", type=float, default=12.0, help="default 12")
    contract.add_argument("--audio-shift", type=float, default=3.0, help="default 3")
    contract.add_argument("--audio-sample-rate", type=int, default=32000, help="Hz (default 32000)")
    contract.add_argument("--psnr-db-min", type=float, default=DEFAULT_BOUNDS["psnr_db_min"])
    contract.add_argument("--ssim-min", type=float, default=DEFAULT_BOUNDS["ssim_min"])
    contract.add_argument("--temporal-rmse-max", type=float, default=DEFAULT_BOUNDS["temporal_rmse_max"])
    contract.add_argument("--audio-rel-l2-max", type=float, default=DEFAULT_BOUNDS["audio_rel_l2_max"])
    contract.add_argument("--require-gate", action="store_true", help="generation needs a passed gate")
    return parser.parse_args(argv)


def check_request(args):
    """Validates what the encoders need: the model folder, the canvas, the keyframe flags."""
    if not os.path.isdir(args.model):
        raise InputProblem(f"--model {args.model}: not a directory")
    if args.last and not args.first:
        raise InputProblem("--last: needs --first (h3parity anchors one keyframe as the first, two as first and last)")
    for flag, value in (("--width", args.width), ("--height", args.height)):
        if value <= 0 or value % CANVAS_MULTIPLE:
            raise InputProblem(f"{flag} {value}: must be a positive multiple of {CANVAS_MULTIPLE}")
    if not args.prompt.strip():
        raise InputProblem("--prompt: must not be empty")
    if not re.fullmatch(r"cpu|cuda(:\d+)?", args.device):
        raise InputProblem(f"--device {args.device}: must be cpu, cuda or cuda:N")


def check_export_args(args):
    """Validates the output and contract arguments before any model is loaded."""
    if not args.out.endswith(".safetensors"):
        raise InputProblem(f"--out {args.out}: must end in .safetensors")
    if args.frames < 5 or args.frames > 100000:
        raise InputProblem(f"--frames {args.frames}: must be in [5, 100000]")
    if args.fps < 1 or args.fps > 1000:
        raise InputProblem(f"--fps {args.fps}: must be in [1, 1000]")
    if not args.contract:
        return
    if not args.contract.endswith(".json"):
        raise InputProblem(f"--contract {args.contract}: must end in .json")
    parse_seeds(args.seeds)
    if args.steps < 2 or args.steps > 10000:
        raise InputProblem(f"--steps {args.steps}: must be in [2, 10000]")
    for flag, value in (("--video-shift", args.video_shift), ("--audio-shift", args.audio_shift)):
        if not value > 0:
            raise InputProblem(f"{flag} {value}: must be > 0")
    if args.audio_sample_rate < 1 or args.audio_sample_rate > 1000000:
        raise InputProblem(f"--audio-sample-rate {args.audio_sample_rate}: must be in [1, 1000000]")
    if not -1.0 <= args.ssim_min <= 1.0:
        raise InputProblem(f"--ssim-min {args.ssim_min}: must be in [-1, 1]")
    for flag, value in (("--temporal-rmse-max", args.temporal_rmse_max), ("--audio-rel-l2-max", args.audio_rel_l2_max)):
        if value < 0:
            raise InputProblem(f"{flag} {value}: must be >= 0")
    name = contract_name(args)
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name.startswith("."):
        raise InputProblem(f"--contract-name {name}: use only letters, digits, '.', '_', '-' and do not start with '.'")


def parse_seeds(text):
    """'42,43' -> [42, 43]; non-negative, unique."""
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputProblem(f"--seeds {text}: must be comma-separated non-negative integers") from None
    if not seeds or any(seed < 0 for seed in seeds) or len(set(seeds)) != len(seeds):
        raise InputProblem(f"--seeds {text}: must be non-empty, non-negative and unique")
    return seeds


def duration_warning(frames, fps):
    """The diffusers pipeline's frame rule: snapped up to 17n+5, 5 to 15 s at 24 fps. Empty when it holds."""
    aligned = frames
    while aligned % FRAMES_PER_CHUNK != LATENTS_PER_CHUNK:
        aligned += 1
    notes = []
    if aligned != frames:
        notes.append(f"{frames} frames are snapped up to {aligned} (17n+5)")
    if fps != PIPELINE_FPS:
        notes.append(f"the diffusers pipeline generates at {PIPELINE_FPS} fps only, the contract says {fps}")
    seconds = aligned / fps
    if not MIN_SECONDS <= seconds <= MAX_SECONDS:
        notes.append(f"{aligned} frames at {fps} fps last {seconds:.3g} s; the diffusers pipeline refuses "
                     f"durations outside {MIN_SECONDS:g}-{MAX_SECONDS:g} s")
    return "; ".join(notes)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_keyframe(path, flag):
    """Reads one keyframe as an RGB PIL image; returns (image, facts for the metadata)."""
    if not os.path.isfile(path):
        raise InputProblem(f"{flag} {path}: no such file")
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise InputProblem(f"{flag} {path}: reading keyframes needs Pillow (pip install pillow)") from None
    try:
        with Image.open(path) as opened:
            opened.load()
            mode, size = opened.mode, opened.size
            image = opened.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise InputProblem(f"{flag} {path}: cannot read as an image ({error})") from None
    if size[0] < 1 or size[1] < 1:
        raise InputProblem(f"{flag} {path}: empty image {size[0]}x{size[1]}")
    facts = {"name": os.path.basename(path), "sha256": sha256_file(path), "size": f"{size[0]}x{size[1]}", "mode": mode}
    return image, facts


def describe_placement(facts, width, height, index):
    """How the keyframe canvas step will put the image on the canvas (for the log)."""
    if facts["size"] == f"{width}x{height}":
        return "at canvas size, used as is"
    return "stretched onto the canvas (LANCZOS)" if index == 0 else "cover-cropped onto the canvas (LANCZOS)"


def load_keyframes(args):
    """The --first / --last images in packed order, and their metadata."""
    images, facts = [], []
    for index, (flag, path) in enumerate((("--first", args.first), ("--last", args.last))):
        if not path:
            continue
        image, fact = load_keyframe(path, flag)
        note = describe_placement(fact, args.width, args.height, index)
        print(f"{flag} {fact['name']}: {fact['size']} {fact['mode']}, {note}", flush=True)
        images.append(image)
        facts.append(fact)
    return images, facts


# ---------------------------------------------------------------------------------------------
# The diffusers stack
# ---------------------------------------------------------------------------------------------


def import_stack():
    """torch, transformers and diffusers, with a message that says what is missing."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        import diffusers  # noqa: F401
        from diffusers.modular_pipelines.minimax_h3 import modular_blocks_minimax_h3  # noqa: F401
    except ImportError as error:
        raise InputProblem(
            f"cannot import the diffusers MiniMax-H3 pipeline ({error}); put the diffusers source tree on "
            "PYTHONPATH (PYTHONPATH=<diffusers>/src) and install torch and transformers") from None


def resolve_device(name):
    import torch

    if name.startswith("cuda") and not torch.cuda.is_available():
        raise InputProblem(f"--device {name}: CUDA is not available to this torch ({torch.__version__})")
    return torch.device(name)


def torch_dtype(name):
    import torch

    return {"bf16": torch.bfloat16, "fp32": torch.float32}[name]


def index_subfolders(model_dir):
    """Component name -> subfolder, from modular_model_index.json or model_index.json when present."""
    subfolders = {}
    for index_name in ("model_index.json", "modular_model_index.json"):  # the modular index wins
        path = os.path.join(model_dir, index_name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as f:
                index = json.load(f)
        except (OSError, ValueError) as error:
            raise InputProblem(f"--model {model_dir}: {index_name}: unreadable ({error})") from None
        for name, value in index.items():
            if isinstance(value, list) and len(value) == 3 and isinstance(value[2], dict):
                subfolder = value[2].get("subfolder")
                if subfolder:
                    subfolders[name] = subfolder
    return subfolders


def component_dir(model_dir, name, subfolders):
    """The folder a component loads from; InputProblem naming it when it is not there."""
    folder = os.path.join(model_dir, subfolders.get(name, name))
    if not os.path.isdir(folder):
        raise InputProblem(f"--model {model_dir}: no {subfolders.get(name, name)}/ folder for the pipeline's "
                           f"'{name}' component")
    return folder


def encoder_folders(model_dir, with_vae):
    """The folders the encoder components load from, checked before anything heavy is imported."""
    subfolders = index_subfolders(model_dir)
    names = ("text_encoder", "tokenizer", "processor") + (("vae",) if with_vae else ())
    folders = {name: component_dir(model_dir, name, subfolders) for name in names}
    for name, required in (("text_encoder", "config.json"), ("processor", "preprocessor_config.json")) + (
            (("vae", "config.json"),) if with_vae else ()):
        if not os.path.isfile(os.path.join(folders[name], required)):
            raise InputProblem(f"--model {model_dir}: {os.path.basename(folders[name])}/{required} missing")
    return folders


def load_encoder_components(model_dir, device, dtype, with_vae):
    """Loads text_encoder, tokenizer, processor (and vae) from local files, as the pipeline's specs name them."""
    from transformers import Qwen2TokenizerFast, Qwen3VLForConditionalGeneration, Qwen3VLProcessor

    folders = encoder_folders(model_dir, with_vae)

    def load(name, loader):
        try:
            return loader()
        except InputProblem:
            raise
        except Exception as error:  # noqa: BLE001 - name the component, keep the cause
            raise RuntimeError(f"--model {model_dir}: loading '{name}' from {folders[name]} failed: {error}") from error

    components = {
        "tokenizer": load("tokenizer", lambda: Qwen2TokenizerFast.from_pretrained(
            folders["tokenizer"], local_files_only=True)),
        "processor": load("processor", lambda: Qwen3VLProcessor.from_pretrained(
            folders["processor"], local_files_only=True)),
        "text_encoder": load("text_encoder", lambda: Qwen3VLForConditionalGeneration.from_pretrained(
            folders["text_encoder"], dtype=dtype, local_files_only=True).to(device).eval()),
    }
    if with_vae:
        from diffusers import AutoencoderKLMiniMaxH3

        components["vae"] = load("vae", lambda: AutoencoderKLMiniMaxH3.from_pretrained(
            folders["vae"], local_files_only=True).to(device).eval())
    return components, folders


def check_text_encoder_depth(text_encoder, layer, model_dir):
    """The pipeline reads hidden_states[layer]: the encoder needs more decoder layers than that."""
    num_layers = text_encoder.config.text_config.num_hidden_layers
    if num_layers <= layer:
        raise InputProblem(f"--model {model_dir}: text_encoder has {num_layers} decoder layers, but MiniMax-H3 "
                           f"conditions on hidden_states[{layer}] and needs more than {layer}")


def encoder_blocks():
    """The pipeline's own first three stages (canvas, text encoder, keyframe VAE encoder), in order."""
    from diffusers.modular_pipelines import SequentialPipelineBlocks
    from diffusers.modular_pipelines.minimax_h3.modular_blocks_minimax_h3 import MiniMaxH3Blocks

    full = MiniMaxH3Blocks()
    return SequentialPipelineBlocks.from_blocks_dict({name: full.sub_blocks[name] for name in ENCODER_STAGES})


def build_pipeline(blocks, components):
    """A MiniMaxH3ModularPipeline over `blocks` with the already loaded components."""
    from diffusers.modular_pipelines.minimax_h3.modular_pipeline import MiniMaxH3ModularPipeline

    pipe = MiniMaxH3ModularPipeline(blocks=blocks)
    pipe.update_components(**components)
    return pipe


def run_encoders(pipe, prompt, keyframes, width, height):
    """Runs the encoder stages; returns prompt_embeds, text_token_tags and the keyframe latents (or None)."""
    image = keyframes[0] if len(keyframes) > 0 else None
    last_image = keyframes[1] if len(keyframes) > 1 else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pipe(prompt=prompt, image=image, last_image=last_image, height=height, width=width,
                   output=["prompt_embeds", "text_token_tags", "condition_latents", "keyframe_anchors"])
    return out


# ---------------------------------------------------------------------------------------------
# The conditioning file
# ---------------------------------------------------------------------------------------------


def conditioning_tensors(out, num_keyframes, width, height):
    """The encoders' outputs in h3parity's conditioning layout, checked."""
    import torch

    embeds = out.get("prompt_embeds")
    tags = out.get("text_token_tags")
    if embeds is None or embeds.ndim != 3 or embeds.shape[0] != 1:
        raise RuntimeError(f"the text encoder step returned prompt_embeds of shape "
                           f"{None if embeds is None else tuple(embeds.shape)}, expected (1, L, text_dim)")
    if tags is None or tuple(tags.shape) != (embeds.shape[1],):
        raise RuntimeError("the text encoder step returned text_token_tags that do not match prompt_embeds")
    tensors = {
        "encoder_hidden_states": embeds.detach().to("cpu", torch.bfloat16).contiguous(),
        "text_token_tags": tags.detach().to("cpu", torch.int64).contiguous(),
    }
    if not bool(((tensors["text_token_tags"] == 0) | (tensors["text_token_tags"] == 1)).all()):
        raise RuntimeError("text_token_tags holds values other than 0 (vision) and 1 (text)")
    if not torch.isfinite(tensors["encoder_hidden_states"].float()).all():
        raise RuntimeError("prompt_embeds holds NaN or infinite values")
    if num_keyframes:
        latents = out.get("condition_latents") or []
        if len(latents) != num_keyframes:
            raise RuntimeError(f"the keyframe VAE step returned {len(latents)} latents for {num_keyframes} keyframes")
        frames = torch.cat([lat.detach().to("cpu", torch.float32) for lat in latents], dim=2).contiguous()
        expected = (1, LATENT_CHANNELS, num_keyframes, height // SPATIAL_COMPRESSION, width // SPATIAL_COMPRESSION)
        if tuple(frames.shape) != expected:
            raise RuntimeError(f"keyframe latents have shape {tuple(frames.shape)}, expected {expected}")
        if not torch.isfinite(frames).all():
            raise RuntimeError("keyframe latents hold NaN or infinite values (float16 overflow in the VAE encode?)")
        tensors["keyframe_latents"] = frames
    return tensors


def diffusers_commit(explicit):
    """The diffusers commit: as given, else the git checkout the imported package lives in, else 'unknown'."""
    if explicit:
        return explicit
    import diffusers

    package = os.path.dirname(os.path.abspath(diffusers.__file__))
    try:
        top = subprocess.run(["git", "-C", package, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        # Only a checkout of diffusers itself: a copy inside another repository would name that one.
        if top and os.path.realpath(os.path.join(top, "src", "diffusers")) == os.path.realpath(package):
            commit = subprocess.run(["git", "-C", top, "rev-parse", "HEAD"], capture_output=True, text=True,
                                    timeout=10).stdout.strip()
            if commit:
                return commit
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def file_digest_or_empty(path):
    return sha256_file(path) if os.path.isfile(path) else ""


def metadata(args, pipe, folders, tensors, keyframe_facts, anchors):
    """String metadata recorded in the safetensors header: what produced this file, from what."""
    import diffusers
    import torch
    import transformers

    text_encoder = pipe.text_encoder
    text_config = text_encoder.config.text_config
    tags = tensors["text_token_tags"]
    meta = {
        "format": "h3parity-conditioning",
        "generator": GENERATOR,
        "workflow": "fl2va" if keyframe_facts else "t2va",
        "prompt": args.prompt,
        "prompt_sha256": hashlib.sha256(args.prompt.encode("utf-8")).hexdigest(),
        "canvas": f"{args.width}x{args.height}",
        "keyframe_anchors": ",".join(anchors),
        "num_text_rows": str(int(tags.numel())),
        "num_vision_rows": str(int((tags == 0).sum())),
        "text_encoder_class": type(text_encoder).__name__,
        "text_encoder_hidden_size": str(text_config.hidden_size),
        "text_encoder_num_layers": str(text_config.num_hidden_layers),
        "text_encoder_layer": str(pipe.text_encoder_layer),
        "text_encoder_dtype": str(text_encoder.dtype).replace("torch.", ""),
        "text_encoder_config_sha256": file_digest_or_empty(os.path.join(folders["text_encoder"], "config.json")),
        "processor_config_sha256": file_digest_or_empty(os.path.join(folders["processor"], "preprocessor_config.json")),
        "model_dir": os.path.basename(os.path.abspath(args.model)),
        "device": args.device,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "diffusers_version": diffusers.__version__,
        "diffusers_commit": diffusers_commit(args.diffusers_commit),
    }
    for role, facts in zip(("first", "last"), keyframe_facts):
        meta.update({f"{role}_image_{k}": v for k, v in facts.items()})
    if keyframe_facts:
        meta["vae_config_sha256"] = file_digest_or_empty(os.path.join(folders["vae"], "config.json"))
        meta["keyframe_encode_seed"] = str(pipe.keyframe_encode_seed)
    return meta


def write_conditioning(path, tensors, meta):
    from safetensors.torch import save_file

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    save_file(tensors, tmp, metadata=meta)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# The contract
# ---------------------------------------------------------------------------------------------


def contract_name(args):
    if args.contract_name:
        return args.contract_name
    stem = os.path.basename(args.out)[: -len(".safetensors")]
    return re.sub(r"[^A-Za-z0-9._-]", "-", stem).lstrip(".") or "conditioning"


def relative_to(path, start_dir):
    return os.path.relpath(os.path.abspath(path), os.path.abspath(start_dir)).replace(os.sep, "/")


def builtin_model(field):
    """The preset a built-in contract model names ("preset:<name>" or "seeded:<name>[?settings]"),
    or None for a directory."""
    for prefix in ("preset:", "seeded:"):
        if field.startswith(prefix):
            return field[len(prefix):].split("?", 1)[0]
    return None


def transformer_text_dim(model_field, contract_dir, flag):
    """text_dim of the transformer the contract names; `flag` is the argument it came from."""
    preset = builtin_model(model_field)
    if preset is not None:
        if preset not in PRESET_TEXT_DIMS:
            raise InputProblem(f"{flag} {model_field}: unknown preset '{preset}' "
                               f"(known: {', '.join(PRESET_TEXT_DIMS)})")
        return PRESET_TEXT_DIMS[preset]
    directory = os.path.join(contract_dir, model_field)
    for config in (os.path.join(directory, "transformer", "config.json"), os.path.join(directory, "config.json")):
        if os.path.isfile(config):
            with open(config) as f:
                return json.load(f).get("text_dim")
    raise InputProblem(f"{flag}: {os.path.normpath(directory)} has no transformer/config.json; the contract's model "
                       "is the directory h3parity generates with (--transformer-model DIR, or preset:<name> / "
                       "seeded:<name>; --model is the default)")


def contract_model_field(args, contract_dir):
    target = args.transformer_model or args.model
    return target if builtin_model(target) is not None else relative_to(target, contract_dir)


def build_contract(args, contract_dir, model_field):
    """The contract JSON, with the conditioning file named relative to the contract's directory."""
    return {
        "name": contract_name(args),
        "model": model_field,
        "conditioning_file": relative_to(args.out, contract_dir),
        "seeds": parse_seeds(args.seeds),
        "frames": args.frames,
        "width": args.width,
        "height": args.height,
        "fps": args.fps,
        "audio_sample_rate": args.audio_sample_rate,
        "sampling_steps": args.steps,
        "video_shift": args.video_shift,
        "audio_shift": args.audio_shift,
        "bounds": {
            "psnr_db_min": args.psnr_db_min,
            "ssim_min": args.ssim_min,
            "temporal_rmse_max": args.temporal_rmse_max,
            "audio_rel_l2_max": args.audio_rel_l2_max,
        },
        "require_gate": bool(args.require_gate),
    }


def write_json(path, value):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def export(args):
    check_request(args)
    check_export_args(args)
    note = duration_warning(args.frames, args.fps)
    if note:
        print(f"warning: {note}", file=sys.stderr)
    contract_dir = os.path.dirname(os.path.abspath(args.contract)) if args.contract else None
    model_field = contract_model_field(args, contract_dir) if args.contract else None
    model_flag = "--transformer-model" if args.transformer_model else "--model"
    text_dim = transformer_text_dim(model_field, contract_dir, model_flag) if args.contract else None

    encoder_folders(args.model, bool(args.first))
    keyframes, keyframe_facts = load_keyframes(args)
    import_stack()
    import torch

    device = resolve_device(args.device)
    components, folders = load_encoder_components(args.model, device, torch_dtype(args.dtype), bool(keyframes))
    pipe = build_pipeline(encoder_blocks(), components)
    check_text_encoder_depth(pipe.text_encoder, pipe.text_encoder_layer, args.model)

    with torch.no_grad():
        out = run_encoders(pipe, args.prompt, keyframes, args.width, args.height)
    tensors = conditioning_tensors(out, len(keyframes), args.width, args.height)
    width = tensors["encoder_hidden_states"].shape[-1]
    if text_dim is not None and width != text_dim:
        raise InputProblem(f"--model {args.model}: the text encoder's hidden size is {width}, but the transformer "
                           f"the contract names ({model_field}) takes text_dim {text_dim}")

    anchors = tuple(out.get("keyframe_anchors") or ())
    write_conditioning(args.out, tensors, metadata(args, pipe, folders, tensors, keyframe_facts, anchors))
    tags = tensors["text_token_tags"]
    shapes = ", ".join(f"{k} {tuple(v.shape)} {str(v.dtype).replace('torch.', '')}" for k, v in tensors.items())
    print(f"wrote {args.out}: {shapes}; {int((tags == 1).sum())} text rows, {int((tags == 0).sum())} vision rows")
    if args.contract:
        write_json(args.contract, build_contract(args, contract_dir, model_field))
        print(f"wrote {args.contract}: contract '{contract_name(args)}', model {model_field}")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        export(args)
    except InputProblem as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001 - one line for the user, the trace for the log
        import traceback

        traceback.print_exc()
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
