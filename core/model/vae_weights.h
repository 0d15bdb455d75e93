#pragma once
// The video and audio VAEs' parameters: their diffusers names and shapes (one table per class,
// shared by the loader and init-model), and loading a component's decoder tensors.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model/vae_config.h"

namespace h3p::model {

// How init-model fills a VAE tensor (all are stored in fp32, as the released VAEs are).
enum class VaeParamKind {
  weight,           // N(0, 1/fan_in)
  bias,             // small N(0, 0.02²)
  norm_weight,      // 1 + small noise
  layer_scale,      // the ViT's residual scales scale1/scale2
  register_tokens,  // N(0, 1)
  weight_g,         // weight-norm magnitude per output slice
  weight_v,         // weight-norm direction, N(0, 1)
  snake_alpha,      // encoder Snake frequency (linear space)
  snake_log,        // decoder SnakeBeta alpha / beta (log space)
  zero,             // the audio attention's frozen zero key bias
  lowpass_filter,   // Kaiser-sinc filter buffer of an anti-aliased activation (1, 1, 12)
};

// One stored tensor of a VAE checkpoint.
struct VaeParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  VaeParamKind kind;
  int64_t fan_in;  // input width, for weight initialisation
  bool decoder;    // read by the decoder (false: encoder side, never loaded here)
};

// Every tensor of AutoencoderKLMiniMaxH3 / AutoencoderKLMiniMaxH3Audio for `config`, encoder
// included, in a fixed order (diffusers' module order).
std::vector<VaeParamSpec> video_vae_parameter_specs(const VideoVaeConfig& config);
std::vector<VaeParamSpec> audio_vae_parameter_specs(const AudioVaeConfig& config);

// A tensor's value by its kind, drawing unit-variance values of its shape from `unit_normal`
// only for the kinds that need them (the zero key bias and the filters are computed): the rule
// of init-model (a CPU generator) and of seeded weights (seeded_unit_normal). The audio
// decoder's output magnitude (conv_post.weight_g) is scaled to 0.07 so the final clamp rarely
// bites.
at::Tensor vae_param_value(const VaeParamSpec& spec,
                           const std::function<at::Tensor()>& unit_normal);

// The decoder tensors of one component directory (config.json + single or sharded
// `diffusion_pytorch_model` safetensors), fp32, on `device`. Every decoder tensor of `specs`
// must be present with its shape and a floating dtype; encoder tensors are skipped unread;
// any other name is refused. A directory with a seed record (seeded_weights.h) instead draws
// the decoder tensors on `device`. Throws InputError naming the directory and the tensor.
std::map<std::string, at::Tensor> load_decoder_tensors(const std::filesystem::path& dir,
                                                       const std::vector<VaeParamSpec>& specs,
                                                       const at::Device& device);

// The Kaiser-windowed sinc low-pass filter (1, 1, kernel_size) fp32 the anti-aliased
// activations store, normalised to sum 1 (cutoff and half_width in cycles per sample).
at::Tensor kaiser_sinc_filter(double cutoff, double half_width, int64_t kernel_size);

}  // namespace h3p::model
