#pragma once
// Partial rotary position embedding (rotate-half) of the attention queries and keys.
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// For x, y (rows, heads, d) row-major contiguous and cos, sin (rows, r) fp32 with r even and
// r <= d: y[s, h, i] = x[s, h, i]·cos[s, i] + rot[i]·sin[s, i] for i < r, where rot is
// (-x[r/2 .. r), x[0 .. r/2)), and y[s, h, i] = x[s, h, i] for i >= r. fp32 math with the fp32
// tables, one rounding; y must not overlap x; multithreaded over rows.
void rope_bf16(const Bf16* x, const float* cos, const float* sin, Bf16* y, std::int64_t rows,
               std::int64_t heads, std::int64_t d, std::int64_t r);
void rope_f32(const float* x, const float* cos, const float* sin, float* y, std::int64_t rows,
              std::int64_t heads, std::int64_t d, std::int64_t r);

}  // namespace h3p::kernels::cpu
