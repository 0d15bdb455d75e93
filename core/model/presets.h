#pragma once
// Built-in model presets written by `h3parity init-model` (and `preset:<name>` in contracts).
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/config.h"

namespace h3p::model {

struct ModelPreset {
  std::string name;
  TransformerConfig config;
  uint64_t seed = 0;  // weight seed used when none is given
  std::string description;
};

// tiny (real latent widths, 2 layers), small (CPU benchmark size), full-shape (released widths;
// `layers` overrides num_layers, default 1). Throws InputError for an unknown name.
ModelPreset find_preset(const std::string& name, int64_t layers = -1);
std::vector<std::string> preset_names();

}  // namespace h3p::model
