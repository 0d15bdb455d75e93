#include "core/model/vae_weights.h"

#include <ATen/ATen.h>

#include <cmath>
#include <set>

#include "core/common/error.h"
#include "core/io/aten_bridge.h"
#include "core/io/tensor_store.h"
#include "core/model/seeded_weights.h"

namespace h3p::model {
namespace {

constexpr const char* kWeightsStem = "diffusion_pytorch_model";
constexpr int64_t kActivationKernel = 12;  // anti-aliased activations: 2x up/down, 12 taps

using Shape = std::vector<int64_t>;

// Appends tensors to a table under a common prefix.
class Table {
 public:
  Table(std::vector<VaeParamSpec>& out, bool decoder) : out_(out), decoder_(decoder) {}

  void add(const std::string& name, Shape shape, VaeParamKind kind, int64_t fan_in = 1) {
    out_.push_back({name, std::move(shape), kind, fan_in, decoder_});
  }
  // nn.Linear / nn.ConvNd: weight (out, in, *kernel) and an optional bias.
  void dense(const std::string& p, Shape shape, bool bias = true) {
    int64_t fan_in = 1;
    for (std::size_t i = 1; i < shape.size(); ++i) fan_in *= shape[i];
    const int64_t out = shape[0];
    add(p + "weight", std::move(shape), VaeParamKind::weight, fan_in);
    if (bias) add(p + "bias", {out}, VaeParamKind::bias, fan_in);
  }
  // A weight-normed Conv1d (dim 0): weight_g (d0, 1, 1), weight_v, bias of `bias_size`.
  void weight_normed(const std::string& p, Shape v_shape, int64_t bias_size) {
    const int64_t fan_in = v_shape[1] * v_shape[2];
    add(p + "weight_g", {v_shape[0], 1, 1}, VaeParamKind::weight_g, fan_in);
    add(p + "weight_v", std::move(v_shape), VaeParamKind::weight_v, fan_in);
    if (bias_size > 0) add(p + "bias", {bias_size}, VaeParamKind::bias, fan_in);
  }
  void norm(const std::string& p, int64_t c, bool bias = true) {
    add(p + "weight", {c}, VaeParamKind::norm_weight, c);
    if (bias) add(p + "bias", {c}, VaeParamKind::bias, c);
  }
  // An anti-aliased SnakeBeta activation of `c` channels.
  void activation(const std::string& p, int64_t c) {
    add(p + "act.alpha", {c}, VaeParamKind::snake_log);
    add(p + "act.beta", {c}, VaeParamKind::snake_log);
    add(p + "upsample.filter", {1, 1, kActivationKernel}, VaeParamKind::lowpass_filter);
    add(p + "downsample.lowpass.filter", {1, 1, kActivationKernel}, VaeParamKind::lowpass_filter);
  }

 private:
  std::vector<VaeParamSpec>& out_;
  bool decoder_;
};

std::string idx(const std::string& prefix, std::size_t i) {
  return prefix + std::to_string(i) + ".";
}

void video_encoder(std::vector<VaeParamSpec>& out, const VideoVaeConfig& c) {
  Table t(out, false);
  const auto& ch = c.block_out_channels;
  t.dense("encoder.conv_in.", {ch[0], c.in_channels, 3, 3, 3});
  for (std::size_t i = 0; i < ch.size(); ++i) {
    const std::string p = idx("encoder.down_blocks.", i);
    const int64_t block_in = i == 0 ? ch[0] : ch[i - 1];
    for (int64_t j = 0; j < c.layers_per_block; ++j) {
      const std::string r = idx(p + "resnets.", static_cast<std::size_t>(j));
      const int64_t in = j == 0 ? block_in : ch[i];
      t.norm(r + "norm1.", in);
      t.dense(r + "conv1.", {ch[i], in, 3, 3, 3});
      t.norm(r + "norm2.", ch[i]);
      t.dense(r + "conv2.", {ch[i], ch[i], 3, 3, 3});
      if (in != ch[i]) t.dense(r + "conv_shortcut.", {ch[i], in, 1, 1, 1});
    }
    if (c.spatial_downsample_factors[i] * c.temporal_downsample_factors[i] > 1) {
      t.dense(p + "downsamplers.0.conv.", {ch[i], ch[i], 3, 3, 3});
    }
  }
  t.norm("encoder.norm_out.", ch.back());
  t.dense("encoder.conv_out.", {2 * c.latent_channels, ch.back(), 3, 3, 3});
  t.dense("quant_conv.", {2 * c.latent_channels, 2 * c.latent_channels, 1, 1, 1});
}

void audio_encoder(std::vector<VaeParamSpec>& out, const AudioVaeConfig& c) {
  Table t(out, false);
  int64_t d = c.encoder_dim;
  t.weight_normed("encoder.block.0.", {d, 1, 7}, d);
  std::size_t b = 1;
  for (int64_t stride : c.encoder_rates) {
    d *= 2;
    const int64_t half = d / 2;
    const std::string p = idx("encoder.block.", b++) + "block.";
    for (std::size_t u = 0; u < 3; ++u) {  // residual units at dilations 1, 3, 9
      const std::string r = idx(p, u) + "block.";
      t.add(r + "0.alpha", {1, half, 1}, VaeParamKind::snake_alpha);
      t.weight_normed(r + "1.", {half, half, 7}, half);
      t.add(r + "2.alpha", {1, half, 1}, VaeParamKind::snake_alpha);
      t.weight_normed(r + "3.", {half, half, 1}, half);
    }
    t.add(p + "3.alpha", {1, half, 1}, VaeParamKind::snake_alpha);
    t.weight_normed(p + "4.", {d, half, 2 * stride}, d);
  }
  t.add(idx("encoder.block.", b++) + "alpha", {1, d, 1}, VaeParamKind::snake_alpha);
  t.weight_normed(idx("encoder.block.", b), {c.latent_dim, d, 3}, c.latent_dim);

  const int64_t in = c.latent_dim, lat = c.latent_channels;
  t.norm("pre_block.norm1.", in);
  t.dense("pre_block.attn.qkv.", {3 * in, in}, /*bias=*/false);
  t.add("pre_block.attn.q_bias", {in}, VaeParamKind::bias, in);
  t.add("pre_block.attn.v_bias", {in}, VaeParamKind::bias, in);
  t.add("pre_block.attn.zero_k_bias", {in}, VaeParamKind::zero);
  t.dense("pre_block.attn.proj.", {lat, lat});
  t.dense("pre_block.proj.", {lat, in});
  t.norm("pre_block.norm3.", in);
  t.norm("pre_block.norm2.", lat);
  t.norm("pre_block.mlp.norm.", lat);
  t.dense("pre_block.mlp.w0.", {2 * lat, lat});
  t.dense("pre_block.mlp.w1.", {2 * lat, lat});
  t.dense("pre_block.mlp.w2.", {lat, 2 * lat});
  t.dense("mean_proj.", {lat, lat, 1});
  t.dense("logs_proj.", {lat, lat, 1});
}

std::set<std::string> decoder_names(const std::vector<VaeParamSpec>& specs) {
  std::set<std::string> names;
  for (const auto& s : specs) {
    if (s.decoder) names.insert(s.name);
  }
  return names;
}

}  // namespace

std::vector<VaeParamSpec> video_vae_parameter_specs(const VideoVaeConfig& c) {
  std::vector<VaeParamSpec> out;
  video_encoder(out, c);
  Table t(out, true);
  const int64_t L = c.latent_channels, D = c.decoder_dim();
  const int64_t ffn = D * c.decoder_ffn_mult;
  t.dense("post_quant_conv.", {L, L, 1, 1, 1});
  t.dense("decoder.proj_in.", {D, L});
  t.add("decoder.register_tokens", {1, c.decoder_num_register_tokens, D},
        VaeParamKind::register_tokens);
  for (int64_t k = 0; k < c.decoder_num_layers; ++k) {
    const std::string p = idx("decoder.transformer_blocks.", static_cast<std::size_t>(k));
    t.norm(p + "norm1.", D, /*bias=*/false);
    t.dense(p + "attn.to_q.", {D, D});
    t.dense(p + "attn.to_k.", {D, D});
    t.dense(p + "attn.to_v.", {D, D});
    t.dense(p + "attn.to_out.0.", {D, D});
    t.add(p + "scale1", {D}, VaeParamKind::layer_scale);
    t.norm(p + "norm2.", D, /*bias=*/false);
    t.dense(p + "ff.net.0.proj.", {2 * ffn, D});
    t.dense(p + "ff.net.2.", {D, ffn});
    t.add(p + "scale2", {D}, VaeParamKind::layer_scale);
  }
  t.norm("decoder.norm_out.", D);
  const int64_t pt = c.temporal_ratio(), ps = c.spatial_ratio();
  t.dense("decoder.proj_out.", {c.out_channels * pt * ps * ps, D});
  return out;
}

std::vector<VaeParamSpec> audio_vae_parameter_specs(const AudioVaeConfig& c) {
  std::vector<VaeParamSpec> out;
  audio_encoder(out, c);
  Table t(out, true);
  t.dense("dec_in_proj.", {c.latent_dim, c.latent_channels, 1});
  t.weight_normed("decoder.conv_pre.", {c.decoder_dim, c.latent_dim, 7}, c.decoder_dim);
  for (std::size_t i = 0; i < c.decoder_rates.size(); ++i) {
    // ConvTranspose1d weight: (in, out, kernel); weight norm over dim 0 = per input channel.
    const int64_t cin = i == 0 ? c.decoder_dim : c.stage_channels(i - 1);
    t.weight_normed(idx("decoder.ups.", i) + "0.",
                    {cin, c.stage_channels(i), c.decoder_kernel_sizes[i]}, c.stage_channels(i));
  }
  const std::size_t kernels = c.resblock_kernel_sizes.size();
  for (std::size_t i = 0; i < c.decoder_rates.size(); ++i) {
    const int64_t ch = c.stage_channels(i);
    for (std::size_t j = 0; j < kernels; ++j) {
      const std::string p = idx("decoder.resblocks.", i * kernels + j);
      const int64_t k = c.resblock_kernel_sizes[j];
      const std::size_t n = c.resblock_dilation_sizes[j].size();
      for (std::size_t m = 0; m < n; ++m) t.weight_normed(idx(p + "convs1.", m), {ch, ch, k}, ch);
      for (std::size_t m = 0; m < n; ++m) t.weight_normed(idx(p + "convs2.", m), {ch, ch, k}, ch);
      for (std::size_t a = 0; a < 2 * n; ++a) t.activation(idx(p + "activations.", a), ch);
    }
  }
  const int64_t last = c.stage_channels(c.decoder_rates.size() - 1);
  t.activation("decoder.activation_post.", last);
  t.weight_normed("decoder.conv_post.", {1, last, 7}, 0);
  return out;
}

at::Tensor vae_param_value(const VaeParamSpec& spec,
                           const std::function<at::Tensor()>& unit_normal) {
  constexpr double kAudioOutputGain = 0.07;
  switch (spec.kind) {
    case VaeParamKind::weight:
      return at::mul(unit_normal(), 1.0 / std::sqrt(static_cast<double>(spec.fan_in)));
    case VaeParamKind::bias:
      return at::mul(unit_normal(), 0.02);
    case VaeParamKind::norm_weight:
    case VaeParamKind::snake_alpha:
      return at::add(at::mul(unit_normal(), 0.05), 1.0);
    case VaeParamKind::weight_g: {
      const at::Tensor g = at::add(at::mul(unit_normal(), 0.05), 1.0);
      return spec.name == "decoder.conv_post.weight_g" ? at::mul(g, kAudioOutputGain) : g;
    }
    case VaeParamKind::layer_scale:
      return at::add(at::mul(unit_normal(), 0.05), 0.5);
    case VaeParamKind::register_tokens:
    case VaeParamKind::weight_v:
      return unit_normal();
    case VaeParamKind::snake_log:
      return at::mul(unit_normal(), 0.1);
    case VaeParamKind::zero:
      return at::zeros(spec.shape, at::TensorOptions().dtype(at::kFloat));
    case VaeParamKind::lowpass_filter:
      // Resampling by 2: cutoff 0.5/2, transition half-width 0.6/2 (cycles per sample).
      return kaiser_sinc_filter(0.25, 0.3, spec.shape.back());
  }
  throw InputError("no initialisation rule for tensor '" + spec.name + "'");
}

std::map<std::string, at::Tensor> load_decoder_tensors(const std::filesystem::path& dir,
                                                       const std::vector<VaeParamSpec>& specs,
                                                       const at::Device& device) {
  const std::string origin = dir.string();
  if (const auto record = io::read_seed_record(dir)) {
    std::map<std::string, at::Tensor> drawn;
    for (const VaeParamSpec& spec : specs) {
      if (!spec.decoder) continue;
      const at::Tensor value = vae_param_value(
          spec, [&] { return seeded_unit_normal(spec.shape, record->seed, spec.name, device); });
      drawn.emplace(spec.name, value.to(device));
    }
    return drawn;
  }
  std::map<std::string, const VaeParamSpec*> by_name;
  for (const auto& s : specs) by_name.emplace(s.name, &s);
  io::TensorStore store = io::TensorStore::open(dir, kWeightsStem);
  std::map<std::string, at::Tensor> out;
  for (const std::string& name : store.names()) {
    auto it = by_name.find(name);
    if (it == by_name.end())
      throw_input(origin, "unexpected tensor '" + name + "' for this config");
    if (!it->second->decoder) continue;  // encoder side: not needed to decode
    io::StoredTensor st = store.at(name);
    if (st.info->shape != it->second->shape) {
      throw_input(origin, "tensor '" + name + "' has shape " +
                              c10::str(at::IntArrayRef(st.info->shape)) + ", the config implies " +
                              c10::str(at::IntArrayRef(it->second->shape)));
    }
    at::Tensor t = io::load_tensor(*st.file, *st.info);
    if (!at::isFloatingType(t.scalar_type())) {
      throw_input(origin, "tensor '" + name + "' is not floating point");
    }
    out.emplace(name, t.to(at::kFloat).to(device));
  }
  for (const std::string& name : decoder_names(specs)) {
    if (out.find(name) == out.end()) throw_input(origin, "missing decoder tensor '" + name + "'");
  }
  return out;
}

at::Tensor kaiser_sinc_filter(double cutoff, double half_width, int64_t kernel_size) {
  const int64_t half = kernel_size / 2;
  const double attenuation = 2.285 * static_cast<double>(half - 1) * M_PI * (4 * half_width) + 7.95;
  double beta = 0.0;
  if (attenuation > 50.0) {
    beta = 0.1102 * (attenuation - 8.7);
  } else if (attenuation >= 21.0) {
    beta = 0.5842 * std::pow(attenuation - 21, 0.4) + 0.07886 * (attenuation - 21.0);
  }
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  at::Tensor window = at::kaiser_window(kernel_size, /*periodic=*/false, beta, f32);
  at::Tensor time =
      kernel_size % 2 == 0
          ? at::add(at::arange(-half, half, at::TensorOptions().dtype(at::kLong)), 0.5)
          : at::sub(at::arange(kernel_size, at::TensorOptions().dtype(at::kLong)), half)
                .to(at::kFloat);
  at::Tensor filter = at::mul(at::mul(window, 2 * cutoff), at::sinc(at::mul(time, 2 * cutoff)));
  filter = at::div(filter, filter.sum());
  return filter.view({1, 1, kernel_size});
}

}  // namespace h3p::model
