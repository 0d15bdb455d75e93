#pragma once
// Scaled dot-product attention on the CPU without a mask: out = softmax(q·kᵀ·scale)·v per head.
// Tiled over keys with an online (running max and sum) softmax in fp32; each output row is
// produced by one thread in a fixed order, so results are the same bytes at any thread count.
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// q, k, v, out: (s, h, d) row-major and contiguous (token, head, channel); scale multiplies
// q·kᵀ (1/sqrt(d) for SDPA). fp32 accumulation, out rounded once to bf16. s, h, d >= 0.
// out must not alias q, k or v.
void attention_bf16(const Bf16* q, const Bf16* k, const Bf16* v, Bf16* out,
                    std::int64_t s, std::int64_t h, std::int64_t d, float scale);

// The fp32 form of attention_bf16: same layout, order and thread-count independence.
void attention_f32(const float* q, const float* k, const float* v, float* out,
                   std::int64_t s, std::int64_t h, std::int64_t d, float scale);

}  // namespace h3p::kernels::cpu
