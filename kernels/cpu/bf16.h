#pragma once
// bfloat16 storage type of the CPU kernels and its conversions, matching PyTorch's: widening is
// exact (the 16 bits become the top half of an fp32), narrowing rounds to nearest even and
// turns every NaN into the canonical quiet NaN 0x7fc0, as c10::BFloat16 does.
#include <cstdint>
#include <cstring>

namespace h3p::kernels::cpu {

struct Bf16 {
  std::uint16_t bits;
};
static_assert(sizeof(Bf16) == 2);

inline float to_float(Bf16 v) {
  const std::uint32_t u = static_cast<std::uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline Bf16 to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return Bf16{0x7fc0};
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return Bf16{static_cast<std::uint16_t>((u + rounding) >> 16)};
}

}  // namespace h3p::kernels::cpu
