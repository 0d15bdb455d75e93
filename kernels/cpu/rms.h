#pragma once
// Private to qk_norm.cpp and norm.cpp: the RMS statistic of one row and the plain weighted
// RMSNorm over many rows, shared by the per-head (qk_norm) and the per-row (norm) kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu::rms {

inline float widen(float v) { return v; }
inline float widen(Bf16 v) { return to_float(v); }
inline void narrow(float v, float* out) { *out = v; }
inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }

// Elements per thread at least when splitting rows.
inline constexpr std::int64_t kGrainElements = 1 << 14;

// 1/sqrt(mean(x²) + eps) of one row of c > 0 elements. The squares (exact in fp64) are summed
// in fp64 over 8 lanes in a fixed order, so the value is the same however rows are split.
template <typename T>
inline float inverse_rms(const T* x, std::int64_t c, double eps) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= c; i += 8) {
    for (int j = 0; j < 8; ++j) {
      const double v = widen(x[i + j]);
      acc[j] += v * v;
    }
  }
  for (; i < c; ++i) {
    const double v = widen(x[i]);
    acc[i & 7] += v * v;
  }
  const double sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  return static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(c) + eps));
}

// y[r, :] = (x[r, :]·inverse_rms(x[r, :]))·w in fp32, rounded once; x, y (n, c) contiguous.
template <typename T>
void normalize_rows(const T* x, const T* w, T* y, std::int64_t n, std::int64_t c, double eps) {
  if (c <= 0) return;
  const std::int64_t grain = std::max<std::int64_t>(1, kGrainElements / c);
  parallel_for(n, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * c;
      T* yr = y + r * c;
      const float inv = inverse_rms(xr, c, eps);
      for (std::int64_t j = 0; j < c; ++j) narrow((widen(xr[j]) * inv) * widen(w[j]), yr + j);
    }
  });
}

}  // namespace h3p::kernels::cpu::rms
