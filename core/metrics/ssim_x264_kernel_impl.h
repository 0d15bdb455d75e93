#pragma once
// Private to ssim_x264_kernel_*.cpp: x264's SSIM as FFmpeg's ssim filter computes it. Per row
// of 4x4 blocks the sums s1 = Σa, s2 = Σb, ss = Σa² + Σb², s12 = Σab (kept as four arrays),
// then per 8x8 window (2x2 blocks) the float expression of ssim_end1, added in groups of four
// as FFmpeg's ssim_endn does: every path gives the same bits (integer sums; the same float
// operations in the same order, no FMA).
#include <cstddef>
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/metrics/ssim_x264_kernel.h"

namespace h3p::metrics::ssim_kernel {
namespace {

constexpr int kC1 = static_cast<int>(.01 * .01 * 255 * 255 * 64 + .5);
constexpr int kC2 = static_cast<int>(.03 * .03 * 255 * 255 * 64 * 63 + .5);

// Block sums of one row of blocks (4 image rows) from block `from` on.
inline void block_sums_scalar(const std::uint8_t* a, const std::uint8_t* b, int stride, int from,
                              int blocks, int* s1, int* s2, int* ss, int* s12) {
  for (int z = from; z < blocks; ++z) {
    int t1 = 0, t2 = 0, tss = 0, t12 = 0;
    for (int y = 0; y < 4; ++y) {
      const std::uint8_t* ra = a + static_cast<std::size_t>(y) * stride + 4 * z;
      const std::uint8_t* rb = b + static_cast<std::size_t>(y) * stride + 4 * z;
      for (int x = 0; x < 4; ++x) {
        const int va = ra[x], vb = rb[x];
        t1 += va;
        t2 += vb;
        tss += va * va + vb * vb;
        t12 += va * vb;
      }
    }
    s1[z] = t1;
    s2[z] = t2;
    ss[z] = tss;
    s12[z] = t12;
  }
}

inline float end1(int s1, int s2, int ss, int s12) {
  const int vars = ss * 64 - s1 * s1 - s2 * s2;
  const int covar = s12 * 64 - s1 * s2;
  return static_cast<float>(2 * s1 * s2 + kC1) * static_cast<float>(2 * covar + kC2) /
         (static_cast<float>(s1 * s1 + s2 * s2 + kC1) * static_cast<float>(vars + kC2));
}

#if defined(__AVX2__)
// Block sums of 8 blocks (32 columns) per step; returns the first block left.
inline int block_sums_avx2(const std::uint8_t* a, const std::uint8_t* b, int stride, int blocks,
                           int* s1, int* s2, int* ss, int* s12) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
  int z = 0;
  for (; z + 8 <= blocks; z += 8) {
    __m256i t1 = _mm256_setzero_si256(), t2 = t1, tss = t1, t12 = t1;
    for (int y = 0; y < 4; ++y) {
      const std::uint8_t* ra = a + static_cast<std::size_t>(y) * stride + 4 * z;
      const std::uint8_t* rb = b + static_cast<std::size_t>(y) * stride + 4 * z;
      const __m256i alo =
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ra)));
      const __m256i ahi =
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ra + 16)));
      const __m256i blo =
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rb)));
      const __m256i bhi =
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rb + 16)));
      // Pair sums (32-bit), then hadd to 4-pixel sums: lanes in block order 0 1 4 5 | 2 3 6 7.
      t1 = _mm256_add_epi32(
          t1, _mm256_hadd_epi32(_mm256_madd_epi16(alo, ones), _mm256_madd_epi16(ahi, ones)));
      t2 = _mm256_add_epi32(
          t2, _mm256_hadd_epi32(_mm256_madd_epi16(blo, ones), _mm256_madd_epi16(bhi, ones)));
      tss = _mm256_add_epi32(
          tss, _mm256_hadd_epi32(
                   _mm256_add_epi32(_mm256_madd_epi16(alo, alo), _mm256_madd_epi16(blo, blo)),
                   _mm256_add_epi32(_mm256_madd_epi16(ahi, ahi), _mm256_madd_epi16(bhi, bhi))));
      t12 = _mm256_add_epi32(
          t12, _mm256_hadd_epi32(_mm256_madd_epi16(alo, blo), _mm256_madd_epi16(ahi, bhi)));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s1 + z), _mm256_permutevar8x32_epi32(t1, order));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s2 + z), _mm256_permutevar8x32_epi32(t2, order));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ss + z),
                        _mm256_permutevar8x32_epi32(tss, order));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s12 + z),
                        _mm256_permutevar8x32_epi32(t12, order));
  }
  return z;
}

// end1 of windows [0, n) into e, 8 per step; returns the first window left.
inline int end_avx2(const int* const* r0, const int* const* r1, int n, float* e) {
  const __m256i c1 = _mm256_set1_epi32(kC1), c2 = _mm256_set1_epi32(kC2);
  auto window = [&](int k, int i) {
    const __m256i* p0 = reinterpret_cast<const __m256i*>(r0[k] + i);
    const __m256i* p1 = reinterpret_cast<const __m256i*>(r1[k] + i);
    const __m256i* q0 = reinterpret_cast<const __m256i*>(r0[k] + i + 1);
    const __m256i* q1 = reinterpret_cast<const __m256i*>(r1[k] + i + 1);
    return _mm256_add_epi32(
        _mm256_add_epi32(_mm256_add_epi32(_mm256_loadu_si256(p0), _mm256_loadu_si256(q0)),
                         _mm256_loadu_si256(p1)),
        _mm256_loadu_si256(q1));
  };
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i s1 = window(0, i), s2 = window(1, i), ss = window(2, i), s12 = window(3, i);
    const __m256i s1s1 = _mm256_mullo_epi32(s1, s1), s2s2 = _mm256_mullo_epi32(s2, s2);
    const __m256i s1s2 = _mm256_mullo_epi32(s1, s2);
    const __m256i vars = _mm256_sub_epi32(_mm256_sub_epi32(_mm256_slli_epi32(ss, 6), s1s1), s2s2);
    const __m256i covar = _mm256_sub_epi32(_mm256_slli_epi32(s12, 6), s1s2);
    const __m256 num =
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_slli_epi32(s1s2, 1), c1)),
                      _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_slli_epi32(covar, 1), c2)));
    const __m256 den =
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_add_epi32(s1s1, s2s2), c1)),
                      _mm256_cvtepi32_ps(_mm256_add_epi32(vars, c2)));
    _mm256_storeu_ps(e + i, _mm256_div_ps(num, den));
  }
  return i;
}
#endif

inline double plane(const std::uint8_t* a, const std::uint8_t* b, int width, int height,
                    int* scratch, float* e) {
  const int bw = width >> 2, bh = height >> 2;
  const std::size_t row = static_cast<std::size_t>(bw) + 16;
  // Two rows of block sums (s1, s2, ss, s12 each), then the window values.
  int* sums[2][4];
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 4; ++k) sums[r][k] = scratch + (4 * r + k) * row;
  }
  int*(*cur)[4] = &sums[0];
  int*(*prev)[4] = &sums[1];
  double total = 0;
  int z = 0;
  for (int y = 1; y < bh; ++y) {
    for (; z <= y; ++z) {
      int*(*t)[4] = cur;
      cur = prev;
      prev = t;
      const std::uint8_t* ra = a + static_cast<std::size_t>(4 * z) * width;
      const std::uint8_t* rb = b + static_cast<std::size_t>(4 * z) * width;
      int from = 0;
#if defined(__AVX2__)
      from = block_sums_avx2(ra, rb, width, bw, (*cur)[0], (*cur)[1], (*cur)[2], (*cur)[3]);
#endif
      block_sums_scalar(ra, rb, width, from, bw, (*cur)[0], (*cur)[1], (*cur)[2], (*cur)[3]);
    }
    // cur holds block row y, prev block row y - 1 (FFmpeg's sum0 / sum1; the window adds both).
    const int n = bw - 1;
    int i = 0;
#if defined(__AVX2__)
    i = end_avx2(*cur, *prev, n, e);
#endif
    for (; i < n; ++i) {
      const int* const* c = *cur;
      const int* const* p = *prev;
      e[i] = end1(c[0][i] + c[0][i + 1] + p[0][i] + p[0][i + 1],
                  c[1][i] + c[1][i + 1] + p[1][i] + p[1][i + 1],
                  c[2][i] + c[2][i + 1] + p[2][i] + p[2][i + 1],
                  c[3][i] + c[3][i + 1] + p[3][i] + p[3][i + 1]);
    }
    float line = 0;
    for (int k = 0; k < n; k += 4) {
      float part = 0;
      for (int j = k; j < k + 4 && j < n; ++j) part += e[j];
      line += part;
    }
    total += line;
  }
  return total / (static_cast<double>(bh - 1) * (bw - 1));
}

}  // namespace
}  // namespace h3p::metrics::ssim_kernel
