#include "core/model/config.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/model/config_field.h"

namespace h3p::model {

void TransformerConfig::validate(const std::string& origin) const {
  auto positive = [&](int64_t v, const char* key) {
    if (v <= 0) throw_input(origin, std::string("field '") + key + "': must be positive");
  };
  positive(num_attention_heads, "num_attention_heads");
  positive(attention_head_dim, "attention_head_dim");
  positive(hidden_size, "hidden_size");
  if (num_layers < 0) throw_input(origin, "field 'num_layers': must be >= 0");
  if (num_refiner_layers < 0) throw_input(origin, "field 'num_refiner_layers': must be >= 0");
  positive(ffn_dim, "ffn_dim");
  positive(in_channels, "in_channels");
  positive(audio_in_channels, "audio_in_channels");
  positive(text_dim, "text_dim");
  positive(freq_dim, "freq_dim");
  positive(time_embed_hidden_dim, "time_embed_hidden_dim");
  positive(time_embed_dim, "time_embed_dim");
  positive(rope_freq_dim, "rope_freq_dim");
  for (int64_t p : patch_size) positive(p, "patch_size");
  if (rotary_dim() > attention_head_dim) {
    throw_input(origin, "field 'rope_freq_dim': 6*rope_freq_dim exceeds attention_head_dim");
  }
  if (!(rope_theta > 0)) throw_input(origin, "field 'rope_theta': must be positive");
  if (!(norm_eps > 0 && qk_norm_eps > 0 && final_norm_eps > 0)) {
    throw_input(origin, "norm epsilons must be positive");
  }
}

std::string TransformerConfig::describe() const {
  std::ostringstream out;
  out << transformer_config_to_json(*this).dump(2);
  return out.str();
}

TransformerConfig parse_transformer_config(const nlohmann::json& json, const std::string& origin) {
  if (!json.is_object()) throw_input(origin, "config is not a JSON object");
  static const char* kKnown[] = {
      "num_attention_heads", "attention_head_dim", "hidden_size", "num_layers",
      "num_refiner_layers", "ffn_dim", "in_channels", "audio_in_channels", "patch_size",
      "text_dim", "freq_dim", "time_embed_hidden_dim", "time_embed_dim", "rope_freq_dim",
      "rope_theta", "norm_eps", "qk_norm_eps", "final_norm_eps"};
  for (const auto& [key, value] : json.items()) {
    if (!key.empty() && key[0] == '_') continue;
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    if (!known) throw_input(origin, "unknown field '" + key + "'");
  }
  auto cls = json.find("_class_name");
  if (cls != json.end() && *cls != "MiniMaxH3Transformer3DModel") {
    throw_input(origin, "field '_class_name': expected MiniMaxH3Transformer3DModel");
  }
  TransformerConfig c;
  read_config_field(json, "num_attention_heads", c.num_attention_heads, origin);
  read_config_field(json, "attention_head_dim", c.attention_head_dim, origin);
  read_config_field(json, "hidden_size", c.hidden_size, origin);
  read_config_field(json, "num_layers", c.num_layers, origin);
  read_config_field(json, "num_refiner_layers", c.num_refiner_layers, origin);
  read_config_field(json, "ffn_dim", c.ffn_dim, origin);
  read_config_field(json, "in_channels", c.in_channels, origin);
  read_config_field(json, "audio_in_channels", c.audio_in_channels, origin);
  read_config_field(json, "patch_size", c.patch_size, origin);
  read_config_field(json, "text_dim", c.text_dim, origin);
  read_config_field(json, "freq_dim", c.freq_dim, origin);
  read_config_field(json, "time_embed_hidden_dim", c.time_embed_hidden_dim, origin);
  read_config_field(json, "time_embed_dim", c.time_embed_dim, origin);
  read_config_field(json, "rope_freq_dim", c.rope_freq_dim, origin);
  read_config_field(json, "rope_theta", c.rope_theta, origin);
  read_config_field(json, "norm_eps", c.norm_eps, origin);
  read_config_field(json, "qk_norm_eps", c.qk_norm_eps, origin);
  read_config_field(json, "final_norm_eps", c.final_norm_eps, origin);
  c.validate(origin);
  return c;
}

TransformerConfig load_transformer_config(const std::filesystem::path& config_json) {
  const std::string origin = config_json.string();
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(io::read_file(config_json));
  } catch (const nlohmann::json::exception& e) {
    throw_input(origin, std::string("not valid JSON: ") + e.what());
  }
  return parse_transformer_config(json, origin);
}

nlohmann::json transformer_config_to_json(const TransformerConfig& c) {
  return {{"_class_name", "MiniMaxH3Transformer3DModel"},
          {"num_attention_heads", c.num_attention_heads},
          {"attention_head_dim", c.attention_head_dim},
          {"hidden_size", c.hidden_size},
          {"num_layers", c.num_layers},
          {"num_refiner_layers", c.num_refiner_layers},
          {"ffn_dim", c.ffn_dim},
          {"in_channels", c.in_channels},
          {"audio_in_channels", c.audio_in_channels},
          {"patch_size", c.patch_size},
          {"text_dim", c.text_dim},
          {"freq_dim", c.freq_dim},
          {"time_embed_hidden_dim", c.time_embed_hidden_dim},
          {"time_embed_dim", c.time_embed_dim},
          {"rope_freq_dim", c.rope_freq_dim},
          {"rope_theta", c.rope_theta},
          {"norm_eps", c.norm_eps},
          {"qk_norm_eps", c.qk_norm_eps},
          {"final_norm_eps", c.final_norm_eps}};
}

std::filesystem::path resolve_transformer_dir(const std::filesystem::path& model) {
  namespace fs = std::filesystem;
  if (fs::exists(model / "transformer" / "config.json")) return model / "transformer";
  if (fs::exists(model / "config.json")) return model;
  throw_input(model.string(),
              "not a model directory: neither transformer/config.json nor config.json exists");
}

}  // namespace h3p::model
