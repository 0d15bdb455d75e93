// Residual adds: x + gate·y (blocks) and x + y (token refiner), each element in fp32 and
// rounded once (the provider rounds gate·y first in bf16; in fp32 the results are identical).
// Flat arrays split into blocks across threads. Tested against the provider's gated_residual
// and add in tests/kernels/cpu/test_residual.cpp.
#include "kernels/cpu/residual.h"

#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {
namespace {

constexpr std::int64_t kGrain = 1 << 15;

inline float widen(float v) { return v; }
inline float widen(Bf16 v) { return to_float(v); }
inline void narrow(float v, float* out) { *out = v; }
inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }

template <typename T>
void gated(const T* x, const T* gate, const T* y, T* out, std::int64_t n) {
  parallel_for(n, kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      narrow(widen(x[i]) + widen(gate[i]) * widen(y[i]), out + i);
    }
  });
}

template <typename T>
void plain(const T* x, const T* y, T* out, std::int64_t n) {
  parallel_for(n, kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) narrow(widen(x[i]) + widen(y[i]), out + i);
  });
}

}  // namespace

void gated_residual_bf16(const Bf16* x, const Bf16* gate, const Bf16* y, Bf16* out,
                         std::int64_t n) {
  gated(x, gate, y, out, n);
}
void gated_residual_f32(const float* x, const float* gate, const float* y, float* out,
                        std::int64_t n) {
  gated(x, gate, y, out, n);
}

void add_bf16(const Bf16* x, const Bf16* y, Bf16* out, std::int64_t n) { plain(x, y, out, n); }
void add_f32(const float* x, const float* y, float* out, std::int64_t n) { plain(x, y, out, n); }

}  // namespace h3p::kernels::cpu
