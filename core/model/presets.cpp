#include "core/model/presets.h"

#include "core/common/error.h"

namespace h3p::model {

std::vector<std::string> preset_names() { return {"tiny", "small", "full-shape"}; }

ModelPreset find_preset(const std::string& name, int64_t layers) {
  ModelPreset p;
  p.name = name;
  TransformerConfig& c = p.config;
  if (name == "tiny") {
    c.num_attention_heads = 2;
    c.attention_head_dim = 32;
    c.hidden_size = 48;
    c.num_layers = 2;
    c.num_refiner_layers = 2;
    c.ffn_dim = 128;
    c.text_dim = 48;
    c.freq_dim = 16;
    c.time_embed_hidden_dim = 64;
    c.time_embed_dim = 32;
    c.rope_freq_dim = 4;
    p.seed = 20260;
    p.description = "real latent widths, 2 x 32 heads, hidden 48, 2 layers: tests and the demo";
  } else if (name == "small") {
    c.num_attention_heads = 4;
    c.attention_head_dim = 64;
    c.hidden_size = 256;
    c.num_layers = 4;
    c.num_refiner_layers = 2;
    c.ffn_dim = 704;
    c.text_dim = 256;
    c.freq_dim = 64;
    c.time_embed_hidden_dim = 256;
    c.time_embed_dim = 128;
    c.rope_freq_dim = 8;
    p.seed = 20261;
    p.description = "4 x 64 heads, hidden 256, 4 layers: the CPU benchmark size";
  } else if (name == "full-shape") {
    c.num_layers = 1;
    p.seed = 20262;
    p.description = "released widths (hidden 5376, 56 x 128 heads, ffn 14336), fewer layers";
  } else {
    throw InputError("unknown model preset '" + name + "' (tiny, small, full-shape)");
  }
  if (layers >= 0) c.num_layers = layers;
  c.validate("preset " + name);
  return p;
}

}  // namespace h3p::model
