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

std::vector<std::string> decoder_preset_names() { return {"tiny", "released"}; }

DecoderPreset find_decoder_preset(const std::string& name) {
  DecoderPreset p;
  p.name = name;
  if (name == "tiny") {
    VideoVaeConfig& v = p.vae;
    v.block_out_channels = {4, 4, 8, 8};
    v.layers_per_block = 1;
    v.spatial_downsample_factors = {2, 2, 2, 2};
    v.temporal_downsample_factors = {1, 2, 2, 1};
    v.norm_num_groups = 4;
    v.decoder_num_layers = 2;
    v.decoder_num_attention_heads = 2;
    v.decoder_attention_head_dim = 16;
    AudioVaeConfig& a = p.audio_vae;
    a.encoder_dim = 1;
    a.latent_dim = 64;
    a.num_attention_heads = 2;
    a.decoder_dim = 32;
    a.decoder_rates = {5, 5, 4, 4, 2};
    a.decoder_kernel_sizes = {11, 11, 8, 8, 4};
    p.description = "real latent geometry; 2-block 32-wide ViT video decoder, 5-stage "
                    "32-channel BigVGAN audio decoder: tests and the demo";
  } else if (name == "released") {
    p.description = "the released checkpoints' configs";
  } else {
    throw InputError("unknown decoder preset '" + name + "' (tiny, released)");
  }
  p.vae.latents_mean.assign(static_cast<std::size_t>(p.vae.latent_channels), 0.0);
  p.vae.latents_std.assign(static_cast<std::size_t>(p.vae.latent_channels), 1.0);
  p.audio_vae.latents_mean.assign(static_cast<std::size_t>(p.audio_vae.latent_channels), 0.0);
  p.audio_vae.latents_std.assign(static_cast<std::size_t>(p.audio_vae.latent_channels), 1.0);
  p.vae.validate("decoder preset " + name);
  p.audio_vae.validate("decoder preset " + name);
  return p;
}

}  // namespace h3p::model
