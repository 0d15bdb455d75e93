#pragma once
// Built-in model presets written by `h3parity init-model` (and `preset:<name>` in contracts).
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/config.h"
#include "core/model/vae_config.h"

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

// Video and audio VAE configs written by `h3parity init-model` next to the transformer.
struct DecoderPreset {
  std::string name;
  VideoVaeConfig vae;
  AudioVaeConfig audio_vae;
  std::string description;
};

// tiny: the real latent geometry (spatial /16 over four 2x levels, temporal 17n+5 -> 5n+2,
// 24 latent channels; audio 32 channels, 800 samples per latent at 32 kHz in five upsampling
// stages instead of seven) with a 2-block, 32-wide ViT and a 32-channel BigVGAN; the golden
// decoder data uses it. released: the released checkpoints' configs (billions of
// parameters; for reference). Throws InputError for an unknown name.
DecoderPreset find_decoder_preset(const std::string& name);
std::vector<std::string> decoder_preset_names();

}  // namespace h3p::model
