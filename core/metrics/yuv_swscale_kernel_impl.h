#pragma once
// Private to yuv_swscale_kernel_*.cpp: the loops of the libswscale-exact conversion (AVX2
// intrinsics where built with AVX2; integer arithmetic only, so every ISA gives the same bytes).
// Per full-resolution row: luma through libswscale's rgb24ToY (14-bit), its unscaled
// horizontal and vertical steps ((2·y14 + 64) >> 7 = (y14 + 32) >> 6); chroma through
// rgb24ToUV_half (pairs of pixels summed, 14-bit, doubled by the unscaled horizontal step)
// into a ring of rows; then per chroma output row the vertical bicubic filter, in the
// arithmetic libswscale's x86 build uses for that row.
#include <cstddef>
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/metrics/yuv_swscale_kernel.h"

namespace h3p::metrics::yuv_kernel {
namespace {

// Local (internal linkage): a library template here could be shared with other ISAs' copies.
// The coefficients as the vector loops use them: (r, g) word pairs for pmaddwd, then b, and
// the rounding terms of luma and chroma.
constexpr int kYRg = (kGy << 16) | kRy, kURg = (kGu * 65536) | (kRu & 0xffff),
              kVRg = (kGv * 65536) | (kRv & 0xffff), kVB = kBv & 0xffff;
constexpr int kYRound = (32 << (kShift - 1)) + (1 << (kShift - 7));
constexpr int kCRound = (256 << kShift) + (1 << (kShift - 6));

inline std::uint8_t clamp_u8(int v) {
  return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

inline void luma_row(const std::uint8_t* __restrict p, std::uint8_t* __restrict y, int from,
                     int width) {
  for (int x = from; x < width; ++x) {
    const int r = p[3 * x], g = p[3 * x + 1], b = p[3 * x + 2];
    const int y14 =
        (kRy * r + kGy * g + kBy * b + (32 << (kShift - 1)) + (1 << (kShift - 7))) >> (kShift - 6);
    y[x] = static_cast<std::uint8_t>((y14 + 32) >> 6);
  }
}

inline std::int16_t chroma15(int cr, int cg, int cb, int r, int g, int b) {
  const int c14 =
      (cr * r + cg * g + cb * b + (256 << kShift) + (1 << (kShift - 6))) >> (kShift - 5);
  return static_cast<std::int16_t>(2 * c14);
}

// Chroma of one full-resolution row: pairs (2i, 2i + 1); `next` is the pixel after the row.
inline void chroma_row(const std::uint8_t* __restrict p, const std::uint8_t* next, int from,
                       int width, std::int16_t* __restrict u, std::int16_t* __restrict v) {
  const int pairs = width / 2;
  for (int i = from / 2; i < pairs; ++i) {
    const int r = p[6 * i] + p[6 * i + 3], g = p[6 * i + 1] + p[6 * i + 4],
              b = p[6 * i + 2] + p[6 * i + 5];
    u[i] = chroma15(kRu, kGu, kBu, r, g, b);
    v[i] = chroma15(kRv, kGv, kBv, r, g, b);
  }
  if (width & 1) {
    const std::uint8_t* q = p + 6 * pairs;
    const int r = q[0] + next[0], g = q[1] + next[1], b = q[2] + next[2];
    u[pairs] = chroma15(kRu, kGu, kBu, r, g, b);
    v[pairs] = chroma15(kRv, kGv, kBv, r, g, b);
  }
}

#if defined(__AVX512BW__)
// Luma and half-width chroma of pixels [x, x + 32) per step with AVX-512BW, the same integer
// arithmetic as luma_row / chroma_row (chroma from the pairs' summed components); reads only
// the row's own bytes (masked loads). Returns the first pixel left to rows_avx2.
inline int rows_avx512(const std::uint8_t* p, int width, std::uint8_t* y, std::int16_t* u,
                       std::int16_t* v) {
  // 16 pixels (48 bytes) per vector, 4 per 128-bit lane: lane k gets dwords 3k .. 3k + 2.
  const __m512i spread = _mm512_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0);
  // Per 128-bit lane of 4 pixels: (r, g) word pairs and (b, 0) word pairs.
  const __m512i take_rg = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, -1, 1, -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1));
  const __m512i take_b = _mm512_broadcast_i32x4(
      _mm_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1));
  const __m512i y_rg = _mm512_set1_epi32(kYRg), y_b = _mm512_set1_epi32(kBy);
  const __m512i u_rg = _mm512_set1_epi32(kURg), u_b = _mm512_set1_epi32(kBu);
  const __m512i v_rg = _mm512_set1_epi32(kVRg), v_b = _mm512_set1_epi32(kVB);
  const __m512i y_round = _mm512_set1_epi32(kYRound), c_round = _mm512_set1_epi32(kCRound);
  const __m512i y_half = _mm512_set1_epi32(32);
  // Luma bytes: lane k of the packed vector holds pixels 4k .. 4k + 3 in dword 0 and
  // 16 + 4k .. 16 + 4k + 3 in dword 1.
  const __m512i y_order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  // Pair sums sit in the even dwords of the two vectors.
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28,
                                          30);
  // Packed U and V words: lane k holds U pairs 4k .. 4k + 3, then V pairs.
  const __m512i uv_order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  int x = 0;
  for (; x + 32 <= width; x += 32) {
    const std::uint8_t* q = p + 3 * static_cast<std::size_t>(x);
    __m512i dy[2], prg[2], pb[2];
    for (int g = 0; g < 2; ++g) {  // pixels x + 16g .. x + 16g + 15
      const __m512i in = _mm512_permutexvar_epi32(
          spread, _mm512_maskz_loadu_epi32(0x0fff, q + 48 * g));
      const __m512i rg = _mm512_shuffle_epi8(in, take_rg), b = _mm512_shuffle_epi8(in, take_b);
      dy[g] = _mm512_add_epi32(_mm512_madd_epi16(rg, y_rg), _mm512_madd_epi16(b, y_b));
      dy[g] = _mm512_srai_epi32(
          _mm512_add_epi32(_mm512_srai_epi32(_mm512_add_epi32(dy[g], y_round), kShift - 6), y_half),
          6);
      // Pairs' sums of (r, g) and (b, 0) words (at most 510) in the even dwords.
      prg[g] = _mm512_add_epi16(rg, _mm512_srli_epi64(rg, 32));
      pb[g] = _mm512_add_epi16(b, _mm512_srli_epi64(b, 32));
    }
    const __m512i rg2 = _mm512_permutex2var_epi32(prg[0], evens, prg[1]);
    const __m512i b2 = _mm512_permutex2var_epi32(pb[0], evens, pb[1]);
    // Luma: 32 bytes in pixel order.
    const __m512i y16 = _mm512_packs_epi32(dy[0], dy[1]);
    const __m512i y8 = _mm512_permutexvar_epi32(y_order, _mm512_packus_epi16(y16, y16));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + x), _mm512_castsi512_si256(y8));
    // Chroma: 16 pairs of each in order.
    __m512i su = _mm512_add_epi32(_mm512_madd_epi16(rg2, u_rg), _mm512_madd_epi16(b2, u_b));
    __m512i sv = _mm512_add_epi32(_mm512_madd_epi16(rg2, v_rg), _mm512_madd_epi16(b2, v_b));
    su = _mm512_slli_epi32(_mm512_srai_epi32(_mm512_add_epi32(su, c_round), kShift - 5), 1);
    sv = _mm512_slli_epi32(_mm512_srai_epi32(_mm512_add_epi32(sv, c_round), kShift - 5), 1);
    const __m512i uv = _mm512_permutexvar_epi64(uv_order, _mm512_packs_epi32(su, sv));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + x / 2), _mm512_castsi512_si256(uv));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + x / 2), _mm512_extracti64x4_epi64(uv, 1));
  }
  return x;
}
#endif

#if defined(__AVX2__)
// Luma and half-width chroma of pixels [x, x + 16) per step with AVX2 from pixel `from`
// (even), the same integer arithmetic as luma_row / chroma_row; reads 52 bytes from p + 3x.
// Returns the first pixel left to the scalar loops.
inline int rows_avx2(const std::uint8_t* p, std::size_t readable, int from, int width,
                     std::uint8_t* y, std::int16_t* u, std::int16_t* v) {
  // Per 128-bit lane of 4 pixels: (r, g) word pairs and (b, 0) word pairs.
  const __m256i take_rg = _mm256_setr_epi8(0, -1, 1, -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1,
                                           0, -1, 1, -1, 3, -1, 4, -1, 6, -1, 7, -1, 9, -1, 10, -1);
  const __m256i take_b =
      _mm256_setr_epi8(2, -1, -1, -1, 5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1, 2, -1, -1, -1,
                       5, -1, -1, -1, 8, -1, -1, -1, 11, -1, -1, -1);
  const __m256i y_rg = _mm256_set1_epi32(kYRg), y_b = _mm256_set1_epi32(kBy);
  const __m256i u_rg = _mm256_set1_epi32(kURg), u_b = _mm256_set1_epi32(kBu);
  const __m256i v_rg = _mm256_set1_epi32(kVRg), v_b = _mm256_set1_epi32(kVB);
  const __m256i y_round = _mm256_set1_epi32(kYRound), c_round = _mm256_set1_epi32(kCRound);
  const __m256i y_half = _mm256_set1_epi32(32);
  const __m256i pair_order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
  int x = from;
  for (; x + 16 <= width && 3 * static_cast<std::size_t>(x) + 52 <= readable; x += 16) {
    const std::uint8_t* q = p + 3 * static_cast<std::size_t>(x);
    __m256i dy[2], du[2], dv[2];
    for (int g = 0; g < 2; ++g) {  // pixels x + 8g .. x + 8g + 7
      const __m256i in = _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 24 * g))),
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 24 * g + 12)), 1);
      const __m256i rg = _mm256_shuffle_epi8(in, take_rg), b = _mm256_shuffle_epi8(in, take_b);
      dy[g] = _mm256_add_epi32(_mm256_madd_epi16(rg, y_rg), _mm256_madd_epi16(b, y_b));
      du[g] = _mm256_add_epi32(_mm256_madd_epi16(rg, u_rg), _mm256_madd_epi16(b, u_b));
      dv[g] = _mm256_add_epi32(_mm256_madd_epi16(rg, v_rg), _mm256_madd_epi16(b, v_b));
      dy[g] = _mm256_srai_epi32(
          _mm256_add_epi32(_mm256_srai_epi32(_mm256_add_epi32(dy[g], y_round), kShift - 6), y_half),
          6);
    }
    // Luma: 16 bytes in pixel order.
    __m256i y16 =
        _mm256_permute4x64_epi64(_mm256_packs_epi32(dy[0], dy[1]), _MM_SHUFFLE(3, 1, 2, 0));
    __m256i y8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(y16, y16), _MM_SHUFFLE(3, 1, 2, 0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + x), _mm256_castsi256_si128(y8));
    // Chroma: adjacent pixels' dot products summed, 8 pairs in order.
    for (int c = 0; c < 2; ++c) {
      const __m256i* d = c == 0 ? du : dv;
      __m256i sum = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(d[0], d[1]), pair_order);
      sum = _mm256_slli_epi32(_mm256_srai_epi32(_mm256_add_epi32(sum, c_round), kShift - 5), 1);
      const __m256i w16 =
          _mm256_permute4x64_epi64(_mm256_packs_epi32(sum, sum), _MM_SHUFFLE(3, 1, 2, 0));
      _mm_storeu_si128(reinterpret_cast<__m128i*>((c == 0 ? u : v) + x / 2),
                       _mm256_castsi256_si128(w16));
    }
  }
  return x;
}
#endif

// Rows between the one converted and the one prefetched.
constexpr int kAhead = 2;

// Output columns filtered together (the accumulators stay in registers / L1).
constexpr int kBlock = 64;

// libswscale's x86 vertical filter: 16-bit sums of (s·c) >> 16 (pmulhw), rounded by the flat
// dither: start (64 + 8·(taps - 1)) >> 4, result >> 3.
inline void vertical_simd(const std::int16_t* const* rows, const std::int16_t* coef, int taps,
                          std::uint8_t* __restrict out, int n) {
  const std::int16_t start = static_cast<std::int16_t>((64 + 8 * (taps - 1)) >> 4);
  int x0 = 0;
#if defined(__AVX512BW__)
  const __m512i qword_order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  for (; x0 + 64 <= n; x0 += 64) {
    __m512i acc0 = _mm512_set1_epi16(start), acc1 = acc0;
    for (int j = 0; j < taps; ++j) {
      const __m512i c = _mm512_set1_epi16(coef[j]);
      const std::int16_t* row = rows[j] + x0;
      acc0 = _mm512_add_epi16(acc0, _mm512_mulhi_epi16(_mm512_loadu_si512(row), c));
      acc1 = _mm512_add_epi16(acc1, _mm512_mulhi_epi16(_mm512_loadu_si512(row + 32), c));
    }
    const __m512i bytes =
        _mm512_packus_epi16(_mm512_srai_epi16(acc0, 3), _mm512_srai_epi16(acc1, 3));
    _mm512_storeu_si512(out + x0, _mm512_permutexvar_epi64(qword_order, bytes));
  }
#endif
#if defined(__AVX2__)
  for (; x0 + 32 <= n; x0 += 32) {
    __m256i acc0 = _mm256_set1_epi16(start), acc1 = acc0;
    for (int j = 0; j < taps; ++j) {
      const __m256i c = _mm256_set1_epi16(coef[j]);
      const std::int16_t* row = rows[j] + x0;
      acc0 = _mm256_add_epi16(
          acc0, _mm256_mulhi_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)), c));
      acc1 = _mm256_add_epi16(
          acc1,
          _mm256_mulhi_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 16)), c));
    }
    const __m256i bytes =
        _mm256_packus_epi16(_mm256_srai_epi16(acc0, 3), _mm256_srai_epi16(acc1, 3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x0),
                        _mm256_permute4x64_epi64(bytes, _MM_SHUFFLE(3, 1, 2, 0)));
  }
#endif
  for (; x0 < n; x0 += kBlock) {
    const int m = n - x0 < kBlock ? n - x0 : kBlock;
    std::int16_t acc[kBlock];
    for (int x = 0; x < kBlock; ++x) acc[x] = start;
    for (int j = 0; j < taps; ++j) {
      const std::int16_t* __restrict row = rows[j] + x0;
      const int c = coef[j];
      for (int x = 0; x < m; ++x) {
        acc[x] = static_cast<std::int16_t>(acc[x] + static_cast<std::int16_t>((row[x] * c) >> 16));
      }
    }
    for (int x = 0; x < m; ++x) out[x0 + x] = clamp_u8(acc[x] >> 3);
  }
}

// libswscale's C vertical filter (its x86 build uses it for the last output rows): 32-bit
// sums, rounded by 64 << 12, result >> 19.
inline void vertical_exact(const std::int16_t* const* rows, const std::int16_t* coef, int taps,
                           std::uint8_t* __restrict out, int n) {
  for (int x0 = 0; x0 < n; x0 += kBlock) {
    const int m = n - x0 < kBlock ? n - x0 : kBlock;
    int acc[kBlock];
    for (int x = 0; x < kBlock; ++x) acc[x] = 64 << 12;
    for (int j = 0; j < taps; ++j) {
      const std::int16_t* __restrict row = rows[j] + x0;
      const int c = coef[j];
      for (int x = 0; x < m; ++x) acc[x] += row[x] * c;
    }
    for (int x = 0; x < m; ++x) out[x0 + x] = clamp_u8(acc[x] >> 19);
  }
}

inline void convert(const Args& a) {
  const int w = a.width, h = a.height, cw = (w + 1) / 2, ch = (h + 1) / 2;
  const std::size_t row_bytes = 3 * static_cast<std::size_t>(w);
  std::int16_t* ring_u = a.ring;
  std::int16_t* ring_v = a.ring + static_cast<std::size_t>(a.taps) * cw;
  int done = 0;  // full-resolution rows converted so far
  const std::int16_t* rows_u[64];
  const std::int16_t* rows_v[64];
  for (int oy = 0; oy < ch; ++oy) {
    const int first = a.pos[oy], last = first + a.taps;  // input rows [first, last)
    // 1. Luma and half-width chroma of the rows this output row needs.
    for (; done < last; ++done) {
      const std::uint8_t* p = a.rgb + static_cast<std::size_t>(done) * row_bytes;
      std::uint8_t* y = a.y + static_cast<std::size_t>(done) * w;
      const std::uint8_t* next = done + 1 < h ? p + row_bytes : a.tail;
      const std::size_t slot = static_cast<std::size_t>(done % a.taps) * cw;
      int from = 0;
#if defined(__AVX2__)
      if (done + kAhead < h) {  // the frame is usually not in the cache: fetch a row ahead
        const std::uint8_t* ahead = p + kAhead * row_bytes;
        for (std::size_t o = 0; o < row_bytes; o += 64)
          _mm_prefetch(reinterpret_cast<const char*>(ahead + o), _MM_HINT_T0);
      }
#if defined(__AVX512BW__)
      from = rows_avx512(p, w, y, ring_u + slot, ring_v + slot);
#endif
      from = rows_avx2(p, (h - done) * row_bytes, from, w, y, ring_u + slot, ring_v + slot);
#endif
      luma_row(p, y, from, w);
      chroma_row(p, next, from, w, ring_u + slot, ring_v + slot);
    }
    // 2. The vertical filter.
    for (int j = 0; j < a.taps; ++j) {
      const std::size_t slot = static_cast<std::size_t>((first + j) % a.taps) * cw;
      rows_u[j] = ring_u + slot;
      rows_v[j] = ring_v + slot;
    }
    const std::int16_t* coef = a.coef + static_cast<std::size_t>(oy) * a.taps;
    std::uint8_t* out_u = a.u + static_cast<std::size_t>(oy) * cw;
    std::uint8_t* out_v = a.v + static_cast<std::size_t>(oy) * cw;
    if (a.taps == 1) {  // unscaled (a single row): yuv2plane1
      for (int x = 0; x < cw; ++x) {
        out_u[x] = clamp_u8((rows_u[0][x] + 64) >> 7);
        out_v[x] = clamp_u8((rows_v[0][x] + 64) >> 7);
      }
    } else if (oy < a.exact_from) {
      vertical_simd(rows_u, coef, a.taps, out_u, cw);
      vertical_simd(rows_v, coef, a.taps, out_v, cw);
    } else {
      vertical_exact(rows_u, coef, a.taps, out_u, cw);
      vertical_exact(rows_v, coef, a.taps, out_v, cw);
    }
  }
  // 3. Luma rows no chroma row needed.
  for (; done < h; ++done) {
    luma_row(a.rgb + static_cast<std::size_t>(done) * row_bytes,
             a.y + static_cast<std::size_t>(done) * w, 0, w);
  }
}

}  // namespace
}  // namespace h3p::metrics::yuv_kernel
