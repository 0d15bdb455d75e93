#pragma once
// The residual adds of the blocks (gated) and of the token refiner (plain).
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// out[i] = x[i] + gate[i]·y[i] for i < n (all arrays of n elements); fp32 math, one rounding;
// out may alias x exactly; multithreaded over blocks of elements.
void gated_residual_bf16(const Bf16* x, const Bf16* gate, const Bf16* y, Bf16* out,
                         std::int64_t n);
void gated_residual_f32(const float* x, const float* gate, const float* y, float* out,
                        std::int64_t n);

// out[i] = x[i] + y[i] for i < n; out may alias x exactly; multithreaded.
void add_bf16(const Bf16* x, const Bf16* y, Bf16* out, std::int64_t n);
void add_f32(const float* x, const float* y, float* out, std::int64_t n);

}  // namespace h3p::kernels::cpu
