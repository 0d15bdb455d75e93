#pragma once
// RMSNorm over rows, plain and fused with the AdaLN modulation (norm1 / norm2 / norm_out).
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// y[r, :] = x[r, :]/rms(x[r, :])·w for x, y (rows, c) row-major contiguous and w (c); fp64
// statistics from the exact squares, fp32 scaling, one rounding; multithreaded over rows.
void rms_norm_bf16(const Bf16* x, const Bf16* w, Bf16* y, std::int64_t rows, std::int64_t c,
                   double eps);
void rms_norm_f32(const float* x, const float* w, float* y, std::int64_t rows, std::int64_t c,
                  double eps);

// y[r, :] = (x[r, :]/rms(x[r, :])·w)·(1 + scale[r, :]) + shift[r, :] in one pass; scale and
// shift (rows, c) contiguous. fp32 arithmetic, one rounding per element; multithreaded over rows.
void norm_modulate_bf16(const Bf16* x, const Bf16* w, const Bf16* scale, const Bf16* shift,
                        Bf16* y, std::int64_t rows, std::int64_t c, double eps);
void norm_modulate_f32(const float* x, const float* w, const float* scale, const float* shift,
                       float* y, std::int64_t rows, std::int64_t c, double eps);

}  // namespace h3p::kernels::cpu
