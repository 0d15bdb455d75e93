// RMSNorm and RMSNorm fused with the AdaLN modulation. One pass per row: the RMS statistic
// (rms.h: fp64 sum of the exact squares over 8 fixed lanes), then every element
// ((x·inv)·w)·(1 + scale) + shift in fp32, rounded once to the output type (the provider rounds
// after each of its four eager ops in bf16). Rows are split across threads; a row depends on
// itself only. Tested against the provider's rms_norm and norm_modulate in
// tests/kernels/cpu/test_norm.cpp.
#include "kernels/cpu/norm.h"

#include <algorithm>

#include "kernels/cpu/rms.h"

namespace h3p::kernels::cpu {
namespace {

template <typename T>
void modulate_rows(const T* x, const T* w, const T* scale, const T* shift, T* y,
                   std::int64_t rows, std::int64_t c, double eps) {
  using rms::narrow;
  using rms::widen;
  if (c <= 0) return;
  const std::int64_t grain = std::max<std::int64_t>(1, rms::kGrainElements / c);
  parallel_for(rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * c;
      const T* sc = scale + r * c;
      const T* sh = shift + r * c;
      T* yr = y + r * c;
      const float inv = rms::inverse_rms(xr, c, eps);
      for (std::int64_t j = 0; j < c; ++j) {
        const float normed = (widen(xr[j]) * inv) * widen(w[j]);
        narrow(normed * (1.0f + widen(sc[j])) + widen(sh[j]), yr + j);
      }
    }
  });
}

}  // namespace

void rms_norm_bf16(const Bf16* x, const Bf16* w, Bf16* y, std::int64_t rows, std::int64_t c,
                   double eps) {
  rms::normalize_rows(x, w, y, rows, c, eps);
}
void rms_norm_f32(const float* x, const float* w, float* y, std::int64_t rows, std::int64_t c,
                  double eps) {
  rms::normalize_rows(x, w, y, rows, c, eps);
}

void norm_modulate_bf16(const Bf16* x, const Bf16* w, const Bf16* scale, const Bf16* shift,
                        Bf16* y, std::int64_t rows, std::int64_t c, double eps) {
  modulate_rows(x, w, scale, shift, y, rows, c, eps);
}
void norm_modulate_f32(const float* x, const float* w, const float* scale, const float* shift,
                       float* y, std::int64_t rows, std::int64_t c, double eps) {
  modulate_rows(x, w, scale, shift, y, rows, c, eps);
}

}  // namespace h3p::kernels::cpu
