#pragma once
// Per-head RMSNorm of the attention queries and keys.
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// y[s, h, :] = x[s, h, :]/rms(x[s, h, :])·w for x, y (rows, heads, d) row-major contiguous and
// w (d); statistics in fp64 from the exact squares, the rest in fp32, one rounding per element;
// multithreaded over (row, head) pairs.
void qk_norm_bf16(const Bf16* x, const Bf16* w, Bf16* y, std::int64_t rows, std::int64_t heads,
                  std::int64_t d, double eps);
void qk_norm_f32(const float* x, const float* w, float* y, std::int64_t rows,
                 std::int64_t heads, std::int64_t d, double eps);

}  // namespace h3p::kernels::cpu
