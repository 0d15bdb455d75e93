// SiLU over a flat array: one fp32 evaluation of x / (1 + e^-x) per element (exp_f32 in
// activation.h), rounded once to the output type. Blocks of elements are split across threads;
// every element depends on its input alone, so any split gives the same bytes. Tested against
// the provider's at::silu in tests/kernels/cpu/test_activation.cpp.
#include "kernels/cpu/activation.h"

#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {
namespace {

constexpr std::int64_t kGrain = 1 << 15;  // elements per thread at least

inline float widen(float v) { return v; }
inline float widen(Bf16 v) { return to_float(v); }
inline void narrow(float v, float* out) { *out = v; }
inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }

template <typename T>
void silu_rows(const T* x, T* y, std::int64_t n) {
  parallel_for(n, kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) narrow(silu_value(widen(x[i])), y + i);
  });
}

}  // namespace

void silu_bf16(const Bf16* x, Bf16* y, std::int64_t n) { silu_rows(x, y, n); }
void silu_f32(const float* x, float* y, std::int64_t n) { silu_rows(x, y, n); }

}  // namespace h3p::kernels::cpu
