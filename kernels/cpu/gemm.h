#pragma once
// Dense linear layer y = x·wᵀ (+ bias) on the CPU, nn.Linear's contract: bf16 or fp32 operands,
// fp32 accumulation, one rounding to the output type. Blocked and multithreaded over output
// tiles; every output element is summed by one thread in ascending k, so results are the same
// bytes at any thread count.
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// y[m, n] = sum_k x[m, k] * w[n, k] (+ bias[n]); x (m, k), w (n, k), y (m, n) row-major and
// contiguous; bias (n) or null. fp32 accumulation in a fixed order, rounded once to bf16.
// m, n, k >= 0 (k == 0 gives bias or zeros). y must not alias x, w or bias.
void gemm_bf16(const Bf16* x, const Bf16* w, const Bf16* bias, Bf16* y,
               std::int64_t m, std::int64_t n, std::int64_t k);

// The fp32 form of gemm_bf16: same layout, order and thread-count independence.
void gemm_f32(const float* x, const float* w, const float* bias, float* y,
              std::int64_t m, std::int64_t n, std::int64_t k);

}  // namespace h3p::kernels::cpu
