#pragma once
// SwiGLU of the feed-forward: value·silu(gate) with value the first half of each row.
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// y[r, j] = h[r, j]·silu(h[r, f + j]) for h (rows, 2f) and y (rows, f), both row-major
// contiguous; fp32 math, one rounding; multithreaded over rows.
void swiglu_bf16(const Bf16* h, Bf16* y, std::int64_t rows, std::int64_t f);
void swiglu_f32(const float* h, float* y, std::int64_t rows, std::int64_t f);

}  // namespace h3p::kernels::cpu
