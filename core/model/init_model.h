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
  // Write seed records instead of weight files (seeded_weights.h): a few bytes on disk, the
  // weights drawn on the device at load time by another rule than the files'.
  bool seeded_weights = false;
};

// Writes `<dir>/transformer/` and, unless params.decoders is "none", `<dir>/vae/` and
// `<dir>/audio_vae/` (the transformer files do not depend on the decoders); every file
// atomically. Transformer weights: one CPU generator seeded with `seed`, parameters drawn in
// parameter_specs order by param_value's rule. With seeded_weights, seed records instead of
// weight files; a directory that already holds the other kind is refused. Returns the
// transformer directory.
std::filesystem::path init_model(const std::filesystem::path& dir, const InitModelParams& params,
                                 const std::function<void(double)>& progress = {});

// Throws InputError when `component_dir` already holds weights of the other kind: weight
// files when writing a seed record (`seeded`), a seed record when writing weight files.
void refuse_other_weights(const std::filesystem::path& component_dir, bool seeded);

// What init_model writes, without writing: {"transformer": config.json, "vae", "audio_vae":
// config.json or null under decoders "none", "parameters": {"transformer", "vae", "audio_vae"}}.
nlohmann::json init_model_plan(const InitModelParams& params);

}  // namespace h3p::model
