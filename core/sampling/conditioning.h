#pragma once
// The prompt conditioning a request generates from: what the text (and image) encoders
// produced, loaded from a conditioning file so the large encoder runs once elsewhere, or
// synthesised from the prompt text for demos and tests.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace h3p::sampling {

// Encoder outputs of one request, on the CPU.
struct Conditioning {
  at::Tensor encoder_hidden_states;         // (1, L, text_dim) bf16
  at::Tensor text_token_tags;               // (L,) i64: 1 text, 0 vision rows in the text stream
  std::vector<at::Tensor> keyframe_latents; // K tensors (1, 24, 1, h, w) f32, normalised
  std::string source;  // the file it came from, or "synthetic:sha256=<prompt digest>"
};

// Reads a conditioning safetensors file: `encoder_hidden_states` (1, L, text_dim) BF16,
// optional `text_token_tags` (L,) I64 with values 0 or 1 (default: all 1), optional
// `keyframe_latents` (1, 24, K, h, w) F32 with even h, w (split into K single-frame tensors).
// Any other tensor, a wrong dtype or shape, or a non-finite value throws InputError
// "<path>: <tensor>: <what>".
Conditioning load_conditioning(const std::filesystem::path& path, int64_t text_dim);

// SYNTHETIC conditioning, not the output of any text encoder: a deterministic stand-in
// derived from the prompt text. Seed = the first 8 bytes of SHA-256(prompt) read big-endian;
// a CPU generator with that seed draws randn (1, text_tokens, text_dim) fp32, cast to bf16;
// every tag is 1; no keyframes. Throws InputError for text_tokens < 1 or text_dim < 1.
Conditioning synthesize_conditioning(const std::string& prompt, int64_t text_tokens,
                                     int64_t text_dim);

// The seed synthesize_conditioning uses for `prompt`.
uint64_t prompt_seed(const std::string& prompt);

}  // namespace h3p::sampling
