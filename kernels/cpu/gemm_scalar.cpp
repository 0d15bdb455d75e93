// Portable gemm inner loops: always compiled, taken when the CPU has neither AVX2 nor AVX-512
// or when H3P_KERNELS_ISA=scalar forces them; tested explicitly by test_gemm.
#include "kernels/cpu/gemm_micro.h"

namespace h3p::kernels::cpu::gemm_detail {
namespace {

inline float widen(Bf16 v) { return to_float(v); }
inline float widen(float v) { return v; }
inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }
inline void narrow(float v, float* out) { *out = v; }

template <typename T>
void gemv(const float* x, std::int64_t m, const T* w, const float* bias, T* y, std::int64_t n,
          std::int64_t k, std::int64_t j0, std::int64_t j1) {
  for (std::int64_t j = j0; j < j1; ++j) {
    const T* wj = w + j * k;
    for (std::int64_t r = 0; r < m; ++r) {
      const float* xr = x + r * k;
      float acc = 0.0f;
      for (std::int64_t i = 0; i < k; ++i) acc += xr[i] * widen(wj[i]);
      if (bias != nullptr) acc += bias[j];
      narrow(acc, y + r * n + j);
    }
  }
}

}  // namespace

void micro_scalar(const float* a, const float* b, std::int64_t k, float* c) {
  constexpr int mr = kTileScalar.mr;
  constexpr int nr = kTileScalar.nr;
  float acc[mr][nr] = {};
  for (std::int64_t i = 0; i < k; ++i) {
    const float* ai = a + i * mr;
    const float* bi = b + i * nr;
    for (int r = 0; r < mr; ++r) {
      for (int j = 0; j < nr; ++j) acc[r][j] += ai[r] * bi[j];
    }
  }
  for (int r = 0; r < mr; ++r) {
    for (int j = 0; j < nr; ++j) c[r * nr + j] = acc[r][j];
  }
}

void gemv_bf16_scalar(const float* x, std::int64_t m, const Bf16* w, const float* bias, Bf16* y,
                      std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1) {
  gemv(x, m, w, bias, y, n, k, j0, j1);
}

void gemv_f32_scalar(const float* x, std::int64_t m, const float* w, const float* bias, float* y,
                     std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1) {
  gemv(x, m, w, bias, y, n, k, j0, j1);
}

}  // namespace h3p::kernels::cpu::gemm_detail
