// AVX2 + FMA attention step (8-lane fp32): 4 x 16 score register tiles, a polynomial exp, and
// the p·v update in 4 x 16 output register tiles.
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "kernels/cpu/attention_micro.h"

#define H3P_AVX2 __attribute__((target("avx2,fma")))

namespace h3p::kernels::cpu::attention_detail {
namespace {

constexpr int kRowGroup = 4;

// e^x for x <= 88, within ~2 ulp; results below FLT_MIN (x < -87.33, -inf included) are 0 and
// NaN propagates. Range reduction x = n·ln2 + r, |r| <= ln2/2, degree-7 polynomial for e^r.
H3P_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.33654f);
  const __m256 hi = _mm256_set1_ps(88.0f);
  const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  __m256 v = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), v);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  y = _mm256_mul_ps(y, _mm256_castsi256_ps(bits));
  return _mm256_andnot_ps(underflow, y);
}

H3P_AVX2 inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

H3P_AVX2 inline float hmax8(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

}  // namespace

H3P_AVX2 void tile_step_avx2(const float* qt, const float* kt, const float* vt, std::int64_t d,
                             std::int64_t dp, int valid_keys, float scale, float* m, float* l,
                             float* o) {
  static_assert(kQueryTile == 8 && kKeyTile == 32 && kLanes == 16);
  alignas(32) float p[kQueryTile][kKeyTile];
  // Step 1: scaled scores in 4-row x 16-key register tiles.
  const __m256 sc = _mm256_set1_ps(scale);
  for (int kh = 0; kh < kKeyTile; kh += 16) {
    for (int rg = 0; rg < kQueryTile; rg += kRowGroup) {
      __m256 s[kRowGroup][2];
      for (int r = 0; r < kRowGroup; ++r) s[r][0] = s[r][1] = _mm256_setzero_ps();
      for (std::int64_t c = 0; c < d; ++c) {
        const __m256 k0 = _mm256_loadu_ps(kt + c * kKeyTile + kh);
        const __m256 k1 = _mm256_loadu_ps(kt + c * kKeyTile + kh + 8);
        const float* qc = qt + c * kQueryTile + rg;
        for (int r = 0; r < kRowGroup; ++r) {
          const __m256 qv = _mm256_broadcast_ss(qc + r);
          s[r][0] = _mm256_fmadd_ps(qv, k0, s[r][0]);
          s[r][1] = _mm256_fmadd_ps(qv, k1, s[r][1]);
        }
      }
      for (int r = 0; r < kRowGroup; ++r) {
        _mm256_store_ps(p[rg + r] + kh, _mm256_mul_ps(s[r][0], sc));
        _mm256_store_ps(p[rg + r] + kh + 8, _mm256_mul_ps(s[r][1], sc));
      }
    }
  }
  // Step 2: mask padded keys, online softmax update; weights back to p.
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int r = 0; r < kQueryTile; ++r) {
    for (int j = valid_keys; j < kKeyTile; ++j) p[r][j] = neg_inf;
  }
  alignas(32) float corr[kQueryTile];
  for (int r = 0; r < kQueryTile; ++r) {
    __m256 t[4];
    for (int q = 0; q < 4; ++q) t[q] = _mm256_load_ps(p[r] + 8 * q);
    const float mx = hmax8(_mm256_max_ps(_mm256_max_ps(t[0], t[1]), _mm256_max_ps(t[2], t[3])));
    const float m_new = std::max(m[r], mx);
    const __m256 mv = _mm256_set1_ps(m_new);
    for (int q = 0; q < 4; ++q) {
      t[q] = exp8(_mm256_sub_ps(t[q], mv));
      _mm256_store_ps(p[r] + 8 * q, t[q]);
    }
    corr[r] = _mm256_cvtss_f32(exp8(_mm256_set1_ps(m[r] - m_new)));
    l[r] = l[r] * corr[r] +
           hsum8(_mm256_add_ps(_mm256_add_ps(t[0], t[1]), _mm256_add_ps(t[2], t[3])));
    m[r] = m_new;
  }
  // Step 3: o = o·corr + p·v, 16 output channels x 4 rows at a time.
  for (std::int64_t c = 0; c < dp; c += 16) {
    for (int rg = 0; rg < kQueryTile; rg += kRowGroup) {
      __m256 acc[kRowGroup][2];
      for (int r = 0; r < kRowGroup; ++r) {
        const __m256 cr = _mm256_set1_ps(corr[rg + r]);
        acc[r][0] = _mm256_mul_ps(_mm256_loadu_ps(o + (rg + r) * dp + c), cr);
        acc[r][1] = _mm256_mul_ps(_mm256_loadu_ps(o + (rg + r) * dp + c + 8), cr);
      }
      for (int j = 0; j < valid_keys; ++j) {
        const __m256 v0 = _mm256_loadu_ps(vt + j * dp + c);
        const __m256 v1 = _mm256_loadu_ps(vt + j * dp + c + 8);
        for (int r = 0; r < kRowGroup; ++r) {
          const __m256 pv = _mm256_broadcast_ss(&p[rg + r][j]);
          acc[r][0] = _mm256_fmadd_ps(pv, v0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(pv, v1, acc[r][1]);
        }
      }
      for (int r = 0; r < kRowGroup; ++r) {
        _mm256_storeu_ps(o + (rg + r) * dp + c, acc[r][0]);
        _mm256_storeu_ps(o + (rg + r) * dp + c + 8, acc[r][1]);
      }
    }
  }
}

}  // namespace h3p::kernels::cpu::attention_detail
