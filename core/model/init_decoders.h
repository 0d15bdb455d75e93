#pragma once
// Writes diffusers-layout video and audio VAE directories (vae/, audio_vae/: config.json +
// diffusion_pytorch_model.safetensors, every tensor fp32, encoder included so diffusers'
// from_pretrained loads them) with seeded weights.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/model/presets.h"

namespace h3p::model {

// Writes `<dir>/vae/` and `<dir>/audio_vae/` for `preset`; every file atomically. Each VAE
// draws from its own CPU generator (seeds `seed + 1000003` and `seed + 2000003`), tensors in
// parameter-table order: weights N(0, 1/fan_in), biases N(0, 0.02²), norm weights and
// weight-norm magnitudes 1 + N(0, 0.05²), ViT residual scales 0.5 + N(0, 0.05²), register
// tokens and weight-norm directions N(0, 1), SnakeBeta log-parameters N(0, 0.1²), the
// anti-aliasing filters computed, the audio output magnitude scaled to 0.07 so the final clamp
// rarely bites. Latent means N(0, 0.05²) and stds 0.8 + 0.4·U(0, 1), rounded to fp32, go into
// the configs. Returns `<dir>/vae`.
// With `seeded`, each component gets its config and a seed record (seed + offset) instead of
// weight files; its decoder tensors are then drawn at load time by vae_param_value's rule.
std::filesystem::path init_decoders(const std::filesystem::path& dir, const DecoderPreset& preset,
                                    uint64_t seed, bool seeded = false);

// What init_decoders writes, without writing: {"vae": config.json, "audio_vae": config.json,
// "parameters": {"vae": count, "audio_vae": count}} (the configs byte for byte as written).
nlohmann::json decoders_plan(const DecoderPreset& preset, uint64_t seed);

// One line for the log: the preset, its widths, each VAE's parameter count and fp32 size.
// Throws InputError for an unknown name.
std::string describe_decoder_preset(const std::string& name);

}  // namespace h3p::model
