// AVX-512 attention step (16-lane fp32): an 8 x 32 score tile in registers, a polynomial exp,
// and the p·v update in 8 x 32 output register tiles.
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "kernels/cpu/attention_micro.h"

// GCC 12 reports the intrinsics' own _mm*_undefined_* placeholders as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define H3P_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

namespace h3p::kernels::cpu::attention_detail {
namespace {

// e^x for x <= 88, within ~2 ulp; results below FLT_MIN (x < -87.33, -inf included) are 0 and
// NaN propagates. Range reduction x = n·ln2 + r, |r| <= ln2/2, degree-7 polynomial for e^r.
H3P_AVX512 inline __m512 exp16(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.33654f);
  const __m512 hi = _mm512_set1_ps(88.0f);
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
  __m512 v = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(v, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), v);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i bits = _mm512_slli_epi32(
      _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  y = _mm512_mul_ps(y, _mm512_castsi512_ps(bits));
  return _mm512_mask_mov_ps(y, underflow, _mm512_setzero_ps());
}

}  // namespace

H3P_AVX512 void tile_step_avx512(const float* qt, const float* kt, const float* vt,
                                 std::int64_t d, std::int64_t dp, int valid_keys, float scale,
                                 float* m, float* l, float* o) {
  static_assert(kQueryTile == 8 && kKeyTile == 32 && kLanes == 16);
  // Step 1: scores s[r] = q_r·k over the 32 keys, two vectors per row.
  __m512 s[kQueryTile][2];
  for (int r = 0; r < kQueryTile; ++r) s[r][0] = s[r][1] = _mm512_setzero_ps();
  for (std::int64_t c = 0; c < d; ++c) {
    const __m512 k0 = _mm512_loadu_ps(kt + c * kKeyTile);
    const __m512 k1 = _mm512_loadu_ps(kt + c * kKeyTile + 16);
    const float* qc = qt + c * kQueryTile;
    for (int r = 0; r < kQueryTile; ++r) {
      const __m512 qv = _mm512_set1_ps(qc[r]);
      s[r][0] = _mm512_fmadd_ps(qv, k0, s[r][0]);
      s[r][1] = _mm512_fmadd_ps(qv, k1, s[r][1]);
    }
  }
  // Step 2: scale, mask padded keys, online softmax update; weights to p.
  const std::uint32_t valid_bits =
      valid_keys >= 32 ? 0xffffffffu : ((std::uint32_t{1} << valid_keys) - 1u);
  const __mmask16 valid0 = static_cast<__mmask16>(valid_bits & 0xffffu);
  const __mmask16 valid1 = static_cast<__mmask16>(valid_bits >> 16);
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512 sc = _mm512_set1_ps(scale);
  alignas(64) float p[kQueryTile][kKeyTile];
  alignas(64) float corr[kQueryTile];
  for (int r = 0; r < kQueryTile; ++r) {
    const __m512 t0 = _mm512_mask_mul_ps(neg_inf, valid0, s[r][0], sc);
    const __m512 t1 = _mm512_mask_mul_ps(neg_inf, valid1, s[r][1], sc);
    const float m_new = std::max(m[r], _mm512_reduce_max_ps(_mm512_max_ps(t0, t1)));
    const __m512 mv = _mm512_set1_ps(m_new);
    const __m512 p0 = exp16(_mm512_sub_ps(t0, mv));
    const __m512 p1 = exp16(_mm512_sub_ps(t1, mv));
    _mm512_store_ps(p[r], p0);
    _mm512_store_ps(p[r] + 16, p1);
    corr[r] = _mm512_cvtss_f32(exp16(_mm512_set1_ps(m[r] - m_new)));
    l[r] = l[r] * corr[r] + _mm512_reduce_add_ps(_mm512_add_ps(p0, p1));
    m[r] = m_new;
  }
  // Step 3: o = o·corr + p·v, 32 output channels at a time, then a 16-channel remainder.
  std::int64_t c = 0;
  for (; c + 32 <= dp; c += 32) {
    __m512 acc[kQueryTile][2];
    for (int r = 0; r < kQueryTile; ++r) {
      const __m512 cr = _mm512_set1_ps(corr[r]);
      acc[r][0] = _mm512_mul_ps(_mm512_loadu_ps(o + r * dp + c), cr);
      acc[r][1] = _mm512_mul_ps(_mm512_loadu_ps(o + r * dp + c + 16), cr);
    }
    for (int j = 0; j < valid_keys; ++j) {
      const __m512 v0 = _mm512_loadu_ps(vt + j * dp + c);
      const __m512 v1 = _mm512_loadu_ps(vt + j * dp + c + 16);
      for (int r = 0; r < kQueryTile; ++r) {
        const __m512 pv = _mm512_set1_ps(p[r][j]);
        acc[r][0] = _mm512_fmadd_ps(pv, v0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(pv, v1, acc[r][1]);
      }
    }
    for (int r = 0; r < kQueryTile; ++r) {
      _mm512_storeu_ps(o + r * dp + c, acc[r][0]);
      _mm512_storeu_ps(o + r * dp + c + 16, acc[r][1]);
    }
  }
  if (c < dp) {
    __m512 acc[kQueryTile];
    for (int r = 0; r < kQueryTile; ++r) {
      acc[r] = _mm512_mul_ps(_mm512_loadu_ps(o + r * dp + c), _mm512_set1_ps(corr[r]));
    }
    for (int j = 0; j < valid_keys; ++j) {
      const __m512 v0 = _mm512_loadu_ps(vt + j * dp + c);
      for (int r = 0; r < kQueryTile; ++r) {
        acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(p[r][j]), v0, acc[r]);
      }
    }
    for (int r = 0; r < kQueryTile; ++r) _mm512_storeu_ps(o + r * dp + c, acc[r]);
  }
}

}  // namespace h3p::kernels::cpu::attention_detail
