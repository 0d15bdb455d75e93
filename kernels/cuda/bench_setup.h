#pragma once
// Random-weight MiniMax-H3 block fixtures on the GPU, shared by the CUDA benchmark and the CUDA
// kernel tests: one block's weights at any width, a packed stream of video, audio and text
// rows, and the per-call context both the provider graph and the candidate block read.
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "core/model/config.h"
#include "core/model/transformer.h"
#include "core/model/weights.h"

namespace h3p::kernels::cuda {

struct BlockFixtureShape {
  int64_t rows = 38718;      // packed sequence length (1344×768×124 video + audio + text)
  int64_t heads = 56;        // × 128 channels
  int64_t hidden = 5376;
  int64_t ffn = 14336;
  int64_t temb_dim = 2688;
  int64_t rope_freq_dim = 16;  // rotary channels 6·16 = 96
  int64_t text_rows = 512, audio_rows = 1293;
};

// A one-block model, its input stream and call context; tensors bf16 (weights, x) or fp32
// (temb, cos, sin) on `device`, drawn from a generator seeded with `seed`.
struct BlockFixture {
  model::TransformerConfig config;
  model::BlockWeights weights;
  model::CallContext context;  // x, temb, adaln_rows, cos, sin filled
  at::Tensor x;

  static BlockFixture make(const BlockFixtureShape& shape, at::Device device, uint64_t seed);
  // FLOPs of one block forward (the six GEMMs and attention; the AdaLN GEMV is negligible).
  double block_flops() const;
  double attention_flops() const;
};

// ‖a − b‖ / ‖b‖ in fp64.
double rel_l2(const at::Tensor& a, const at::Tensor& b);

}  // namespace h3p::kernels::cuda
