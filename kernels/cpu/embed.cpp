// Sinusoidal timestep embedding, cos half first. The frequencies and angles are rounded to
// fp32 at the same steps as the provider's eager ops (k·(-ln 10000), /half, exp, ·t) and
// evaluated with the C library's fp32 exp/sin/cos, so results agree with the provider to fp32
// rounding of the transcendental functions. Tested against the provider's timestep_sinusoid in
// tests/kernels/cpu/test_embed.cpp (even and odd widths, t = 0, large t).
#include "kernels/cpu/embed.h"

#include <cmath>
#include <vector>

namespace h3p::kernels::cpu {

void timestep_sinusoid_f32(const float* t, float* out, std::int64_t n, std::int64_t dim) {
  const std::int64_t half = dim / 2;
  const float log_period = static_cast<float>(-std::log(10000.0));
  std::vector<float> freqs(static_cast<std::size_t>(half));
  for (std::int64_t k = 0; k < half; ++k) {
    const float exponent = (static_cast<float>(k) * log_period) / static_cast<float>(half);
    freqs[static_cast<std::size_t>(k)] = std::exp(exponent);
  }
  for (std::int64_t i = 0; i < n; ++i) {
    float* row = out + i * dim;
    for (std::int64_t k = 0; k < half; ++k) {
      const float angle = t[i] * freqs[static_cast<std::size_t>(k)];
      row[k] = std::cos(angle);
      row[half + k] = std::sin(angle);
    }
    if (dim % 2 == 1) row[dim - 1] = 0.0f;
  }
}

}  // namespace h3p::kernels::cpu
