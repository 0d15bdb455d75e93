#pragma once
// The pass of plane_pass.h written once over a vector type T, included by one .cpp per ISA
// (plane_pass_scalar.cpp, plane_pass_avx2.cpp, plane_pass_avx512.cpp). T supplies fp32 lanes
// (load, store, set1, add, sub, mul, div, load_half) and, when it has >= 8 lanes, the addition
// of its lanes as doubles into eight lane accumulators (Acc), fused into the loops that make
// the values so that the long chains of dependent double additions overlap other work. Every
// fp32 expression below is the one of pixel_kernels.cpp, term by term; columns that do not fill a
// vector run the same code over ScalarLanes. Double sums follow kernels::error_sse and
// sum_to_double exactly: element i of a sum goes to accumulator i mod 8 (the last n mod 8 to a
// separate tail), in increasing i, and the accumulators are added as ((0+1)+(2+3))+((4+5)+(6+7)) +
// tail. Only raw pointers and intrinsics here (see plane_pass_kernel.h); everything has internal
// linkage.
#include <cstring>

#include "core/metrics/plane_pass_kernel.h"

namespace h3p::metrics::pass_kernel {
namespace {

// pshufb masks that gather channel c of 16 interleaved RGB pixels (48 bytes, three 16-byte
// loads) into 16 bytes: kRgbChannelMasks[c][j] picks from load j, 0x80 zeroes (OR-ed together).
struct RgbChannelMasks {
  alignas(16) std::uint8_t m[3][3][16];
  constexpr RgbChannelMasks() : m() {
    for (int c = 0; c < 3; ++c) {
      for (int j = 0; j < 3; ++j) {
        for (int i = 0; i < 16; ++i) {
          const int at = 3 * i + c;
          m[c][j][i] = static_cast<std::uint8_t>(at / 16 == j ? at % 16 : 0x80);
        }
      }
    }
  }
};
inline constexpr RgbChannelMasks kRgbChannelMasks{};

struct ScalarLanes {
  static constexpr int kLanes = 1;
  static constexpr bool kRgbChannel16 = false;  // no rgb_channel16()
  static constexpr unsigned kShiftTaps = 0;  // horizontal taps taken by shifting (tap())
  using V = float;
  template <int K>
  static V shift(V, V);  // never used (kShiftTaps == 0)
  static V load(const float* p) { return *p; }
  static void store(float* p, V v) { *p = v; }
  static V set1(float x) { return x; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  // a·b + c rounded once (correctly rounded: the same bits as the vector FMA instructions).
  static V fma(V a, V b, V c) { return __builtin_fmaf(a, b, c); }
  static V load_half(const std::uint16_t* p) {
    _Float16 h;
    std::memcpy(&h, p, sizeof h);
    return static_cast<float>(h);
  }
  struct Acc {};  // never used: single lanes go through lane_add
  static Acc acc_load(const double*) { return {}; }
  static void acc_store(const Acc&, double*) {}
  static void acc_add(Acc&, V) {}
};

// value / 255.0f for the integers 0 .. 255 held in fp32 lanes, without a division: the product
// with the rounded reciprocal, corrected once by its remainder (value - q·255, exact in an FMA).
// For these 256 values that gives the correctly rounded quotient, the bits of ByteScale's
// division (tests/core/metrics/test_plane_pass.cpp checks every one on every path).
template <class T>
typename T::V byte_quotient(typename T::V value) {
  const typename T::V divisor = T::set1(255.0f), reciprocal = T::set1(1.0f / 255.0f);
  const typename T::V q = T::mul(value, reciprocal);
  const typename T::V remainder = T::fma(T::sub(T::set1(0.0f), q), divisor, value);
  return T::fma(remainder, reciprocal, q);
}

// Eight double accumulators and a tail, as in kernels::error_sse.
struct LaneSum {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  double tail = 0;
  double total() const {
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
  }
};

// Adds v[x] for x in [0, n), one by one, as element base + x of a sum whose first `limit`
// elements go to the lane accumulators.
inline void lane_add_each(const float* v, int n, std::int64_t base, std::int64_t limit,
                          LaneSum& s) {
  for (int x = 0; x < n; ++x) {
    const std::int64_t pos = base + x;
    if (pos < limit) {
      s.acc[pos & 7] += static_cast<double>(v[x]);
    } else {
      s.tail += static_cast<double>(v[x]);
    }
  }
}

// The same over [0, n), with vectors where the positions are lane-aligned.
template <class T>
void lane_add(const float* v, int n, std::int64_t base, std::int64_t limit, LaneSum& s) {
  int x = 0;
  if constexpr (T::kLanes >= 8) {
    while (x < n && ((base + x) & 7) != 0) ++x;
    lane_add_each(v, x, base, limit, s);
    typename T::Acc acc = T::acc_load(s.acc);
    for (; x + T::kLanes <= n && base + x + T::kLanes <= limit; x += T::kLanes) {
      T::acc_add(acc, T::load(v + x));
    }
    T::acc_store(acc, s.acc);
  }
  lane_add_each(v + x, n - x, base + x, limit, s);
}

// Row y of one side, as the loops read it: fp16 or fp32 in place, or (8-bit RGB) converted
// into `scratch`.
struct Row {
  const void* data = nullptr;
  bool half = false;
};

// Channel `channel` of w interleaved RGB pixels as byte_scale[value] (value / 255.0f). T's
// rgb_channel16 converts 16 pixels at a time with the same float division, so the bits agree.
template <class T>
void rgb_channel_row(const std::uint8_t* rgb, int channel, int w, const float* byte_scale,
                     float* out) {
  int x = 0;
  if constexpr (T::kRgbChannel16) {
    for (; x + 16 <= w; x += 16) T::rgb_channel16(rgb + 3 * x, channel, out + x);
  }
  for (; x < w; ++x) out[x] = byte_scale[rgb[3 * x + channel]];
}

// Rows ahead of the one being converted that an 8-bit source asks the cache for.
constexpr int kPrefetchRows = 2;

// With `prefetch` (the sweep's first channel of row y), an 8-bit source also asks for row
// y + kPrefetchRows: the frames come fresh from the decoder, mostly from memory.
template <class T>
Row source_row(const Side& side, int y, int w, int h, bool prefetch, const float* byte_scale,
               float* scratch) {
  const std::size_t at = static_cast<std::size_t>(y) * w;
  if (side.source == kF32) return {static_cast<const float*>(side.data) + at, false};
  if (side.source == kF16) return {static_cast<const std::uint16_t*>(side.data) + at, true};
  const auto* rgb = static_cast<const std::uint8_t*>(side.data) + 3 * at;
  if (prefetch && y + kPrefetchRows < h) {
    const std::uint8_t* ahead = rgb + static_cast<std::size_t>(3 * kPrefetchRows) * w;
    for (int i = 0; i < 3 * w; i += 64) __builtin_prefetch(ahead + i);
  }
  rgb_channel_row<T>(rgb, side.channel, w, byte_scale, scratch);
  return {scratch, false};
}

template <class T>
typename T::V load_row(const Row& row, int x) {
  return row.half ? T::load_half(static_cast<const std::uint16_t*>(row.data) + x)
                  : T::load(static_cast<const float*>(row.data) + x);
}

// Where one input row goes: a, b, a·a + b·b, a·b (ring rows); the squared errors either into
// the lane accumulators (fused: lane-aligned columns) or into e2 / t2.
struct RowOut {
  float *a, *b, *squares, *cross, *e2, *t2;
};

// One input row over [x0, x1) (second_moments and error_sse): e = a - b, e2 = e², and with the
// previous frame's rows t2 = (e - (pa - pb))².
template <class T, bool kFused>
void produce_columns(const Row& ra, const Row& rb, const Row* rpa, const Row* rpb, const RowOut& o,
                     typename T::Acc& sse, typename T::Acc& tsse, int x0, int x1) {
  using V = typename T::V;
  for (int x = x0; x < x1; x += T::kLanes) {
    const V va = load_row<T>(ra, x), vb = load_row<T>(rb, x);
    T::store(o.a + x, va);
    T::store(o.b + x, vb);
    T::store(o.squares + x, T::fma(va, va, T::mul(vb, vb)));
    T::store(o.cross + x, T::mul(va, vb));
    const V e = T::sub(va, vb);
    const V ee = T::mul(e, e);
    if constexpr (kFused) {
      T::acc_add(sse, ee);
    } else {
      T::store(o.e2 + x, ee);
    }
    if (rpa != nullptr) {
      const V d = T::sub(e, T::sub(load_row<T>(*rpa, x), load_row<T>(*rpb, x)));
      const V dd = T::mul(d, d);
      if constexpr (kFused) {
        T::acc_add(tsse, dd);
      } else {
        T::store(o.t2 + x, dd);
      }
    }
  }
}

// out[j][x] = the symmetric 11-tap sum of rows[j .. j + 10] at x, for j < R (gaussian_vertical).
template <class T, int R>
void vertical(const float* const* rows, const float* w, float* const* out, int x0, int x1) {
  using V = typename T::V;
  const V w0 = T::set1(w[0]), w1 = T::set1(w[1]), w2 = T::set1(w[2]), w3 = T::set1(w[3]),
          w4 = T::set1(w[4]), w5 = T::set1(w[5]);
  for (int x = x0; x < x1; x += T::kLanes) {
    V r[R + 10];
#pragma GCC unroll 16
    for (int k = 0; k < R + 10; ++k) r[k] = T::load(rows[k] + x);
#pragma GCC unroll 4
    for (int j = 0; j < R; ++j) {
      const V* p = r + j;
      V s = T::mul(w5, p[5]);
      s = T::fma(w0, T::add(p[0], p[10]), s);
      s = T::fma(w1, T::add(p[1], p[9]), s);
      s = T::fma(w2, T::add(p[2], p[8]), s);
      s = T::fma(w3, T::add(p[3], p[7]), s);
      s = T::fma(w4, T::add(p[4], p[6]), s);
      T::store(out[j] + x, s);
    }
  }
}

// Tap k of the horizontal sum at p: in[p + k], loaded, or (taps in T::kShiftTaps, p
// vector-aligned) taken from the aligned vectors lo = in[p ..] and hi = in[p + kLanes ..],
// which trades a load that splits a cache line for one shuffle.
template <class T, int K>
typename T::V tap(const float* p, const typename T::V& lo, const typename T::V& hi) {
  if constexpr (K == 0) {
    return lo;
  } else if constexpr (((T::kShiftTaps >> K) & 1) != 0) {
    return T::template shift<K>(lo, hi);
  } else {
    return T::load(p + K);
  }
}

// The symmetric 11-tap sum of in[0 .. 10] (gaussian_horizontal).
template <class T>
typename T::V horizontal_at(const float* p, const typename T::V* w) {
  using V = typename T::V;
  const V lo = T::load(p);
  const V hi = T::kShiftTaps != 0 ? T::load(p + T::kLanes) : lo;
  V s = T::mul(w[5], tap<T, 5>(p, lo, hi));
  s = T::fma(w[0], T::add(lo, tap<T, 10>(p, lo, hi)), s);
  s = T::fma(w[1], T::add(tap<T, 1>(p, lo, hi), tap<T, 9>(p, lo, hi)), s);
  s = T::fma(w[2], T::add(tap<T, 2>(p, lo, hi), tap<T, 8>(p, lo, hi)), s);
  s = T::fma(w[3], T::add(tap<T, 3>(p, lo, hi), tap<T, 7>(p, lo, hi)), s);
  return T::fma(w[4], T::add(tap<T, 4>(p, lo, hi), tap<T, 6>(p, lo, hi)), s);
}

// SSIM values of one output row over [x0, x1) from the vertically filtered rows (ssim_row):
// into the lane accumulator (fused) or into out.
template <class T, bool kFused>
void horizontal_ssim(const float* const* v, const float* weights, float c1, float c2, float* out,
                     typename T::Acc& acc, int x0, int x1) {
  using V = typename T::V;
  V w[6];
  for (int k = 0; k < 6; ++k) w[k] = T::set1(weights[k]);
  const V vc1 = T::set1(c1), vc2 = T::set1(c2), two = T::set1(2.0f);
  for (int x = x0; x < x1; x += T::kLanes) {
    const V ma = horizontal_at<T>(v[0] + x, w);
    const V mb = horizontal_at<T>(v[1] + x, w);
    const V e_squares = horizontal_at<T>(v[2] + x, w);
    const V e_cross = horizontal_at<T>(v[3] + x, w);
    const V mab = T::mul(ma, mb);
    const V msq = T::fma(ma, ma, T::mul(mb, mb));
    const V num = T::mul(T::fma(two, mab, vc1), T::fma(two, T::sub(e_cross, mab), vc2));
    const V den = T::mul(T::add(msq, vc1), T::add(T::sub(e_squares, msq), vc2));
    const V value = T::div(num, den);
    if constexpr (kFused) {
      T::acc_add(acc, value);
    } else {
      T::store(out + x, value);
    }
  }
}

// Every channel of `args` in one sweep: the rows of all channels are produced together (row y
// of each source is read for one channel while the others' are still in the L1 cache), each
// channel with its own ring and sums, so each channel's figures are those of a pass of its own.
template <class T>
void run_pass(const Args& args, Out* out) {
  using S = ScalarLanes;
  const int w = args.width, h = args.height, channels = args.channels;
  const std::size_t stride = (static_cast<std::size_t>(w) + 15) / 16 * 16;
  float* rings = args.buffer;  // [channel][q][kRing][stride]
  float* filtered = rings + static_cast<std::size_t>(channels) * kQuantities * kRing * stride;
  float* bytes = filtered + kBlock * kQuantities * kChunkStride;  // 8-bit sources as fp32
  float* e2 = bytes + kByteRows * stride;
  float* t2 = e2 + stride;
  float* values = t2 + stride;
  auto ring_row = [&](int c, int q, int row) {
    return rings + ((c * kQuantities + q) * kRing + (row & (kRing - 1))) * stride;
  };
  const bool temporal = args.temporal;
  const std::int64_t n = static_cast<std::int64_t>(w) * h;
  const std::int64_t limit = n - n % 8;
  // Vectors may add into the accumulators directly when every row starts on lane 0.
  const bool fused_rows = T::kLanes >= 8 && w % 8 == 0;
  const int w_main = w - w % T::kLanes;
  LaneSum sse[kMaxChannels], tsse[kMaxChannels];
  double total[kMaxChannels] = {};
  S::Acc none;

  // One input row of channel c into its ring, with its error terms.
  auto produce = [&](int c, int row) {
    const bool first = c == 0;  // prefetches the rows ahead for the sweep's other channels
    const Row ra = source_row<T>(args.a[c], row, w, h, first, args.byte_scale, bytes);
    const Row rb = source_row<T>(args.b[c], row, w, h, first, args.byte_scale, bytes + stride);
    Row rpa, rpb;
    if (temporal) {
      rpa = source_row<T>(args.prev_a[c], row, w, h, first, args.byte_scale, bytes + 2 * stride);
      rpb = source_row<T>(args.prev_b[c], row, w, h, first, args.byte_scale, bytes + 3 * stride);
    }
    const Row* pa = temporal ? &rpa : nullptr;
    const Row* pb = temporal ? &rpb : nullptr;
    const RowOut o{ring_row(c, 0, row), ring_row(c, 1, row), ring_row(c, 2, row),
                   ring_row(c, 3, row), e2, t2};
    const std::int64_t base = static_cast<std::int64_t>(row) * w;
    if (fused_rows) {
      typename T::Acc acc = T::acc_load(sse[c].acc), tacc = T::acc_load(tsse[c].acc);
      produce_columns<T, true>(ra, rb, pa, pb, o, acc, tacc, 0, w_main);
      T::acc_store(acc, sse[c].acc);
      if (temporal) T::acc_store(tacc, tsse[c].acc);
      produce_columns<S, false>(ra, rb, pa, pb, o, none, none, w_main, w);
      lane_add_each(e2 + w_main, w - w_main, base + w_main, limit, sse[c]);
      if (temporal) lane_add_each(t2 + w_main, w - w_main, base + w_main, limit, tsse[c]);
    } else {
      typename T::Acc unused{};
      produce_columns<T, false>(ra, rb, pa, pb, o, unused, unused, 0, w_main);
      produce_columns<S, false>(ra, rb, pa, pb, o, none, none, w_main, w);
      lane_add<T>(e2, w, base, limit, sse[c]);
      if (temporal) lane_add<T>(t2, w, base, limit, tsse[c]);
    }
  };

  const int out_w = w - 10, out_h = h - 10;
  const int out_main = out_w - out_w % T::kLanes;
  const int out_limit = out_w - out_w % 8;
  const float c1 = 0.01f * 0.01f, c2 = 0.03f * 0.03f;
  int produced = 0;
  for (int y0 = 0; y0 < out_h; y0 += kBlock) {
    const int rows_here = out_h - y0 < kBlock ? out_h - y0 : kBlock;
    for (; produced < y0 + rows_here + 10; ++produced) {
      for (int c = 0; c < channels; ++c) produce(c, produced);
    }
    for (int c = 0; c < channels; ++c) {
      // Column chunks: the vertical pass of the four quantities for rows_here output rows
      // (into `filtered`, small enough for L1), then the horizontal pass and SSIM of those
      // columns. Each output row is its own lane-aligned sum, continued chunk by chunk left to
      // right.
      LaneSum row_sums[kBlock];
      for (int x0 = 0; x0 < out_w; x0 += kChunk) {
        const int out_end = x0 + kChunk < out_w ? x0 + kChunk : out_w;
        // Vertical columns [x0, v_end) as vectors (whole ones, inside the row), then the
        // row's last columns singly when this chunk reaches them.
        const int v_want = out_end + 10;
        int v_end = x0 + (v_want - x0 + T::kLanes - 1) / T::kLanes * T::kLanes;
        if (v_end > w_main) v_end = w_main;
        const bool v_tail = v_want > w_main;
        for (int q = 0; q < kQuantities; ++q) {
          const float* in[kBlock + 10];
          for (int k = 0; k < rows_here + 10; ++k) in[k] = ring_row(c, q, y0 + k) + x0;
          float* dst[kBlock];
          for (int j = 0; j < rows_here; ++j)
            dst[j] = filtered + (j * kQuantities + q) * kChunkStride;
          if (rows_here == kBlock) {
            vertical<T, kBlock>(in, args.weights, dst, 0, v_end - x0);
            if (v_tail) vertical<S, kBlock>(in, args.weights, dst, w_main - x0, w - x0);
          } else {
            for (int j = 0; j < rows_here; ++j) {
              vertical<T, 1>(in + j, args.weights, dst + j, 0, v_end - x0);
              if (v_tail) vertical<S, 1>(in + j, args.weights, dst + j, w_main - x0, w - x0);
            }
          }
        }
        const int h_main = out_end < out_main ? out_end : out_main;
        for (int j = 0; j < rows_here; ++j) {
          const float* v[kQuantities];
          for (int q = 0; q < kQuantities; ++q)
            v[q] = filtered + (j * kQuantities + q) * kChunkStride;
          LaneSum& row = row_sums[j];
          if constexpr (T::kLanes >= 8) {
            typename T::Acc acc = T::acc_load(row.acc);
            horizontal_ssim<T, true>(v, args.weights, c1, c2, values, acc, 0, h_main - x0);
            T::acc_store(acc, row.acc);
            if (out_end > h_main) {
              horizontal_ssim<S, false>(v, args.weights, c1, c2, values, none, h_main - x0,
                                        out_end - x0);
              lane_add_each(values + (h_main - x0), out_end - h_main, h_main, out_limit, row);
            }
          } else {
            horizontal_ssim<T, false>(v, args.weights, c1, c2, values, none, 0, out_end - x0);
            lane_add<T>(values, out_end - x0, x0, out_limit, row);
          }
        }
      }
      for (int j = 0; j < rows_here; ++j) total[c] += row_sums[j].total();
    }
  }
  for (int c = 0; c < channels; ++c) {
    out[c].sse = sse[c].total();
    out[c].temporal_sse = temporal ? tsse[c].total() : 0.0;
    out[c].ssim = total[c] / (static_cast<double>(out_w) * out_h);
  }
}

}  // namespace
}  // namespace h3p::metrics::pass_kernel
