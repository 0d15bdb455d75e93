#!/usr/bin/env python3
"""Add a tiny random Qwen3-VL conditioner to an h3parity model directory, built locally from configs.

Writes into MODEL_DIR (which already holds transformer/, vae/ and audio_vae/ from
`h3parity init-model --preset tiny`) everything the diffusers MiniMax-H3 modular pipeline loads
besides those: text_encoder/ (a Qwen3VLForConditionalGeneration whose text hidden size is the
transformer's text_dim and which has more decoder layers than the pipeline's conditioning layer),
tokenizer/ (a byte-level BPE built with `tokenizers`, wrapped as Qwen2TokenizerFast, with every
special token the pipeline's presentation uses), processor/ (a Qwen3VLProcessor over that
tokenizer with a small image processor), scheduler/ and audio_scheduler/, and a
modular_model_index.json naming every component. Every weight is drawn from --seed, so the same
seed writes the same files; nothing is downloaded.

Usage (diffusers source tree on PYTHONPATH for the self-check and the scheduler configs):
    PYTHONPATH=<diffusers>/src python3 tools/conditioning/make_tiny_encoders.py --model MODEL_DIR [--seed 0]
"""

import argparse
import json
import os
import re
import shutil
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")

import torch  # noqa: E402

# What the pipeline reads: hidden_states[50] (MiniMaxH3ModularPipeline.text_encoder_layer), so
# the tiny stack has a couple of layers past it.
CONDITIONING_LAYER = 50
TEXT_LAYERS = 52

# Every special token of a Qwen3-VL tokenizer; the MiniMax-H3 presentation uses the vision ones.
SPECIAL_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
)

# The pre-tokenizer split of Qwen's byte-level BPE (contractions, letter runs, single digits,
# punctuation runs, newlines, whitespace).
SPLIT_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# A fixed corpus the tiny BPE learns its merges from (deterministic: most frequent pair first,
# ties by the pair's text).
MERGE_CORPUS = (
    "A red kite climbs over a windy beach while waves break and gulls call. "
    "The camera follows a cat walking on the roof at sunset; the light is warm and the sky is orange. "
    "<Picture 1>: <Picture 2>: a person speaks to the camera, then turns and walks away into the rain. "
    "Music plays softly in the background while the city lights come on at night."
)
NUM_MERGES = 120

# The image processor: the released patch geometry (16-pixel patches merged 2x2), with pixel
# bounds small enough that a tiny canvas is read at its own size.
PATCH_SIZE = 16
MERGE_SIZE = 2
TEMPORAL_PATCH = 2
MIN_PIXELS = 32 * 32
MAX_PIXELS = 512 * 512
IMAGE_PROCESSOR_TYPES = ("Qwen2VLImageProcessorFast", "Qwen2VLImageProcessor")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--model", required=True, help="model directory (transformer/, vae/ from init-model)")
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    parser.add_argument("--text-dim", type=int, default=0,
                        help="hidden size of the text stack (default: transformer/config.json's text_dim)")
    parser.add_argument("--video-shift", type=float, default=12.0, help="scheduler/ shift (default 12)")
    parser.add_argument("--audio-shift", type=float, default=3.0, help="audio_scheduler/ shift (default 3)")
    return parser.parse_args(argv)


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def transformer_text_dim(model_dir, override):
    if override:
        return override
    path = os.path.join(model_dir, "transformer", "config.json")
    if not os.path.isfile(path):
        fail(f"{path}: missing; run `h3parity init-model --preset tiny --out {model_dir}` first or pass --text-dim")
    with open(path) as f:
        text_dim = json.load(f).get("text_dim")
    if not isinstance(text_dim, int) or text_dim < 1:
        fail(f"{path}: no integer text_dim")
    return text_dim


def write_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


# ---------------------------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------------------------


def byte_alphabet():
    """Byte -> printable character of byte-level BPE: printable Latin-1 bytes stand for
    themselves, the rest are moved past U+0100 in byte order."""
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    mapping, extra = {}, 0
    for byte in range(256):
        if byte in keep:
            mapping[byte] = chr(byte)
        else:
            mapping[byte] = chr(256 + extra)
            extra += 1
    return mapping


def corpus_words(text, alphabet):
    """Pre-tokenized corpus words as tuples of byte symbols."""
    import regex

    words = {}
    for piece in regex.findall(SPLIT_PATTERN, text):
        symbols = tuple(alphabet[b] for b in piece.encode("utf-8"))
        words[symbols] = words.get(symbols, 0) + 1
    return words


def learn_merges(words, count):
    """Greedy BPE: the most frequent adjacent pair is merged, ties broken by the pair's text."""
    merges = []
    words = dict(words)
    for _ in range(count):
        pairs = {}
        for word, freq in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] = pairs.get(pair, 0) + freq
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        if pairs[best] < 2:
            break
        merges.append(best)
        merged = {}
        for word, freq in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + freq
        words = merged
    return merges


def build_backend_tokenizer():
    """A `tokenizers` byte-level BPE with Qwen's split, NFC and every special token added."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    alphabet = byte_alphabet()
    vocab = {alphabet[b]: b for b in range(256)}
    merges = learn_merges(corpus_words(MERGE_CORPUS, alphabet), NUM_MERGES)
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    backend = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    backend.normalizer = normalizers.NFC()
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    return backend, vocab, merges


def write_tokenizer_files(folder, backend, vocab, merges):
    """tokenizer.json, vocab.json, merges.txt and tokenizer_config.json, as a Qwen3-VL repository has them."""
    os.makedirs(folder, exist_ok=True)
    backend.save(os.path.join(folder, "tokenizer.json"))
    write_json(os.path.join(folder, "vocab.json"), vocab)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for left, right in merges:
            f.write(f"{left} {right}\n")
    added = {}
    for token in SPECIAL_TOKENS:
        added[str(backend.token_to_id(token))] = {
            "content": token, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": True,
        }
    write_json(os.path.join(folder, "tokenizer_config.json"), {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "additional_special_tokens": [t for t in SPECIAL_TOKENS if t not in ("<|endoftext|>", "<|im_end|>")],
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 262144,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    })


def check_tokenizer(tokenizer, backend, folder):
    """The loaded tokenizer must map every special token to one id of its own; it should also
    tokenize text as the BPE it was built from (a warning otherwise: the pipeline and the exporter
    load the same files, so parity holds either way)."""
    sample = "<Picture 1>: " + MERGE_CORPUS[:80] + " \u00e9 42"
    got = tokenizer(sample, add_special_tokens=False)["input_ids"]
    want = backend.encode(sample, add_special_tokens=False).ids
    if got != want:
        print(f"warning: {folder}: the loaded {type(tokenizer).__name__} tokenizes differently from the BPE it was "
              f"built from (loaded {got[:12]}..., built {want[:12]}...)")
    ids = {}
    for token in SPECIAL_TOKENS:
        token_id = tokenizer.convert_tokens_to_ids(token)
        if not isinstance(token_id, int) or token_id < 0:
            fail(f"{folder}: special token {token} has no id in the loaded tokenizer ({token_id})")
        if token_id != backend.token_to_id(token):
            print(f"warning: {folder}: special token {token} loads as id {token_id}, built as {backend.token_to_id(token)}")
        ids[token] = token_id
    if len(set(ids.values())) != len(ids):
        fail(f"{folder}: special tokens share ids: {ids}")
    if not got or max(got) >= len(tokenizer):
        fail(f"{folder}: text tokenizes to ids outside the vocabulary: {got[:12]}...")
    return ids


def build_tokenizer(folder):
    from transformers import Qwen2TokenizerFast

    backend, vocab, merges = build_backend_tokenizer()
    write_tokenizer_files(folder, backend, vocab, merges)
    tokenizer = Qwen2TokenizerFast.from_pretrained(folder, local_files_only=True)
    ids = check_tokenizer(tokenizer, backend, folder)
    print(f"tokenizer: byte-level BPE, {len(vocab)} entries ({len(merges)} merges) + {len(SPECIAL_TOKENS)} "
          f"special tokens, loads as {type(tokenizer).__name__}")
    return tokenizer, backend, ids


# ---------------------------------------------------------------------------------------------
# Processor
# ---------------------------------------------------------------------------------------------


def image_processor_config(processor_type):
    return {
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
        "image_processor_type": processor_type,
        "merge_size": MERGE_SIZE,
        "patch_size": PATCH_SIZE,
        "processor_class": "Qwen3VLProcessor",
        "resample": 3,
        "rescale_factor": 1 / 255,
        "size": {"longest_edge": MAX_PIXELS, "shortest_edge": MIN_PIXELS},
        "temporal_patch_size": TEMPORAL_PATCH,
    }


def video_processor_config():
    return {
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "do_sample_frames": True,
        "fps": 2,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
        "max_frames": 768,
        "merge_size": MERGE_SIZE,
        "min_frames": 4,
        "patch_size": PATCH_SIZE,
        "processor_class": "Qwen3VLProcessor",
        "resample": 3,
        "rescale_factor": 1 / 255,
        "size": {"longest_edge": MAX_PIXELS * 2, "shortest_edge": MIN_PIXELS},
        "temporal_patch_size": TEMPORAL_PATCH,
        "video_processor_type": "Qwen3VLVideoProcessor",
    }


def check_processor(processor, ids, folder):
    """A 128x96 image must come out as a 6x8 patch grid, and pad ids must be typed as image tokens."""
    import numpy as np
    from PIL import Image

    image = Image.fromarray((np.arange(96 * 128 * 3) % 251).astype(np.uint8).reshape(96, 128, 3))
    features = processor.image_processor(images=[image], return_tensors="pt")
    grid = [int(v) for v in features["image_grid_thw"][0]]
    if grid != [1, 96 // PATCH_SIZE, 128 // PATCH_SIZE]:
        return f"image_grid_thw {grid} for a 128x96 image, expected [1, 6, 8]"
    if processor.image_processor.merge_size != MERGE_SIZE:
        return f"merge_size {processor.image_processor.merge_size}, expected {MERGE_SIZE}"
    types = processor.create_mm_token_type_ids([[ids["<|image_pad|>"], ids["<|vision_start|>"]]])
    if [list(map(int, row)) for row in types] != [[1, 0]]:
        return f"create_mm_token_type_ids gives {types} for [image_pad, vision_start], expected [[1, 0]]"
    return ""


def build_processor(folder, tokenizer_folder, ids):
    """processor/: the tokenizer files plus image and video processor configs; the first image
    processor type this transformers loads and that checks out is kept."""
    from transformers import Qwen3VLProcessor

    problems = []
    for processor_type in IMAGE_PROCESSOR_TYPES:
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        shutil.copytree(tokenizer_folder, folder)
        write_json(os.path.join(folder, "preprocessor_config.json"), image_processor_config(processor_type))
        write_json(os.path.join(folder, "video_preprocessor_config.json"), video_processor_config())
        try:
            processor = Qwen3VLProcessor.from_pretrained(folder, local_files_only=True)
        except Exception as error:  # noqa: BLE001 - try the next type, report all at the end
            problems.append(f"{processor_type}: {error}")
            continue
        problem = check_processor(processor, ids, folder)
        if not problem:
            print(f"processor: Qwen3VLProcessor with {type(processor.image_processor).__name__} "
                  f"(patch {PATCH_SIZE}, merge {MERGE_SIZE}, {MIN_PIXELS}-{MAX_PIXELS} pixels)")
            return processor
        problems.append(f"{processor_type}: {problem}")
    fail(f"{folder}: no image processor type loads and checks out:\n  " + "\n  ".join(problems))


# ---------------------------------------------------------------------------------------------
# Text encoder
# ---------------------------------------------------------------------------------------------


def encoder_config(text_dim, vocab_size, ids):
    """A Qwen3-VL config: text hidden size text_dim, TEXT_LAYERS decoder layers, a 2-block vision tower.
    The multimodal rotary section is given as `rope_parameters` (transformers 5) and, where that is
    not taken, as the older `rope_theta` + `rope_scaling`."""
    from transformers import Qwen3VLConfig

    head_dim = 24 if text_dim % 24 == 0 else 16
    half = head_dim // 2
    mrope_section = [half - 2 * (half // 3), half // 3, half // 3]
    rope = {"rope_type": "default", "mrope_section": mrope_section, "mrope_interleaved": True}
    text = {
        "vocab_size": vocab_size,
        "hidden_size": text_dim,
        "intermediate_size": 2 * text_dim,
        "num_hidden_layers": TEXT_LAYERS,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": False,
        "attention_bias": False,
    }
    vision = {
        "depth": 2,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_heads": 2,
        "in_channels": 3,
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": MERGE_SIZE,
        "temporal_patch_size": TEMPORAL_PATCH,
        "out_hidden_size": text_dim,
        "num_position_embeddings": 64,
        "deepstack_visual_indexes": [0],
        "hidden_act": "gelu_pytorch_tanh",
    }
    rope_spellings = (
        {"rope_parameters": dict(rope, rope_theta=5000000.0)},
        {"rope_theta": 5000000.0, "rope_scaling": dict(rope)},
    )
    seen = []
    for spelling in rope_spellings:
        config = Qwen3VLConfig(
            text_config=dict(text, **spelling),
            vision_config=vision,
            image_token_id=ids["<|image_pad|>"],
            video_token_id=ids["<|video_pad|>"],
            vision_start_token_id=ids["<|vision_start|>"],
            vision_end_token_id=ids["<|vision_end|>"],
            tie_word_embeddings=False,
        )
        taken = config.text_config
        stored = getattr(taken, "rope_parameters", None) or getattr(taken, "rope_scaling", None) or {}
        if (taken.hidden_size == text_dim and taken.num_hidden_layers == TEXT_LAYERS
                and list(stored.get("mrope_section") or []) == mrope_section):
            return config
        seen.append(f"hidden {taken.hidden_size}, layers {taken.num_hidden_layers}, rope {stored}")
    fail("this transformers did not take the tiny Qwen3-VL config: " + "; ".join(seen))


def reinit_parameters(model, seed):
    """Every parameter drawn from one generator in name order: unit-variance linear maps, unit
    embeddings, norms near 1, small biases. Independent of transformers' own init."""
    gen = torch.Generator("cpu").manual_seed(seed)
    with torch.no_grad():
        for name, param in sorted(model.named_parameters(), key=lambda item: item[0]):
            noise = torch.randn(param.shape, generator=gen, dtype=torch.float32)
            if name.endswith("bias"):
                value = 0.02 * noise
            elif param.ndim == 1:  # RMSNorm / LayerNorm weights
                value = 1.0 + 0.05 * noise
            elif "embed" in name and param.ndim == 2:  # token and position embeddings
                value = noise if "embed_tokens" in name else 0.1 * noise
            else:
                fan_in = param[0].numel()
                value = noise / fan_in ** 0.5
            param.copy_(value.to(param.dtype))


def build_text_encoder(folder, text_dim, vocab_size, ids, seed):
    from transformers import Qwen3VLForConditionalGeneration

    config = encoder_config(text_dim, vocab_size, ids)
    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config).eval()
    reinit_parameters(model, seed)
    model = model.to(torch.bfloat16)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    model.save_pretrained(folder)
    count = sum(p.numel() for p in model.parameters())
    print(f"text_encoder: Qwen3VLForConditionalGeneration, text {TEXT_LAYERS} layers x {text_dim}, vision 2 blocks "
          f"x 32, {count / 1e6:.2f} M parameters, bf16")
    return model


def self_check(model_dir, folders, text_dim):
    """Reload everything from disk and encode one fl2va-like presentation with the pipeline's own
    function: hidden_states[50] must have the transformer's text width and be finite and non-zero."""
    try:
        from diffusers.modular_pipelines.minimax_h3.encoders import get_qwen3vl_prompt_embeds
    except ImportError as error:
        print(f"self-check skipped: diffusers is not importable ({error})")
        return
    import numpy as np
    from PIL import Image
    from transformers import Qwen2TokenizerFast, Qwen3VLForConditionalGeneration, Qwen3VLProcessor

    tokenizer = Qwen2TokenizerFast.from_pretrained(folders["tokenizer"], local_files_only=True)
    processor = Qwen3VLProcessor.from_pretrained(folders["processor"], local_files_only=True)
    encoder = Qwen3VLForConditionalGeneration.from_pretrained(
        folders["text_encoder"], dtype=torch.bfloat16, local_files_only=True).eval()
    image = Image.fromarray((np.arange(96 * 128 * 3) % 199).astype(np.uint8).reshape(96, 128, 3))
    vision = processor.image_processor(images=[image], return_tensors="pt")
    num_image_tokens = int(vision["image_grid_thw"][0].prod()) // processor.image_processor.merge_size ** 2
    token_ids = (tokenizer("<Picture 1>: ", add_special_tokens=False)["input_ids"]
                 + [tokenizer.convert_tokens_to_ids("<|vision_start|>")]
                 + [tokenizer.convert_tokens_to_ids("<|image_pad|>")] * num_image_tokens
                 + [tokenizer.convert_tokens_to_ids("<|vision_end|>")]
                 + tokenizer("a red kite", add_special_tokens=False)["input_ids"])
    with torch.no_grad():
        embeds = get_qwen3vl_prompt_embeds(
            encoder, processor, token_ids,
            {"pixel_values": vision["pixel_values"], "image_grid_thw": vision["image_grid_thw"]},
            text_encoder_layer=CONDITIONING_LAYER, device=torch.device("cpu"), dtype=torch.bfloat16)
    if tuple(embeds.shape) != (1, len(token_ids), text_dim):
        fail(f"{model_dir}: self-check: prompt embeds {tuple(embeds.shape)}, expected (1, {len(token_ids)}, {text_dim})")
    if not torch.isfinite(embeds.float()).all() or float(embeds.float().abs().max()) == 0.0:
        fail(f"{model_dir}: self-check: prompt embeds are not finite or all zero")
    print(f"self-check: hidden_states[{CONDITIONING_LAYER}] of a {len(token_ids)}-token presentation with a "
          f"{num_image_tokens}-token vision block: {tuple(embeds.shape)}, rms {embeds.float().pow(2).mean().sqrt():.3g}")


# ---------------------------------------------------------------------------------------------
# Schedulers and the index
# ---------------------------------------------------------------------------------------------


def write_schedulers(model_dir, video_shift, audio_shift):
    try:
        from diffusers import MiniMaxH3Scheduler
    except ImportError:
        for name, shift in (("scheduler", video_shift), ("audio_scheduler", audio_shift)):
            write_json(os.path.join(model_dir, name, "scheduler_config.json"),
                       {"_class_name": "MiniMaxH3Scheduler", "shift": shift})
        return
    MiniMaxH3Scheduler(shift=video_shift).save_pretrained(os.path.join(model_dir, "scheduler"))
    MiniMaxH3Scheduler(shift=audio_shift).save_pretrained(os.path.join(model_dir, "audio_scheduler"))


COMPONENT_TYPES = {
    "text_encoder": ("transformers", "Qwen3VLForConditionalGeneration"),
    "tokenizer": ("transformers", "Qwen2TokenizerFast"),
    "processor": ("transformers", "Qwen3VLProcessor"),
    "vae": ("diffusers", "AutoencoderKLMiniMaxH3"),
    "audio_vae": ("diffusers", "AutoencoderKLMiniMaxH3Audio"),
    "transformer": ("diffusers", "MiniMaxH3Transformer3DModel"),
    "scheduler": ("diffusers", "MiniMaxH3Scheduler"),
    "audio_scheduler": ("diffusers", "MiniMaxH3Scheduler"),
}


def write_modular_index(model_dir):
    """modular_model_index.json: every component present, loaded from this directory's subfolder
    (the shape `ModularPipeline.save_pretrained` writes), so `ModularPipeline.from_pretrained(dir)`
    followed by `load_components()` finds them."""
    try:
        import diffusers

        version = diffusers.__version__
    except ImportError:
        version = "unknown"
    index = {"_blocks_class_name": "MiniMaxH3Blocks", "_class_name": "MiniMaxH3ModularPipeline",
             "_diffusers_version": version}
    location = os.path.abspath(model_dir)
    for name, (library, class_name) in COMPONENT_TYPES.items():
        if not os.path.isdir(os.path.join(model_dir, name)):
            continue
        index[name] = [library, class_name, {
            "pretrained_model_name_or_path": location, "revision": None, "subfolder": name,
            "type_hint": [library, class_name], "variant": None,
        }]
    write_json(os.path.join(model_dir, "modular_model_index.json"), index)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isdir(args.model):
        fail(f"--model {args.model}: not a directory")
    text_dim = transformer_text_dim(args.model, args.text_dim)
    folders = {name: os.path.join(args.model, name) for name in ("text_encoder", "tokenizer", "processor")}
    if re.search(r"\s", os.path.abspath(args.model)):
        print("note: the model path holds whitespace; fine for Python, quote it in shell commands")

    tokenizer, _, ids = build_tokenizer(folders["tokenizer"])
    build_processor(folders["processor"], folders["tokenizer"], ids)
    vocab_size = ((len(tokenizer) + 63) // 64) * 64
    build_text_encoder(folders["text_encoder"], text_dim, vocab_size, ids, args.seed)
    write_schedulers(args.model, args.video_shift, args.audio_shift)
    write_modular_index(args.model)
    self_check(args.model, folders, text_dim)
    print(f"wrote text_encoder/, tokenizer/, processor/, scheduler/, audio_scheduler/, modular_model_index.json "
          f"into {args.model} (seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
