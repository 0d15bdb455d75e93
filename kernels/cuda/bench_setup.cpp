#include "kernels/cuda/bench_setup.h"

#include <ATen/ATen.h>

#include <cmath>

namespace h3p::kernels::cuda {

BlockFixture BlockFixture::make(const BlockFixtureShape& s, at::Device device, uint64_t seed) {
  BlockFixture f;
  model::TransformerConfig& c = f.config;
  c.num_attention_heads = s.heads;
  c.attention_head_dim = 128;
  c.hidden_size = s.hidden;
  c.num_layers = 1;
  c.ffn_dim = s.ffn;
  c.time_embed_dim = s.temb_dim;
  c.rope_freq_dim = s.rope_freq_dim;

  // Drawn on the device itself (a full-size block has ~0.7 G weights): reproducible per
  // device kind and seed.
  at::manual_seed(seed);
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  auto normal = [&](std::vector<int64_t> shape, double std) {
    return at::mul(at::randn(shape, f32), std);
  };
  auto weight = [&](int64_t out, int64_t in) {
    return normal({out, in}, 1.0 / std::sqrt(static_cast<double>(in)))
        .to(device, at::kBFloat16);
  };
  auto gain = [&](int64_t n) { return at::add(normal({n}, 0.1), 1.0).to(device, at::kBFloat16); };
  const int64_t inner = s.heads * 128;
  model::BlockWeights& w = f.weights;
  w.attn.to_q = weight(inner, s.hidden);
  w.attn.to_k = weight(inner, s.hidden);
  w.attn.to_v = weight(inner, s.hidden);
  w.attn.to_out = weight(s.hidden, inner);
  w.attn.norm_q = gain(128);
  w.attn.norm_k = gain(128);
  w.ff.proj = weight(2 * s.ffn, s.hidden);
  w.ff.out = weight(s.hidden, s.ffn);
  w.norm1 = gain(s.hidden);
  w.norm2 = gain(s.hidden);
  // AdaLN: modest shifts and scales, gates around 1 so both branches matter.
  w.adaln_weight = normal({18 * s.hidden, s.temb_dim}, 0.02 / std::sqrt(s.temb_dim * 1.0))
                       .to(device, at::kBFloat16);
  at::Tensor bias = normal({3, 6, s.hidden}, 0.1);
  bias.select(1, 2).add_(1.0);
  bias.select(1, 5).add_(1.0);
  w.adaln_bias = bias.reshape({18 * s.hidden}).to(device, at::kBFloat16);

  f.x = normal({s.rows, s.hidden}, 1.0).to(device, at::kBFloat16);
  model::CallContext& ctx = f.context;
  ctx.x = f.x;
  ctx.temb = normal({1, s.temb_dim}, 1.0).to(device);
  // Rows: video first, then audio (modality 2), then text (modality 1); one timestep.
  at::Tensor tags = at::zeros({s.rows}, at::TensorOptions().dtype(at::kLong).device(device));
  tags.narrow(0, s.rows - s.text_rows - s.audio_rows, s.audio_rows).fill_(2);
  tags.narrow(0, s.rows - s.text_rows, s.text_rows).fill_(1);
  ctx.adaln_rows = tags;
  ctx.timestep_indices = at::zeros({s.rows}, at::TensorOptions().dtype(at::kLong)).to(device);
  // RoPE angles: channel pairs (c, c + R/2) share an angle, as the model's tables do.
  const int64_t half = 3 * s.rope_freq_dim;
  at::Tensor angles = at::mul(at::rand({s.rows, half}, f32), 2.0 * M_PI * 64.0);
  angles = at::cat({angles, angles}, 1);
  ctx.cos = at::cos(angles).to(device);
  ctx.sin = at::sin(angles).to(device);
  return f;
}

double BlockFixture::attention_flops() const {
  const double s = static_cast<double>(x.size(0));
  return 4.0 * s * s * static_cast<double>(config.inner_dim());
}

double BlockFixture::block_flops() const {
  const double s = static_cast<double>(x.size(0)), c = static_cast<double>(config.hidden_size);
  const double inner = static_cast<double>(config.inner_dim()), f = static_cast<double>(config.ffn_dim);
  return 2.0 * s * c * 3.0 * inner + 2.0 * s * inner * c + 2.0 * s * c * 2.0 * f +
         2.0 * s * f * c + attention_flops();
}

double rel_l2(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor bd = b.to(at::kDouble);
  const double den = bd.norm().item<double>();
  const double num = at::sub(a.to(at::kDouble), bd).norm().item<double>();
  return den > 0.0 ? num / den : num;
}

}  // namespace h3p::kernels::cuda
