#pragma once
// The MiniMax-H3 video VAE (AutoencoderKLMiniMaxH3) and audio VAE (AutoencoderKLMiniMaxH3Audio)
// configurations under diffusers' config.json keys, with the geometry derived from them.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace h3p::model {

// Defaults are the released checkpoint's values.
struct VideoVaeConfig {
  int64_t in_channels = 3;
  int64_t out_channels = 3;
  int64_t latent_channels = 24;
  std::vector<int64_t> block_out_channels{128, 256, 256, 512, 512, 1024};
  int64_t layers_per_block = 2;
  std::vector<int64_t> spatial_downsample_factors{2, 2, 2, 2, 1, 1};
  std::vector<int64_t> temporal_downsample_factors{1, 2, 2, 1, 1, 1};
  int64_t norm_num_groups = 32;
  double norm_eps = 1e-6;
  std::string spatial_padding_mode = "reflect";
  int64_t decoder_num_layers = 36;
  int64_t decoder_num_attention_heads = 32;
  int64_t decoder_attention_head_dim = 64;
  int64_t decoder_num_register_tokens = 4;
  int64_t decoder_ffn_mult = 4;
  double decoder_rope_theta = 100.0;
  double decoder_rope_dim_ratio = 0.75;
  double decoder_norm_eps = 1e-5;
  int64_t clip_length = 17;
  int64_t token_drop = 3;
  std::vector<double> latents_mean;  // latent_channels values (zeros when absent)
  std::vector<double> latents_std;   // latent_channels values (ones when absent)

  // Pixels per latent pixel along H and W (16 released): product of the spatial factors.
  int64_t spatial_ratio() const;
  // Pixel frames per latent frame (4 released): product of the temporal factors.
  int64_t temporal_ratio() const;
  // Width of the ViT decoder: heads * head_dim.
  int64_t decoder_dim() const { return decoder_num_attention_heads * decoder_attention_head_dim; }
  // Head channels RoPE rotates: int(head_dim * rope_dim_ratio).
  int64_t rope_dim() const;
  // Latent frames per decoded chunk: ceil(clip_length / temporal_ratio) (5 released).
  int64_t tokens_chunk_size() const;
  // Leading pixel frames each decoded chunk drops: (-clip_length) mod temporal_ratio (3).
  int64_t frame_pre_padding() const;
  // Latent frames two consecutive chunks share: (-token_drop) mod tokens_chunk_size (2).
  int64_t token_overlap() const;
  // Pixel frames cross-faded between chunks (5 released).
  int64_t frame_overlap() const;

  // Checks internal consistency; throws InputError naming `origin` and the field.
  void validate(const std::string& origin) const;
  // The config as diffusers' config.json, pretty-printed (for manifests and logs).
  std::string describe() const;
};

// Defaults are the released checkpoint's values.
struct AudioVaeConfig {
  int64_t encoder_dim = 64;
  std::vector<int64_t> encoder_rates{2, 4, 4, 5, 5};
  int64_t latent_dim = 2048;
  int64_t latent_channels = 32;
  int64_t num_attention_heads = 8;
  int64_t decoder_dim = 1024;
  std::vector<int64_t> decoder_rates{5, 5, 2, 2, 2, 2, 2};
  std::vector<int64_t> decoder_kernel_sizes{9, 9, 4, 4, 4, 4, 4};
  std::vector<int64_t> resblock_kernel_sizes{3, 7, 11};
  std::vector<std::vector<int64_t>> resblock_dilation_sizes{{1, 3, 5}, {1, 3, 5}, {1, 3, 5}};
  int64_t sampling_rate = 32000;
  std::vector<double> latents_mean;  // latent_channels values; empty when the config has none
  std::vector<double> latents_std;

  // Waveform samples per latent (800 released): product of the encoder rates.
  int64_t hop_length() const;
  // Channels after upsampling stage `i`: decoder_dim / 2^(i+1).
  int64_t stage_channels(std::size_t i) const { return decoder_dim >> (i + 1); }

  // Checks internal consistency; throws InputError naming `origin` and the field.
  void validate(const std::string& origin) const;
  // The config as diffusers' config.json, pretty-printed (for manifests and logs).
  std::string describe() const;
};

// Parse diffusers' config.json of each class (keys starting with '_' are ignored, other
// unknown keys refused). Throw InputError naming the file and field.
VideoVaeConfig parse_video_vae_config(const nlohmann::json& json, const std::string& origin);
AudioVaeConfig parse_audio_vae_config(const nlohmann::json& json, const std::string& origin);
VideoVaeConfig load_video_vae_config(const std::filesystem::path& config_json);
AudioVaeConfig load_audio_vae_config(const std::filesystem::path& config_json);
// The config.json diffusers writes for each config (with _class_name).
nlohmann::json video_vae_config_to_json(const VideoVaeConfig& config);
nlohmann::json audio_vae_config_to_json(const AudioVaeConfig& config);

// `--model` takes the model directory (with vae/ or audio_vae/) or the component itself.
// Throw InputError naming `model` when neither is there.
std::filesystem::path resolve_vae_dir(const std::filesystem::path& model);
std::filesystem::path resolve_audio_vae_dir(const std::filesystem::path& model);

}  // namespace h3p::model
