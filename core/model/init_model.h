#pragma once
// Writes a diffusers-layout model directory (transformer/config.json +
// diffusion_pytorch_model.safetensors) with seeded weights in the checkpoint dtypes.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/model/presets.h"

namespace h3p::model {

struct InitModelParams {
  ModelPreset preset;
  uint64_t seed = 0;
  // Store every parameter in fp32 instead of the mixed-precision checkpoint dtypes.
  bool all_fp32 = false;
  // Decoder preset written as vae/ and audio_vae/ (see init_decoders), or "none".
  std::string decoders = "tiny";
};

// Writes `<dir>/transformer/` and, unless params.decoders is "none", `<dir>/vae/` and
// `<dir>/audio_vae/` (the transformer files do not depend on the decoders); every file
// atomically. Transformer weights: one CPU generator seeded with `seed`, parameters drawn in
// parameter_specs order: weights N(0, 1/fan_in), biases N(0, 0.02²), norm weights
// 1 + N(0, 0.05²). Returns the transformer directory.
std::filesystem::path init_model(const std::filesystem::path& dir, const InitModelParams& params,
                                 const std::function<void(double)>& progress = {});

// What init_model writes, without writing: {"transformer": config.json, "vae", "audio_vae":
// config.json or null under decoders "none", "parameters": {"transformer", "vae", "audio_vae"}}.
nlohmann::json init_model_plan(const InitModelParams& params);

}  // namespace h3p::model
