#include "core/model/vae_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/model/config_field.h"

namespace h3p::model {
namespace {

constexpr const char* kVideoClass = "AutoencoderKLMiniMaxH3";
constexpr const char* kAudioClass = "AutoencoderKLMiniMaxH3Audio";

void check_keys(const nlohmann::json& json, const std::vector<std::string>& known,
                const char* class_name, const std::string& origin) {
  if (!json.is_object()) throw_input(origin, "config is not a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (!key.empty() && key[0] == '_') continue;
    bool ok = false;
    for (const std::string& k : known) ok = ok || key == k;
    if (!ok) throw_input(origin, "unknown field '" + key + "'");
  }
  auto cls = json.find("_class_name");
  if (cls != json.end() && *cls != class_name) {
    throw_input(origin, std::string("field '_class_name': expected ") + class_name);
  }
}

void positive(int64_t v, const char* key, const std::string& origin) {
  if (v <= 0) throw_input(origin, std::string("field '") + key + "': must be positive");
}

void positive_list(const std::vector<int64_t>& v, const char* key, const std::string& origin) {
  if (v.empty()) throw_input(origin, std::string("field '") + key + "': must not be empty");
  for (int64_t x : v) positive(x, key, origin);
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Python's a % b for b > 0.
int64_t py_mod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

void check_stats(const std::vector<double>& v, int64_t channels, const char* key,
                 const std::string& origin) {
  if (!v.empty() && static_cast<int64_t>(v.size()) != channels) {
    throw_input(origin, std::string("field '") + key + "': has " + std::to_string(v.size()) +
                            " values, latent_channels is " + std::to_string(channels));
  }
}

nlohmann::json read_json(const std::filesystem::path& path) {
  try {
    return nlohmann::json::parse(io::read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw_input(path.string(), std::string("not valid JSON: ") + e.what());
  }
}

std::filesystem::path resolve_component(const std::filesystem::path& model, const char* sub,
                                        const char* class_name) {
  namespace fs = std::filesystem;
  if (fs::exists(model / sub / "config.json")) return model / sub;
  if (fs::exists(model / "config.json")) {
    const nlohmann::json json = read_json(model / "config.json");
    if (json.is_object() && json.value("_class_name", std::string()) == class_name) return model;
  }
  throw_input(model.string(), std::string("not a model directory with ") + sub +
                                  "/config.json, nor a " + class_name + " directory");
}

}  // namespace

int64_t VideoVaeConfig::spatial_ratio() const { return product(spatial_downsample_factors); }
int64_t VideoVaeConfig::temporal_ratio() const { return product(temporal_downsample_factors); }
int64_t VideoVaeConfig::rope_dim() const {
  return static_cast<int64_t>(static_cast<double>(decoder_attention_head_dim) *
                              decoder_rope_dim_ratio);
}
int64_t VideoVaeConfig::tokens_chunk_size() const {
  const int64_t r = temporal_ratio();
  return (clip_length + r - 1) / r;
}
int64_t VideoVaeConfig::frame_pre_padding() const { return py_mod(-clip_length, temporal_ratio()); }
int64_t VideoVaeConfig::token_overlap() const { return py_mod(-token_drop, tokens_chunk_size()); }
int64_t VideoVaeConfig::frame_overlap() const {
  return std::max<int64_t>(token_overlap() * temporal_ratio() - frame_pre_padding(), 0);
}

void VideoVaeConfig::validate(const std::string& origin) const {
  positive(in_channels, "in_channels", origin);
  positive(out_channels, "out_channels", origin);
  positive(latent_channels, "latent_channels", origin);
  positive_list(block_out_channels, "block_out_channels", origin);
  positive(layers_per_block, "layers_per_block", origin);
  positive_list(spatial_downsample_factors, "spatial_downsample_factors", origin);
  positive_list(temporal_downsample_factors, "temporal_downsample_factors", origin);
  if (spatial_downsample_factors.size() != block_out_channels.size() ||
      temporal_downsample_factors.size() != block_out_channels.size()) {
    throw_input(origin,
                "fields 'spatial_downsample_factors' and 'temporal_downsample_factors' "
                "must have one entry per block_out_channels entry");
  }
  positive(norm_num_groups, "norm_num_groups", origin);
  for (int64_t c : block_out_channels) {
    if (c % norm_num_groups != 0) {
      throw_input(origin, "field 'norm_num_groups': must divide every block_out_channels entry");
    }
  }
  if (spatial_padding_mode != "reflect" && spatial_padding_mode != "replicate" &&
      spatial_padding_mode != "constant" && spatial_padding_mode != "circular") {
    throw_input(origin,
                "field 'spatial_padding_mode': unknown mode '" + spatial_padding_mode + "'");
  }
  if (decoder_num_layers < 0) throw_input(origin, "field 'decoder_num_layers': must be >= 0");
  positive(decoder_num_attention_heads, "decoder_num_attention_heads", origin);
  positive(decoder_attention_head_dim, "decoder_attention_head_dim", origin);
  if (decoder_num_register_tokens < 0) {
    throw_input(origin, "field 'decoder_num_register_tokens': must be >= 0");
  }
  positive(decoder_ffn_mult, "decoder_ffn_mult", origin);
  if (!(decoder_rope_theta > 0))
    throw_input(origin, "field 'decoder_rope_theta': must be positive");
  if (!(decoder_rope_dim_ratio > 0 && decoder_rope_dim_ratio <= 1)) {
    throw_input(origin, "field 'decoder_rope_dim_ratio': must be in (0, 1]");
  }
  if (rope_dim() % 6 != 0) {
    throw_input(origin,
                "fields 'decoder_attention_head_dim' * 'decoder_rope_dim_ratio': the "
                "rotary width " +
                    std::to_string(rope_dim()) + " must be a multiple of 6");
  }
  if (!(norm_eps > 0 && decoder_norm_eps > 0))
    throw_input(origin, "norm epsilons must be positive");
  positive(clip_length, "clip_length", origin);
  if (token_drop < 0) throw_input(origin, "field 'token_drop': must be >= 0");
  if (token_drop > 0 && frame_overlap() <= 0) {
    throw_input(origin, "fields 'clip_length' / 'token_drop': chunks would not overlap");
  }
  check_stats(latents_mean, latent_channels, "latents_mean", origin);
  check_stats(latents_std, latent_channels, "latents_std", origin);
}

std::string VideoVaeConfig::describe() const { return video_vae_config_to_json(*this).dump(2); }

int64_t AudioVaeConfig::hop_length() const { return product(encoder_rates); }

void AudioVaeConfig::validate(const std::string& origin) const {
  positive(encoder_dim, "encoder_dim", origin);
  positive_list(encoder_rates, "encoder_rates", origin);
  positive(latent_dim, "latent_dim", origin);
  positive(latent_channels, "latent_channels", origin);
  positive(num_attention_heads, "num_attention_heads", origin);
  positive(decoder_dim, "decoder_dim", origin);
  positive_list(decoder_rates, "decoder_rates", origin);
  positive_list(decoder_kernel_sizes, "decoder_kernel_sizes", origin);
  positive_list(resblock_kernel_sizes, "resblock_kernel_sizes", origin);
  positive(sampling_rate, "sampling_rate", origin);
  if (product(decoder_rates) != hop_length()) {
    throw_input(origin, "field 'decoder_rates': must upsample by the encoder hop length " +
                            std::to_string(hop_length()));
  }
  if (latent_dim % latent_channels != 0) {
    throw_input(origin, "field 'latent_dim': must be a multiple of latent_channels");
  }
  if (latent_dim % num_attention_heads != 0) {
    throw_input(origin, "field 'num_attention_heads': must divide latent_dim");
  }
  if (decoder_kernel_sizes.size() != decoder_rates.size()) {
    throw_input(origin, "field 'decoder_kernel_sizes': needs one entry per decoder rate");
  }
  for (std::size_t i = 0; i < decoder_rates.size(); ++i) {
    if ((decoder_kernel_sizes[i] - decoder_rates[i]) % 2 != 0 ||
        decoder_kernel_sizes[i] < decoder_rates[i]) {
      throw_input(origin, "field 'decoder_kernel_sizes': kernel " + std::to_string(i) +
                              " must exceed its rate by an even number");
    }
    if (stage_channels(i) < 1) {
      throw_input(origin, "field 'decoder_dim': too small to halve " +
                              std::to_string(decoder_rates.size()) + " times");
    }
  }
  if (resblock_dilation_sizes.size() != resblock_kernel_sizes.size()) {
    throw_input(origin, "field 'resblock_dilation_sizes': needs one list per resblock kernel");
  }
  for (const auto& d : resblock_dilation_sizes) positive_list(d, "resblock_dilation_sizes", origin);
  for (int64_t k : resblock_kernel_sizes) {
    if (k % 2 == 0) throw_input(origin, "field 'resblock_kernel_sizes': kernels must be odd");
  }
  check_stats(latents_mean, latent_channels, "latents_mean", origin);
  check_stats(latents_std, latent_channels, "latents_std", origin);
}

std::string AudioVaeConfig::describe() const { return audio_vae_config_to_json(*this).dump(2); }

VideoVaeConfig parse_video_vae_config(const nlohmann::json& json, const std::string& origin) {
  check_keys(json,
             {"in_channels",
              "out_channels",
              "latent_channels",
              "block_out_channels",
              "layers_per_block",
              "spatial_downsample_factors",
              "temporal_downsample_factors",
              "norm_num_groups",
              "norm_eps",
              "spatial_padding_mode",
              "decoder_num_layers",
              "decoder_num_attention_heads",
              "decoder_attention_head_dim",
              "decoder_num_register_tokens",
              "decoder_ffn_mult",
              "decoder_rope_theta",
              "decoder_rope_dim_ratio",
              "decoder_norm_eps",
              "clip_length",
              "token_drop",
              "latents_mean",
              "latents_std"},
             kVideoClass, origin);
  VideoVaeConfig c;
  auto field = [&](const char* key, auto& out) {
    read_config_field(json, key, out, origin, ConfigNull::is_default);
  };
  field("in_channels", c.in_channels);
  field("out_channels", c.out_channels);
  field("latent_channels", c.latent_channels);
  field("block_out_channels", c.block_out_channels);
  field("layers_per_block", c.layers_per_block);
  field("spatial_downsample_factors", c.spatial_downsample_factors);
  field("temporal_downsample_factors", c.temporal_downsample_factors);
  field("norm_num_groups", c.norm_num_groups);
  field("norm_eps", c.norm_eps);
  field("spatial_padding_mode", c.spatial_padding_mode);
  field("decoder_num_layers", c.decoder_num_layers);
  field("decoder_num_attention_heads", c.decoder_num_attention_heads);
  field("decoder_attention_head_dim", c.decoder_attention_head_dim);
  field("decoder_num_register_tokens", c.decoder_num_register_tokens);
  field("decoder_ffn_mult", c.decoder_ffn_mult);
  field("decoder_rope_theta", c.decoder_rope_theta);
  field("decoder_rope_dim_ratio", c.decoder_rope_dim_ratio);
  field("decoder_norm_eps", c.decoder_norm_eps);
  field("clip_length", c.clip_length);
  field("token_drop", c.token_drop);
  field("latents_mean", c.latents_mean);
  field("latents_std", c.latents_std);
  // diffusers' defaults: (0.0,) * 24 and (1.0,) * 24, i.e. no-op statistics.
  if (c.latents_mean.empty())
    c.latents_mean.assign(static_cast<std::size_t>(c.latent_channels), 0.0);
  if (c.latents_std.empty()) c.latents_std.assign(static_cast<std::size_t>(c.latent_channels), 1.0);
  c.validate(origin);
  return c;
}

AudioVaeConfig parse_audio_vae_config(const nlohmann::json& json, const std::string& origin) {
  check_keys(
      json,
      {"encoder_dim", "encoder_rates", "latent_dim", "latent_channels", "num_attention_heads",
       "decoder_dim", "decoder_rates", "decoder_kernel_sizes", "resblock_kernel_sizes",
       "resblock_dilation_sizes", "sampling_rate", "latents_mean", "latents_std"},
      kAudioClass, origin);
  AudioVaeConfig c;
  auto field = [&](const char* key, auto& out) {
    read_config_field(json, key, out, origin, ConfigNull::is_default);
  };
  field("encoder_dim", c.encoder_dim);
  field("encoder_rates", c.encoder_rates);
  field("latent_dim", c.latent_dim);
  field("latent_channels", c.latent_channels);
  field("num_attention_heads", c.num_attention_heads);
  field("decoder_dim", c.decoder_dim);
  field("decoder_rates", c.decoder_rates);
  field("decoder_kernel_sizes", c.decoder_kernel_sizes);
  field("resblock_kernel_sizes", c.resblock_kernel_sizes);
  field("resblock_dilation_sizes", c.resblock_dilation_sizes);
  field("sampling_rate", c.sampling_rate);
  field("latents_mean", c.latents_mean);
  field("latents_std", c.latents_std);
  c.validate(origin);
  return c;
}

VideoVaeConfig load_video_vae_config(const std::filesystem::path& config_json) {
  return parse_video_vae_config(read_json(config_json), config_json.string());
}

AudioVaeConfig load_audio_vae_config(const std::filesystem::path& config_json) {
  return parse_audio_vae_config(read_json(config_json), config_json.string());
}

nlohmann::json video_vae_config_to_json(const VideoVaeConfig& c) {
  return {{"_class_name", kVideoClass},
          {"in_channels", c.in_channels},
          {"out_channels", c.out_channels},
          {"latent_channels", c.latent_channels},
          {"block_out_channels", c.block_out_channels},
          {"layers_per_block", c.layers_per_block},
          {"spatial_downsample_factors", c.spatial_downsample_factors},
          {"temporal_downsample_factors", c.temporal_downsample_factors},
          {"norm_num_groups", c.norm_num_groups},
          {"norm_eps", c.norm_eps},
          {"spatial_padding_mode", c.spatial_padding_mode},
          {"decoder_num_layers", c.decoder_num_layers},
          {"decoder_num_attention_heads", c.decoder_num_attention_heads},
          {"decoder_attention_head_dim", c.decoder_attention_head_dim},
          {"decoder_num_register_tokens", c.decoder_num_register_tokens},
          {"decoder_ffn_mult", c.decoder_ffn_mult},
          {"decoder_rope_theta", c.decoder_rope_theta},
          {"decoder_rope_dim_ratio", c.decoder_rope_dim_ratio},
          {"decoder_norm_eps", c.decoder_norm_eps},
          {"clip_length", c.clip_length},
          {"token_drop", c.token_drop},
          {"latents_mean", c.latents_mean},
          {"latents_std", c.latents_std}};
}

nlohmann::json audio_vae_config_to_json(const AudioVaeConfig& c) {
  nlohmann::json j = {{"_class_name", kAudioClass},
                      {"encoder_dim", c.encoder_dim},
                      {"encoder_rates", c.encoder_rates},
                      {"latent_dim", c.latent_dim},
                      {"latent_channels", c.latent_channels},
                      {"num_attention_heads", c.num_attention_heads},
                      {"decoder_dim", c.decoder_dim},
                      {"decoder_rates", c.decoder_rates},
                      {"decoder_kernel_sizes", c.decoder_kernel_sizes},
                      {"resblock_kernel_sizes", c.resblock_kernel_sizes},
                      {"resblock_dilation_sizes", c.resblock_dilation_sizes},
                      {"sampling_rate", c.sampling_rate}};
  j["latents_mean"] =
      c.latents_mean.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.latents_mean);
  j["latents_std"] =
      c.latents_std.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.latents_std);
  return j;
}

std::filesystem::path resolve_vae_dir(const std::filesystem::path& model) {
  return resolve_component(model, "vae", kVideoClass);
}

std::filesystem::path resolve_audio_vae_dir(const std::filesystem::path& model) {
  return resolve_component(model, "audio_vae", kAudioClass);
}

}  // namespace h3p::model
