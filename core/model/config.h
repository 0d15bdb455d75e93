#pragma once
// The MiniMax-H3 transformer configuration under diffusers' config.json keys.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace h3p::model {

struct TransformerConfig {
  int64_t num_attention_heads = 56;
  int64_t attention_head_dim = 128;
  int64_t hidden_size = 5376;
  int64_t num_layers = 50;
  int64_t num_refiner_layers = 2;
  int64_t ffn_dim = 14336;
  int64_t in_channels = 24;
  int64_t audio_in_channels = 32;
  std::array<int64_t, 3> patch_size{1, 2, 2};
  int64_t text_dim = 5120;
  int64_t freq_dim = 256;
  int64_t time_embed_hidden_dim = 5376;
  int64_t time_embed_dim = 2688;
  int64_t rope_freq_dim = 16;
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  double qk_norm_eps = 1e-5;
  double final_norm_eps = 1e-5;

  int64_t inner_dim() const { return num_attention_heads * attention_head_dim; }
  // Width of one patchified video row: in_channels * prod(patch_size).
  int64_t video_patch_dim() const {
    return in_channels * patch_size[0] * patch_size[1] * patch_size[2];
  }
  // Channels of each head that RoPE rotates: 2 * 3 * rope_freq_dim.
  int64_t rotary_dim() const { return 6 * rope_freq_dim; }

  // Checks internal consistency; throws InputError naming `origin` and the field.
  void validate(const std::string& origin) const;
  // One "key = value" per line, for manifests and logs.
  std::string describe() const;
};

// Parses diffusers' config.json of MiniMaxH3Transformer3DModel (unknown keys starting with '_'
// are ignored; others are refused). Throws InputError naming the file and field.
TransformerConfig parse_transformer_config(const nlohmann::json& json, const std::string& origin);
TransformerConfig load_transformer_config(const std::filesystem::path& config_json);
// The config.json diffusers writes for this config (with _class_name).
nlohmann::json transformer_config_to_json(const TransformerConfig& config);

// `--model` takes the model directory (with transformer/) or transformer/ itself.
std::filesystem::path resolve_transformer_dir(const std::filesystem::path& model);

}  // namespace h3p::model
