// AVX-512 gemm inner loops (16-lane fp32 FMA): a 12 x 32 register-tile microkernel over packed
// panels, and the GEMV loop for m <= 4 rows that widens bf16 weights in registers.
#include <immintrin.h>

#include "kernels/cpu/gemm_micro.h"

// GCC 12 reports the intrinsics' own _mm*_undefined_* placeholders as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define H3P_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

namespace h3p::kernels::cpu::gemm_detail {
namespace {

H3P_AVX512 inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
H3P_AVX512 inline __m512 load16(const Bf16* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
H3P_AVX512 inline __m512 load16(const float* p, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, p);
}
H3P_AVX512 inline __m512 load16(const Bf16* p, __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }
inline void narrow(float v, float* out) { *out = v; }

constexpr int kGemvCols = 4;

// Rows r < M of x against kGemvCols weight rows; columns past j1 repeat the last valid one and
// are not stored. Every (r, j) sees the same instruction sequence in any group.
template <int M, typename T>
H3P_AVX512 void gemv_group(const float* x, const T* w, const float* bias, T* y, std::int64_t n,
                           std::int64_t k, std::int64_t j, std::int64_t j1) {
  const T* wc[kGemvCols];
  for (int c = 0; c < kGemvCols; ++c) wc[c] = w + std::min<std::int64_t>(j + c, j1 - 1) * k;
  __m512 acc[M][kGemvCols];
  for (int r = 0; r < M; ++r) {
    for (int c = 0; c < kGemvCols; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  std::int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    __m512 wv[kGemvCols];
    for (int c = 0; c < kGemvCols; ++c) wv[c] = load16(wc[c] + i);
    for (int r = 0; r < M; ++r) {
      const __m512 xv = _mm512_loadu_ps(x + r * k + i);
      for (int c = 0; c < kGemvCols; ++c) acc[r][c] = _mm512_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  if (i < k) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (k - i)) - 1u);
    __m512 wv[kGemvCols];
    for (int c = 0; c < kGemvCols; ++c) wv[c] = load16(wc[c] + i, mask);
    for (int r = 0; r < M; ++r) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + r * k + i);
      for (int c = 0; c < kGemvCols; ++c) acc[r][c] = _mm512_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  for (int c = 0; c < kGemvCols && j + c < j1; ++c) {
    for (int r = 0; r < M; ++r) {
      float v = _mm512_reduce_add_ps(acc[r][c]);
      if (bias != nullptr) v += bias[j + c];
      narrow(v, y + r * n + j + c);
    }
  }
}

template <typename T>
H3P_AVX512 void gemv(const float* x, std::int64_t m, const T* w, const float* bias, T* y,
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

H3P_AVX512 void micro_avx512(const float* a, const float* b, std::int64_t k, float* c) {
  constexpr int mr = kTileAvx512.mr;
  constexpr int nr = kTileAvx512.nr;
  static_assert(nr == 32);
  __m512 acc[mr][2];
  for (int r = 0; r < mr; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < k; ++i) {
    const __m512 b0 = _mm512_loadu_ps(b + i * nr);
    const __m512 b1 = _mm512_loadu_ps(b + i * nr + 16);
    const float* ai = a + i * mr;
    for (int r = 0; r < mr; ++r) {
      const __m512 av = _mm512_set1_ps(ai[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < mr; ++r) {
    _mm512_storeu_ps(c + r * nr, acc[r][0]);
    _mm512_storeu_ps(c + r * nr + 16, acc[r][1]);
  }
}

H3P_AVX512 void store_row_bf16_avx512(const float* acc, const float* bias, Bf16* y,
                                     std::int64_t cols) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i inf_bits = _mm512_set1_epi32(0x7f800000);
  const __m512i nan_bf16 = _mm512_set1_epi32(0x7fc0);
  const __m512i round_base = _mm512_set1_epi32(0x7fff);
  const __m512i one = _mm512_set1_epi32(1);
  for (std::int64_t j = 0; j < cols; j += 16) {
    const std::int64_t left = cols - j;
    const __mmask16 mask =
        left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1u);
    __m512 v = _mm512_maskz_loadu_ps(mask, acc + j);
    if (bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, bias + j));
    const __m512i u = _mm512_castps_si512(v);
    const __mmask16 is_nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs_mask), inf_bits);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(round_base, lsb)), 16);
    r = _mm512_mask_mov_epi32(r, is_nan, nan_bf16);
    _mm256_mask_storeu_epi16(y + j, mask, _mm512_cvtepi32_epi16(r));
  }
}

H3P_AVX512 void gemv_bf16_avx512(const float* x, std::int64_t m, const Bf16* w,
                                 const float* bias, Bf16* y, std::int64_t n, std::int64_t k,
                                 std::int64_t j0, std::int64_t j1) {
  gemv(x, m, w, bias, y, n, k, j0, j1);
}

H3P_AVX512 void gemv_f32_avx512(const float* x, std::int64_t m, const float* w,
                                const float* bias, float* y, std::int64_t n, std::int64_t k,
                                std::int64_t j0, std::int64_t j1) {
  gemv(x, m, w, bias, y, n, k, j0, j1);
}

}  // namespace h3p::kernels::cpu::gemm_detail
