// The AVX-512 path of plane_pass.h: plane_pass_impl.h over 16 fp32 lanes (compiled with
// -mavx512f -mavx512bw -mavx512vl -mfma; FMA only where plane_pass_impl.h asks for it, which
// rounds once like the portable path's fmaf).
// GCC 12 reports the deliberately undefined upper halves inside its own AVX-512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "core/metrics/plane_pass_impl.h"

namespace h3p::metrics::pass_kernel {
namespace {

struct Avx512Lanes {
  static constexpr int kLanes = 16;
  // Horizontal taps 6 .. 9 by shuffling (plane_pass_impl.h tap()): the unaligned loads of
  // taps 1 .. 10 all split a cache line, but shuffles share ports 0 and 5 with the arithmetic;
  // of the sets measured, taps 6 .. 9 were fastest (all ten: 8 % slower than none).
  static constexpr unsigned kShiftTaps = 0x3c0;
  using V = __m512;
  // Lanes K .. 15 of lo followed by lanes 0 .. K - 1 of hi.
  template <int K>
  static V shift(V lo, V hi) {
    return _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), K));
  }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V load_half(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static constexpr bool kRgbChannel16 = true;
  // Channel c of the 16 interleaved RGB pixels at p (48 bytes) as value / 255.0f into out[0..15]
  // (byte_quotient: the bits of ByteScale's division).
  static void rgb_channel16(const std::uint8_t* p, int c, float* out) {
    const auto* m = kRgbChannelMasks.m[c];
    __m128i bytes = _mm_setzero_si128();
    for (int j = 0; j < 3; ++j) {
      const __m128i in = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * j));
      bytes = _mm_or_si128(bytes, _mm_shuffle_epi8(in, _mm_load_si128(
                                                           reinterpret_cast<const __m128i*>(m[j]))));
    }
    const __m512 values = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
    _mm512_storeu_ps(out, byte_quotient<Avx512Lanes>(values));
  }
  using Acc = __m512d;
  static Acc acc_load(const double* a) { return _mm512_loadu_pd(a); }
  static void acc_store(const Acc& acc, double* a) { _mm512_storeu_pd(a, acc); }
  // Lanes j and 8 + j of v, in that order, into accumulator j.
  static void acc_add(Acc& acc, V v) {
    const __m256 lo = _mm512_castps512_ps256(v);
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(lo));
    acc = _mm512_add_pd(acc, _mm512_cvtps_pd(hi));
  }
};

}  // namespace

void run_avx512(const Args& args, Out* out) { run_pass<Avx512Lanes>(args, out); }

}  // namespace h3p::metrics::pass_kernel
