#include "core/model/audio_vae.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <vector>

#include "core/common/error.h"
#include "core/model/anti_alias.h"
#include "core/model/tensor_map.h"
#include "core/model/vae_weights.h"

namespace h3p::model {

struct AudioVaeDecoder::Weights {
  struct Conv {
    at::Tensor w, b;  // b undefined when the convolution has no bias
  };
  struct AmpBlock {
    std::vector<int64_t> dilations;
    int64_t kernel = 0;
    std::vector<Conv> convs1, convs2;
    std::vector<AntiAliasedSnake> acts;  // 2 per dilation: before convs1[m], before convs2[m]
  };
  Conv dec_in, conv_pre;
  std::vector<Conv> ups;
  std::vector<AmpBlock> resblocks;
  AntiAliasedSnake act_post;
  Conv conv_post;
};

namespace {

// Removes `name` from `t`; InputError naming it when absent.
at::Tensor take_audio(std::map<std::string, at::Tensor>& t, const std::string& name) {
  return take_tensor(t, name, "audio VAE: missing decoder tensor");
}

// weight = g · v / ‖v‖ (norm over every dim but 0), as torch.nn.utils.weight_norm computes it.
AudioVaeDecoder::Weights::Conv weight_normed(std::map<std::string, at::Tensor>& t,
                                             const std::string& p, bool bias) {
  at::Tensor g = take_audio(t, p + "weight_g"), v = take_audio(t, p + "weight_v");
  return {at::_weight_norm(v, g, 0), bias ? take_audio(t, p + "bias") : at::Tensor()};
}

AntiAliasedSnake activation(std::map<std::string, at::Tensor>& t, const std::string& p,
                            int64_t channels) {
  AntiAliasedSnake a;
  a.alpha = at::exp(take_audio(t, p + "act.alpha").unsqueeze(0).unsqueeze(-1));
  at::Tensor beta = at::exp(take_audio(t, p + "act.beta").unsqueeze(0).unsqueeze(-1));
  a.recip_beta = at::reciprocal(at::add(beta, 1e-9));
  a.up_filter = take_audio(t, p + "upsample.filter").expand({channels, -1, -1}).contiguous();
  a.down_filter =
      take_audio(t, p + "downsample.lowpass.filter").expand({channels, -1, -1}).contiguous();
  return a;
}

at::Tensor conv1d(const at::Tensor& x, const AudioVaeDecoder::Weights::Conv& c, int64_t padding,
                  int64_t dilation = 1) {
  return at::conv1d(x, c.w, c.b, at::IntArrayRef{1}, at::IntArrayRef{padding},
                    at::IntArrayRef{dilation});
}

at::Tensor amp_block(const at::Tensor& x_in, const AudioVaeDecoder::Weights::AmpBlock& b) {
  at::Tensor x = x_in;
  for (std::size_t m = 0; m < b.dilations.size(); ++m) {
    const int64_t d = b.dilations[m];
    at::Tensor r =
        conv1d(anti_aliased_snake(x, b.acts[2 * m]), b.convs1[m], (b.kernel * d - d) / 2, d);
    r = conv1d(anti_aliased_snake(r, b.acts[2 * m + 1]), b.convs2[m], (b.kernel - 1) / 2);
    x = at::add(r, x);
  }
  return x;
}

}  // namespace

AudioVaeDecoder::AudioVaeDecoder(AudioVaeConfig config, std::map<std::string, at::Tensor> t)
    : config_(std::move(config)), device_(at::kCPU) {
  config_.validate("audio VAE config");
  for (const auto& spec : audio_vae_parameter_specs(config_)) {
    if (!spec.decoder) continue;
    auto it = t.find(spec.name);
    if (it == t.end()) throw InputError("audio VAE: missing decoder tensor '" + spec.name + "'");
    if (it->second.sizes().vec() != spec.shape) {
      throw InputError("audio VAE: tensor '" + spec.name + "' has shape " +
                       c10::str(it->second.sizes()) + ", the config implies " +
                       c10::str(at::IntArrayRef(spec.shape)));
    }
  }
  at::NoGradGuard no_grad;
  auto w = std::make_shared<Weights>();
  w->dec_in = {take_audio(t, "dec_in_proj.weight"), take_audio(t, "dec_in_proj.bias")};
  device_ = w->dec_in.w.device();
  w->conv_pre = weight_normed(t, "decoder.conv_pre.", true);
  const std::size_t stages = config_.decoder_rates.size();
  const std::size_t kernels = config_.resblock_kernel_sizes.size();
  for (std::size_t i = 0; i < stages; ++i) {
    w->ups.push_back(weight_normed(t, "decoder.ups." + std::to_string(i) + ".0.", true));
  }
  for (std::size_t i = 0; i < stages; ++i) {
    for (std::size_t j = 0; j < kernels; ++j) {
      const std::string p = "decoder.resblocks." + std::to_string(i * kernels + j) + ".";
      Weights::AmpBlock b;
      b.dilations = config_.resblock_dilation_sizes[j];
      b.kernel = config_.resblock_kernel_sizes[j];
      for (std::size_t m = 0; m < b.dilations.size(); ++m) {
        b.convs1.push_back(weight_normed(t, p + "convs1." + std::to_string(m) + ".", true));
        b.convs2.push_back(weight_normed(t, p + "convs2." + std::to_string(m) + ".", true));
      }
      for (std::size_t a = 0; a < 2 * b.dilations.size(); ++a) {
        b.acts.push_back(
            activation(t, p + "activations." + std::to_string(a) + ".", config_.stage_channels(i)));
      }
      w->resblocks.push_back(std::move(b));
    }
  }
  w->act_post = activation(t, "decoder.activation_post.", config_.stage_channels(stages - 1));
  w->conv_post = weight_normed(t, "decoder.conv_post.", false);
  w_ = std::move(w);
}

AudioVaeDecoder AudioVaeDecoder::load(const std::filesystem::path& dir, const at::Device& device) {
  AudioVaeConfig config = load_audio_vae_config(dir / "config.json");
  auto tensors = load_decoder_tensors(dir, audio_vae_parameter_specs(config), device);
  return AudioVaeDecoder(std::move(config), std::move(tensors));
}

at::Tensor AudioVaeDecoder::decode(const at::Tensor& z_in) const {
  const AudioVaeConfig& c = config_;
  if (z_in.dim() != 3 || z_in.size(1) != c.latent_channels || z_in.size(2) < 1) {
    throw InputError("audio latents: expected (B, " + std::to_string(c.latent_channels) +
                     ", N >= 1), got " + c10::str(z_in.sizes()));
  }
  at::NoGradGuard no_grad;
  const Weights& w = *w_;
  at::Tensor x = conv1d(z_in.to(device_, at::kFloat), w.dec_in, 0);
  x = conv1d(x, w.conv_pre, 3);
  const std::size_t kernels = c.resblock_kernel_sizes.size();
  for (std::size_t i = 0; i < c.decoder_rates.size(); ++i) {
    const int64_t rate = c.decoder_rates[i], k = c.decoder_kernel_sizes[i];
    x = at::conv_transpose1d(x, w.ups[i].w, w.ups[i].b, at::IntArrayRef{rate},
                             at::IntArrayRef{(k - rate) / 2});
    at::Tensor acc;
    for (std::size_t j = 0; j < kernels; ++j) {
      at::Tensor block = amp_block(x, w.resblocks[i * kernels + j]);
      acc = acc.defined() ? at::add(acc, block) : block;
    }
    x = at::div(acc, static_cast<int64_t>(kernels));
  }
  x = anti_aliased_snake(x, w.act_post);
  x = conv1d(x, w.conv_post, 3);
  return at::clamp(x, -1.0, 1.0);
}

}  // namespace h3p::model
