#pragma once
// BigVGAN's anti-aliased SnakeBeta activation: upsample 2x (replicate pad, transposed
// depthwise 12-tap filter, gain 2, crop), x + 1/(β+1e-9)·sin²(αx), downsample 2x (replicate
// pad, strided depthwise 12-tap filter). Two implementations of one contract: the reference
// composes PyTorch's operators exactly as diffusers calls them (any device); the fused one
// runs all three steps per row segment in one pass on the CPU (fp32), summing in another
// order, so it agrees to rounding (tested against the reference on awkward lengths).
#include <ATen/core/Tensor.h>

namespace h3p::model {

// Per-channel activation parameters, all on the input's device, fp32.
struct AntiAliasedSnake {
  at::Tensor alpha;        // exp(stored alpha), (1, C, 1)
  at::Tensor recip_beta;   // 1 / (exp(stored beta) + 1e-9), (1, C, 1)
  at::Tensor up_filter;    // (C, 1, 12), the upsampler's stored filter per channel
  at::Tensor down_filter;  // (C, 1, 12), the downsampler's
};

// x (B, C, L) → (B, C, L), PyTorch operators in diffusers' order.
at::Tensor anti_aliased_snake_reference(const at::Tensor& x, const AntiAliasedSnake& p);
// The same on a contiguous fp32 CPU tensor, fused; parallel over rows and segments.
at::Tensor anti_aliased_snake_fused(const at::Tensor& x, const AntiAliasedSnake& p);
// The fused form for fp32 CPU input, the reference otherwise.
at::Tensor anti_aliased_snake(const at::Tensor& x, const AntiAliasedSnake& p);

}  // namespace h3p::model
