#pragma once
// The sinusoidal timestep embedding that feeds the time embedder.
#include <cstdint>

namespace h3p::kernels::cpu {

// out (n, dim) fp32 row-major from t (n,) fp32, with half = dim/2 and
// freq_k = exp(-ln(10000)·k/half): out[i, k] = cos(t[i]·freq_k), out[i, half + k] =
// sin(t[i]·freq_k) for k < half, and a zero last column when dim is odd. Single-threaded (the
// table is a few rows).
void timestep_sinusoid_f32(const float* t, float* out, std::int64_t n, std::int64_t dim);

}  // namespace h3p::kernels::cpu
