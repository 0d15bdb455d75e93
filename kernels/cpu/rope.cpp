// Rotate-half RoPE over the first r channels of every head, the rest copied. The tables stay
// fp32 (the provider first rounds them to the activation dtype) and each rotated element is
// x·cos + rot·sin in fp32, rounded once; in fp32 this is the provider's arithmetic exactly.
// Rows are split across threads, each row covering all its heads. Tested against the
// provider's rope in tests/kernels/cpu/test_rope.cpp (full, partial and head_dim-odd cases).
#include "kernels/cpu/rope.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {
namespace {

constexpr std::int64_t kGrainElements = 1 << 15;

inline float widen(float v) { return v; }
inline float widen(Bf16 v) { return to_float(v); }
inline void narrow(float v, float* out) { *out = v; }
inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }

template <typename T>
void rope_rows(const T* x, const float* cos, const float* sin, T* y, std::int64_t rows,
               std::int64_t heads, std::int64_t d, std::int64_t r) {
  const std::int64_t row_elems = heads * d;
  if (row_elems <= 0) return;
  const std::int64_t half = r / 2;
  const std::int64_t grain = std::max<std::int64_t>(1, kGrainElements / row_elems);
  parallel_for(rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t s = begin; s < end; ++s) {
      const float* c = cos + s * r;
      const float* sn = sin + s * r;
      for (std::int64_t h = 0; h < heads; ++h) {
        const T* xh = x + (s * heads + h) * d;
        T* yh = y + (s * heads + h) * d;
        for (std::int64_t i = 0; i < half; ++i) {
          narrow(widen(xh[i]) * c[i] + (-widen(xh[i + half])) * sn[i], yh + i);
        }
        for (std::int64_t i = half; i < r; ++i) {
          narrow(widen(xh[i]) * c[i] + widen(xh[i - half]) * sn[i], yh + i);
        }
        if (d > r) std::memcpy(yh + r, xh + r, static_cast<std::size_t>(d - r) * sizeof(T));
      }
    }
  });
}

}  // namespace

void rope_bf16(const Bf16* x, const float* cos, const float* sin, Bf16* y, std::int64_t rows,
               std::int64_t heads, std::int64_t d, std::int64_t r) {
  rope_rows(x, cos, sin, y, rows, heads, d, r);
}
void rope_f32(const float* x, const float* cos, const float* sin, float* y, std::int64_t rows,
              std::int64_t heads, std::int64_t d, std::int64_t r) {
  rope_rows(x, cos, sin, y, rows, heads, d, r);
}

}  // namespace h3p::kernels::cpu
