// The AVX2 path of plane_pass.h: plane_pass_impl.h over 8 fp32 lanes (compiled with -mavx2
// -mf16c -mfma; FMA only where plane_pass_impl.h asks for it, which rounds once like the
// portable path's fmaf).
#include <immintrin.h>

#include "core/metrics/plane_pass_impl.h"

namespace h3p::metrics::pass_kernel {
namespace {

struct Avx2Lanes {
  static constexpr int kLanes = 8;
  static constexpr unsigned kShiftTaps = 0;
  using V = __m256;
  template <int K>
  static V shift(V, V);
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V load_half(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static constexpr bool kRgbChannel16 = true;
  // Channel c of the 16 interleaved RGB pixels at p (48 bytes) as value / 255.0f into out[0..15]
  // (the division rounds like ByteScale's, so the bits agree with the table).
  static void rgb_channel16(const std::uint8_t* p, int c, float* out) {
    const auto* m = kRgbChannelMasks.m[c];
    __m128i bytes = _mm_setzero_si128();
    for (int j = 0; j < 3; ++j) {
      const __m128i in = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * j));
      bytes = _mm_or_si128(bytes, _mm_shuffle_epi8(in, _mm_load_si128(
                                                           reinterpret_cast<const __m128i*>(m[j]))));
    }
    const __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
    const __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8)));
    _mm256_storeu_ps(out, byte_quotient<Avx2Lanes>(lo));
    _mm256_storeu_ps(out + 8, byte_quotient<Avx2Lanes>(hi));
  }
  // Accumulators 0-3 and 4-7.
  struct Acc {
    __m256d lo, hi;
  };
  static Acc acc_load(const double* a) { return {_mm256_loadu_pd(a), _mm256_loadu_pd(a + 4)}; }
  static void acc_store(const Acc& acc, double* a) {
    _mm256_storeu_pd(a, acc.lo);
    _mm256_storeu_pd(a + 4, acc.hi);
  }
  // Lane j of v into accumulator j.
  static void acc_add(Acc& acc, V v) {
    acc.lo = _mm256_add_pd(acc.lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    acc.hi = _mm256_add_pd(acc.hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
};

}  // namespace

void run_avx2(const Args& args, Out* out) { run_pass<Avx2Lanes>(args, out); }

}  // namespace h3p::metrics::pass_kernel
