// SwiGLU: each output element is value·silu(gate) evaluated in fp32 (exp_f32 from
// activation.h) and rounded once, where the provider rounds silu(gate) and the product
// separately. Rows are split across threads; a row's result depends on that row alone, so the
// bytes do not depend on the thread count. Tested against the provider's swiglu in
// tests/kernels/cpu/test_swiglu.cpp.
#include "kernels/cpu/swiglu.h"

#include <algorithm>

#include "kernels/cpu/activation.h"
#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {
namespace {

constexpr std::int64_t kGrainElements = 1 << 15;

inline float widen(float v) { return v; }
inline float widen(Bf16 v) { return to_float(v); }
inline void narrow(float v, float* out) { *out = v; }
inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }

template <typename T>
void swiglu_rows(const T* h, T* y, std::int64_t rows, std::int64_t f) {
  if (f <= 0) return;
  const std::int64_t grain = std::max<std::int64_t>(1, kGrainElements / f);
  parallel_for(rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const T* value = h + r * 2 * f;
      const T* gate = value + f;
      T* out = y + r * f;
      for (std::int64_t j = 0; j < f; ++j) {
        narrow(widen(value[j]) * silu_value(widen(gate[j])), out + j);
      }
    }
  });
}

}  // namespace

void swiglu_bf16(const Bf16* h, Bf16* y, std::int64_t rows, std::int64_t f) {
  swiglu_rows(h, y, rows, f);
}
void swiglu_f32(const float* h, float* y, std::int64_t rows, std::int64_t f) {
  swiglu_rows(h, y, rows, f);
}

}  // namespace h3p::kernels::cpu
