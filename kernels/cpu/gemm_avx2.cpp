// AVX2 + FMA gemm inner loops (8-lane fp32): a 6 x 16 register-tile microkernel over packed
// panels, and the GEMV loop for m <= 4 rows that widens bf16 weights in registers.
#include <immintrin.h>

#include "kernels/cpu/gemm_micro.h"

#define H3P_AVX2 __attribute__((target("avx2,fma")))

namespace h3p::kernels::cpu::gemm_detail {
namespace {

H3P_AVX2 inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
H3P_AVX2 inline __m256 load8(const Bf16* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// The first `count` (< 8) values at p, widened, then zeros.
template <typename T>
H3P_AVX2 inline __m256 load8_partial(const T* p, std::int64_t count) {
  alignas(32) float tmp[8] = {};
  for (std::int64_t i = 0; i < count; ++i) {
    if constexpr (sizeof(T) == 2) {
      tmp[i] = to_float(p[i]);
    } else {
      tmp[i] = p[i];
    }
  }
  return _mm256_load_ps(tmp);
}

H3P_AVX2 inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }
inline void narrow(float v, float* out) { *out = v; }

constexpr int kGemvCols = 2;

// Rows r < M of x against kGemvCols weight rows; columns past j1 repeat the last valid one and
// are not stored. Every (r, j) sees the same instruction sequence in any group.
template <int M, typename T>
H3P_AVX2 void gemv_group(const float* x, const T* w, const float* bias, T* y, std::int64_t n,
                         std::int64_t k, std::int64_t j, std::int64_t j1) {
  const T* wc[kGemvCols];
  for (int c = 0; c < kGemvCols; ++c) wc[c] = w + std::min<std::int64_t>(j + c, j1 - 1) * k;
  __m256 acc[M][kGemvCols];
  for (int r = 0; r < M; ++r) {
    for (int c = 0; c < kGemvCols; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  std::int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    __m256 wv[kGemvCols];
    for (int c = 0; c < kGemvCols; ++c) wv[c] = load8(wc[c] + i);
    for (int r = 0; r < M; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * k + i);
      for (int c = 0; c < kGemvCols; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  if (i < k) {
    __m256 wv[kGemvCols];
    for (int c = 0; c < kGemvCols; ++c) wv[c] = load8_partial(wc[c] + i, k - i);
    for (int r = 0; r < M; ++r) {
      const __m256 xv = load8_partial(x + r * k + i, k - i);
      for (int c = 0; c < kGemvCols; ++c) acc[r][c] = _mm256_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  for (int c = 0; c < kGemvCols && j + c < j1; ++c) {
    for (int r = 0; r < M; ++r) {
      float v = sum8(acc[r][c]);
      if (bias != nullptr) v += bias[j + c];
      narrow(v, y + r * n + j + c);
    }
  }
}

template <typename T>
H3P_AVX2 void gemv(const float* x, std::int64_t m, const T* w, const float* bias, T* y,
                   std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1) {
  for (std::int64_t j = j0; j < j1; j += kGemvCols) {
    switch (m) {
      case 1: gemv_group<1>(x, w, bias, y, n, k, j, j1); break;
      case 2: gemv_group<2>(x, w, bias, y, n, k, j, j1); break;
      case 3: gemv_group<3>(x, w, bias, y, n, k, j, j1); break;
      case 4: gemv_group<4>(x, w, bias, y, n, k, j, j1); break;
      default: break;
    }
  }
}

}  // namespace

H3P_AVX2 void micro_avx2(const float* a, const float* b, std::int64_t k, float* c) {
  constexpr int mr = kTileAvx2.mr;
  constexpr int nr = kTileAvx2.nr;
  static_assert(nr == 16);
  __m256 acc[mr][2];
  for (int r = 0; r < mr; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < k; ++i) {
    const __m256 b0 = _mm256_loadu_ps(b + i * nr);
    const __m256 b1 = _mm256_loadu_ps(b + i * nr + 8);
    const float* ai = a + i * mr;
    for (int r = 0; r < mr; ++r) {
      const __m256 av = _mm256_broadcast_ss(ai + r);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < mr; ++r) {
    _mm256_storeu_ps(c + r * nr, acc[r][0]);
    _mm256_storeu_ps(c + r * nr + 8, acc[r][1]);
  }
}

H3P_AVX2 void gemv_bf16_avx2(const float* x, std::int64_t m, const Bf16* w, const float* bias,
                             Bf16* y, std::int64_t n, std::int64_t k, std::int64_t j0,
                             std::int64_t j1) {
  gemv(x, m, w, bias, y, n, k, j0, j1);
}

H3P_AVX2 void gemv_f32_avx2(const float* x, std::int64_t m, const float* w, const float* bias,
                            float* y, std::int64_t n, std::int64_t k, std::int64_t j0,
                            std::int64_t j1) {
  gemv(x, m, w, bias, y, n, k, j0, j1);
}

}  // namespace h3p::kernels::cpu::gemm_detail
