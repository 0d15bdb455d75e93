// attention: out = softmax(q·kᵀ·scale)·v per head over (s, h, d) tensors, no mask.
// Algorithm (flash-attention style, CPU): keys and values of every head are packed once per call
// into fp32 key tiles of 32 ([d][32], for the score microkernel) and value rows padded to a
// multiple of 16 channels. Work items are (head, 8-query tile) pairs shared out over threads;
// each walks the key tiles in order keeping a running max, running sum and fp32 output per
// query row (online softmax), then divides by the sum and rounds once. A row's arithmetic
// depends only on its own data and the fixed key tiling, so any thread count gives the same
// bytes. ISA variants: AVX-512 (also under amx), AVX2 (polynomial exp) and scalar (std::exp).
// Tested against the provider attention by tests/kernels/cpu/test_attention.cpp (every ISA,
// 1 and 2 threads), timed by tools/bench/bench_kernels.cpp.
#include "kernels/cpu/attention.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/common/error.h"
#include "kernels/cpu/attention_micro.h"
#include "kernels/cpu/gemm_dispatch.h"
#include "kernels/cpu/gemm_scratch.h"

namespace h3p::kernels::cpu {
namespace {

using namespace attention_detail;

TileStep step_for(Isa isa) {
  switch (isa) {
    case Isa::amx:
    case Isa::avx512bf16:
    case Isa::avx512: return tile_step_avx512;
    case Isa::avx2: return tile_step_avx2;
    case Isa::scalar: break;
  }
  return tile_step_scalar;
}

inline float widen(Bf16 v) { return to_float(v); }
inline float widen(float v) { return v; }
inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }
inline void narrow(float v, float* out) { *out = v; }

template <typename T>
void attention(const char* op, const T* q, const T* k, const T* v, T* out, std::int64_t s,
               std::int64_t h, std::int64_t d, float scale) {
  if (s < 0 || h < 0 || d < 0) {
    throw InputError(std::string(op) + ": shape: negative dimension (s " + std::to_string(s) +
                     ", h " + std::to_string(h) + ", d " + std::to_string(d) + ")");
  }
  if (s == 0 || h == 0 || d == 0) return;
  const TileStep step = step_for(active_isa());
  const std::int64_t dp = (d + kLanes - 1) / kLanes * kLanes;
  const std::int64_t key_tiles = (s + kKeyTile - 1) / kKeyTile;
  const std::int64_t s_pad = key_tiles * kKeyTile;
  const std::int64_t tile_floats = d * kKeyTile;  // one packed key tile

  // Step 1: pack keys as [head][tile][d][32] and values as [head][s_pad][dp], zero-padded.
  thread_local AlignedScratch scratch;
  const std::int64_t kt_floats = h * key_tiles * tile_floats;
  float* kt = scratch.get(static_cast<std::size_t>(kt_floats + h * s_pad * dp));
  float* vt = kt + kt_floats;
  run_items(h * key_tiles, [&](std::int64_t item) {
    const std::int64_t head = item / key_tiles;
    const std::int64_t t = item % key_tiles;
    float* ktile = kt + item * tile_floats;
    float* vtile = vt + (head * s_pad + t * kKeyTile) * dp;
    for (std::int64_t j = 0; j < kKeyTile; ++j) {
      const std::int64_t key = t * kKeyTile + j;
      float* vrow = vtile + j * dp;
      if (key < s) {
        const T* krow = k + (key * h + head) * d;
        const T* vsrc = v + (key * h + head) * d;
        for (std::int64_t c = 0; c < d; ++c) ktile[c * kKeyTile + j] = widen(krow[c]);
        for (std::int64_t c = 0; c < d; ++c) vrow[c] = widen(vsrc[c]);
      } else {
        for (std::int64_t c = 0; c < d; ++c) ktile[c * kKeyTile + j] = 0.0f;
        for (std::int64_t c = 0; c < d; ++c) vrow[c] = 0.0f;
      }
      for (std::int64_t c = d; c < dp; ++c) vrow[c] = 0.0f;
    }
  });

  // Step 2: per (head, query tile): online softmax over the key tiles, then o / l, rounded.
  const std::int64_t query_tiles = (s + kQueryTile - 1) / kQueryTile;
  run_items(h * query_tiles, [&](std::int64_t item) {
    const std::int64_t head = item / query_tiles;
    const std::int64_t q0 = (item % query_tiles) * kQueryTile;
    const std::int64_t rows = std::min<std::int64_t>(kQueryTile, s - q0);
    thread_local AlignedScratch tile_scratch;
    float* qt = tile_scratch.get(static_cast<std::size_t>((d + dp) * kQueryTile + 2 * kQueryTile));
    float* o = qt + d * kQueryTile;
    float* m = o + dp * kQueryTile;
    float* l = m + kQueryTile;
    for (std::int64_t r = 0; r < kQueryTile; ++r) {
      if (r < rows) {
        const T* qrow = q + ((q0 + r) * h + head) * d;
        for (std::int64_t c = 0; c < d; ++c) qt[c * kQueryTile + r] = widen(qrow[c]);
      } else {
        for (std::int64_t c = 0; c < d; ++c) qt[c * kQueryTile + r] = 0.0f;
      }
      m[r] = -std::numeric_limits<float>::infinity();
      l[r] = 0.0f;
    }
    std::fill(o, o + dp * kQueryTile, 0.0f);
    const float* kt_head = kt + head * key_tiles * tile_floats;
    const float* vt_head = vt + head * s_pad * dp;
    for (std::int64_t t = 0; t < key_tiles; ++t) {
      const int valid = static_cast<int>(std::min<std::int64_t>(kKeyTile, s - t * kKeyTile));
      step(qt, kt_head + t * tile_floats, vt_head + t * kKeyTile * dp, d, dp, valid, scale, m, l,
           o);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      T* dst = out + ((q0 + r) * h + head) * d;
      const float* orow = o + r * dp;
      for (std::int64_t c = 0; c < d; ++c) narrow(orow[c] / l[r], dst + c);
    }
  });
}

}  // namespace

void attention_bf16(const Bf16* q, const Bf16* k, const Bf16* v, Bf16* out, std::int64_t s,
                    std::int64_t h, std::int64_t d, float scale) {
  attention("attention_bf16", q, k, v, out, s, h, d, scale);
}

void attention_f32(const float* q, const float* k, const float* v, float* out, std::int64_t s,
                   std::int64_t h, std::int64_t d, float scale) {
  attention("attention_f32", q, k, v, out, s, h, d, scale);
}

}  // namespace h3p::kernels::cpu
