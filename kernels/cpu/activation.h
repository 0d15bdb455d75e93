#pragma once
// SiLU, x·sigmoid(x), on bf16 and fp32 rows, and the scalar fp32 exp/silu every candidate
// kernel that needs a sigmoid shares (swiglu). Elements are computed in fp32 and rounded once.
#include <cstdint>
#include <cstring>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// e^x in fp32 within about 2 ulp; +inf above 88.72, 0 far below, NaN stays NaN. Branch-free
// IEEE arithmetic only (no FMA), so a vectorised loop gives the same bits as a scalar one.
inline float exp_f32(float x) {
  x = x < -104.0f ? -104.0f : x;
  x = x > 89.0f ? 89.0f : x;
  // n = round(x / ln 2) by the 1.5·2^23 trick; r = x - n·ln 2 in two parts (n·hi is exact).
  const float shifter = 12582912.0f;
  const float t = x * 1.44269504f + shifter;
  const float n = t - shifter;
  const float r = (x - n * 0.693145751953125f) - n * 1.428606765330187e-6f;
  // e^r on |r| <= ln2/2 by its Taylor series to degree 7 (truncation < 4e-9 relative).
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n applied as two normal powers of two, so n in [-150, 129] neither wraps nor traps.
  std::uint32_t tb;
  std::memcpy(&tb, &t, sizeof tb);
  const std::int32_t ni = static_cast<std::int32_t>(tb - 0x4b400000u);
  const std::int32_t n1 = ni / 2;
  const std::int32_t n2 = ni - n1;
  const std::uint32_t b1 = static_cast<std::uint32_t>(n1 + 127) << 23;
  const std::uint32_t b2 = static_cast<std::uint32_t>(n2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, sizeof s1);
  std::memcpy(&s2, &b2, sizeof s2);
  return p * s1 * s2;
}

// silu(x) = x / (1 + e^-x) in fp32, the form PyTorch's CPU kernel evaluates.
inline float silu_value(float x) { return x / (1.0f + exp_f32(-x)); }

// y[i] = silu(x[i]) for i < n. x and y may alias exactly; multithreaded over blocks of elements.
void silu_bf16(const Bf16* x, Bf16* y, std::int64_t n);
void silu_f32(const float* x, float* y, std::int64_t n);

}  // namespace h3p::kernels::cpu
