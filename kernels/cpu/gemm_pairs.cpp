// The bf16-pair paths of gemm_bf16. AMX-BF16 (Sapphire Rapids and later): 2 x 2 tiles of
// 16 x 16 fp32 accumulators per 32 x 32 output block, fed by 16-row x 32-k tiles of x and
// VNNI-paired 32-k x 16-column tiles of w. AVX512-BF16 (Zen 4, Cooper Lake): the same packed
// pairs, 8 rows x 32 columns of fp32 accumulators in zmm registers at a time, one vdpbf16ps per
// row, column half and pair. k advances in ascending pairs, each element is summed by one
// thread, and the bias is added and the result rounded once in the epilogue.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/gemm_dispatch.h"
#include "kernels/cpu/gemm_micro.h"
#include "kernels/cpu/gemm_scratch.h"

// GCC 12 reports the intrinsics' own _mm*_undefined_* placeholders as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define H3P_AMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx2,fma")))
#define H3P_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#define H3P_BF16_DOT __attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl,avx2,fma")))

namespace h3p::kernels::cpu::gemm_detail {
namespace {

constexpr std::int64_t kBlock = 32;  // output block edge and k step
constexpr std::int64_t kTileCols = 16;

// Palette 1 tile configuration: every tile 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

H3P_AMX void load_tile_config() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  // GCC 12 does not see the builtin read cfg and would drop the stores above: fence them.
  __asm__ volatile("" : : "r"(&cfg) : "memory");
  _tile_loadconfig(&cfg);
}

H3P_AMX void release_tiles() { _tile_release(); }

// One 32 x 32 block: c (row stride 32) = a rows [32][lda] · b column blocks b0, b1.
H3P_AMX void block_32x32(const std::uint16_t* a, std::int64_t lda, const std::uint16_t* b0,
                         const std::uint16_t* b1, std::int64_t k_steps, float* c) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const long stride_a = static_cast<long>(lda * 2);
  for (std::int64_t s = 0; s < k_steps; ++s) {
    _tile_loadd(4, a + s * kBlock, stride_a);
    _tile_loadd(5, a + 16 * lda + s * kBlock, stride_a);
    _tile_loadd(6, b0 + s * kBlock * kTileCols, 64);
    _tile_loadd(7, b1 + s * kBlock * kTileCols, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, 128);
  _tile_stored(1, c + 16, 128);
  _tile_stored(2, c + 16 * kBlock, 128);
  _tile_stored(3, c + 16 * kBlock + 16, 128);
}

// The same 32 x 32 block with AVX512-BF16: rows of a as broadcast pairs, b0/b1 as 16 column
// pairs per zmm; k_pad / 2 pairs in ascending order.
H3P_BF16_DOT void block_32x32_dot(const std::uint16_t* a, std::int64_t lda, const std::uint16_t* b0,
                                  const std::uint16_t* b1, std::int64_t k_pad, float* c) {
  constexpr int kRows = 8;
  const std::int64_t pairs = k_pad / 2;
  for (std::int64_t r0 = 0; r0 < kBlock; r0 += kRows) {
    __m512 acc0[kRows];
    __m512 acc1[kRows];
    for (int r = 0; r < kRows; ++r) {
      acc0[r] = _mm512_setzero_ps();
      acc1[r] = _mm512_setzero_ps();
    }
    for (std::int64_t p = 0; p < pairs; ++p) {
      const __m512bh w0 = (__m512bh)_mm512_load_si512(b0 + p * 2 * kTileCols);
      const __m512bh w1 = (__m512bh)_mm512_load_si512(b1 + p * 2 * kTileCols);
      for (int r = 0; r < kRows; ++r) {
        std::uint32_t pair;
        std::memcpy(&pair, a + (r0 + r) * lda + 2 * p, sizeof pair);
        const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
        acc0[r] = _mm512_dpbf16_ps(acc0[r], av, w0);
        acc1[r] = _mm512_dpbf16_ps(acc1[r], av, w1);
      }
    }
    for (int r = 0; r < kRows; ++r) {
      _mm512_store_ps(c + (r0 + r) * kBlock, acc0[r]);
      _mm512_store_ps(c + (r0 + r) * kBlock + kTileCols, acc1[r]);
    }
  }
}

// Column tile `tile` of w (n, k) as VNNI pairs [k_pad / 2][16][2], zero-padded. With k even a
// pair is one 32-bit word, gathered 16 columns at a time.
H3P_AVX512 void pack_w_tile(const std::uint16_t* w, std::int64_t n, std::int64_t k,
                         std::int64_t k_pad, std::int64_t tile, std::uint16_t* out) {
  const std::int64_t col0 = tile * kTileCols;
  const std::int64_t cols = std::max<std::int64_t>(0, std::min(kTileCols, n - col0));
  auto* out32 = reinterpret_cast<std::uint32_t*>(out);
  std::int64_t pairs_done = 0;
  if (k % 2 == 0 && cols > 0 && k * 2 <= 0x7fffffff / kTileCols) {
    const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1u);
    const __m512i offsets =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(static_cast<int>(k * 2)));
    const auto* base = reinterpret_cast<const char*>(w + col0 * k);
    for (std::int64_t p = 0; p < k / 2; ++p) {
      const __m512i v =
          _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, offsets, base + p * 4, 1);
      _mm512_store_si512(out32 + p * kTileCols, v);
    }
    pairs_done = k / 2;
  } else {
    for (std::int64_t j = 0; j < kTileCols; ++j) {
      const std::int64_t col = col0 + j;
      for (std::int64_t i = 0; i < k; ++i) {
        out[(i >> 1) * 32 + j * 2 + (i & 1)] = col < n ? w[col * k + i] : 0;
      }
      if (k % 2 == 1) out[(k >> 1) * 32 + j * 2 + 1] = 0;
    }
    pairs_done = (k + 1) / 2;
  }
  for (std::int64_t p = pairs_done; p < k_pad / 2; ++p) {
    _mm512_store_si512(out32 + p * kTileCols, _mm512_setzero_si512());
  }
}

}  // namespace

void gemm_bf16_pairs(const Bf16* x, const Bf16* w, const float* bias, Bf16* y, std::int64_t m,
                     std::int64_t n, std::int64_t k, PairUnit unit) {
  const bool tiles = unit == PairUnit::amx_tiles;
  const std::int64_t k_pad = (k + kBlock - 1) / kBlock * kBlock;
  const std::int64_t m_blocks = (m + kBlock - 1) / kBlock;
  const std::int64_t n_blocks = (n + kBlock - 1) / kBlock;
  const std::int64_t col_tiles = n_blocks * 2;
  // x is read in place when k is a multiple of 32 (full row blocks); otherwise, and for the
  // last partial row block, rows are copied into a zero-padded [rows][k_pad] buffer.
  const bool x_in_place = k == k_pad;
  const std::int64_t full_m_blocks = m / kBlock;
  const std::int64_t packed_rows = x_in_place ? (m_blocks - full_m_blocks) * kBlock
                                              : m_blocks * kBlock;
  const std::int64_t packed_row0 = x_in_place ? full_m_blocks * kBlock : 0;
  const std::size_t b_elems = static_cast<std::size_t>(col_tiles * k_pad * kTileCols);
  const std::size_t a_elems = static_cast<std::size_t>(packed_rows * k_pad);
  thread_local AlignedScratch scratch;
  auto* b_packed = reinterpret_cast<std::uint16_t*>(scratch.get((b_elems + a_elems) / 2 + 32));
  std::uint16_t* a_packed = b_packed + b_elems;
  const auto* xb = reinterpret_cast<const std::uint16_t*>(x);
  const auto* wb = reinterpret_cast<const std::uint16_t*>(w);

  // Step 1: w into VNNI column tiles [tile][k_pad / 2][16][2]; padded rows of x.
  const std::int64_t a_items = packed_rows / kBlock;
  run_items(col_tiles + a_items, [&](std::int64_t item) {
    if (item < col_tiles) {
      pack_w_tile(wb, n, k, k_pad, item, b_packed + item * k_pad * kTileCols);
    } else {
      const std::int64_t r0 = (item - col_tiles) * kBlock;
      for (std::int64_t r = r0; r < r0 + kBlock; ++r) {
        std::uint16_t* out = a_packed + r * k_pad;
        const std::int64_t src_row = packed_row0 + r;
        std::int64_t copied = 0;
        // k == 0: x may be a null pointer (an empty tensor), which memcpy must never see.
        if (src_row < m && k > 0) {
          std::memcpy(out, xb + src_row * k, static_cast<std::size_t>(k) * 2);
          copied = k;
        }
        std::memset(out + copied, 0, static_cast<std::size_t>(k_pad - copied) * 2);
      }
    }
  });

  // Step 2: 32 x 32 output blocks over the threads, each thread with its tile configuration.
  run_chunks(m_blocks * n_blocks, [&](std::int64_t begin, std::int64_t end) {
    if (tiles) load_tile_config();
    alignas(64) float c[kBlock * kBlock];
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t mb = item / n_blocks;
      const std::int64_t nb = item % n_blocks;
      const std::int64_t i0 = mb * kBlock;
      const std::uint16_t* a = x_in_place && mb < full_m_blocks
                                   ? xb + i0 * k
                                   : a_packed + (i0 - packed_row0) * k_pad;
      const std::uint16_t* b0 = b_packed + (2 * nb) * k_pad * kTileCols;
      if (tiles) {
        block_32x32(a, k_pad, b0, b0 + k_pad * kTileCols, k_pad / kBlock, c);
      } else {
        block_32x32_dot(a, k_pad, b0, b0 + k_pad * kTileCols, k_pad, c);
      }
      const std::int64_t rows = std::min(kBlock, m - i0);
      const std::int64_t j0 = nb * kBlock;
      const std::int64_t cols = std::min(kBlock, n - j0);
      for (std::int64_t r = 0; r < rows; ++r) {
        store_row_bf16_avx512(c + r * kBlock, bias != nullptr ? bias + j0 : nullptr,
                              y + (i0 + r) * n + j0, cols);
      }
    }
    if (tiles) release_tiles();
  });
}

}  // namespace h3p::kernels::cpu::gemm_detail
