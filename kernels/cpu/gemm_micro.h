#pragma once
// Per-ISA inner loops of the gemm kernels (gemm_scalar.cpp, gemm_avx2.cpp, gemm_avx512.cpp,
// gemm_pairs.cpp).
// Operands reach them packed as fp32 by gemm.cpp: an A panel is MR rows stored k-major
// ([k][MR]), a B panel NR columns stored k-major ([k][NR]), both zero-padded at the edges.
// Each output element is one fp32 sum in ascending k, whatever tile or thread computes it.
#include <cstdint>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/gemm_dispatch.h"

namespace h3p::kernels::cpu::gemm_detail {

// Register tile of one ISA's microkernel.
struct MicroTile {
  int mr;  // rows of an A panel
  int nr;  // columns of a B panel
};

// c[mr][nr] (row stride nr) = A panel · B panel over k; the tile shape is micro_tile(isa).
using MicroKernel = void (*)(const float* a, const float* b, std::int64_t k, float* c);

// Rows of y the GEMV path takes (m <= kGemvMaxRows goes to gemv_*).
constexpr std::int64_t kGemvMaxRows = 4;

// y[r, j] = dot(x[r, :], w[j, :]) (+ bias[j]) for r < m <= kGemvMaxRows and j in [j0, j1);
// x (m, k) fp32, w (n, k), y (m, n); bias fp32 or null. Rounded once to y's type.
using GemvBf16 = void (*)(const float* x, std::int64_t m, const Bf16* w, const float* bias,
                          Bf16* y, std::int64_t n, std::int64_t k, std::int64_t j0,
                          std::int64_t j1);
using GemvF32 = void (*)(const float* x, std::int64_t m, const float* w, const float* bias,
                         float* y, std::int64_t n, std::int64_t k, std::int64_t j0,
                         std::int64_t j1);

constexpr MicroTile kTileScalar{4, 16};
constexpr MicroTile kTileAvx2{6, 16};
constexpr MicroTile kTileAvx512{12, 32};

void micro_scalar(const float* a, const float* b, std::int64_t k, float* c);
void micro_avx2(const float* a, const float* b, std::int64_t k, float* c);
void micro_avx512(const float* a, const float* b, std::int64_t k, float* c);

void gemv_bf16_scalar(const float* x, std::int64_t m, const Bf16* w, const float* bias, Bf16* y,
                      std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1);
void gemv_bf16_avx2(const float* x, std::int64_t m, const Bf16* w, const float* bias, Bf16* y,
                    std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1);
void gemv_bf16_avx512(const float* x, std::int64_t m, const Bf16* w, const float* bias, Bf16* y,
                      std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1);
void gemv_f32_scalar(const float* x, std::int64_t m, const float* w, const float* bias, float* y,
                     std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1);
void gemv_f32_avx2(const float* x, std::int64_t m, const float* w, const float* bias, float* y,
                   std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1);
void gemv_f32_avx512(const float* x, std::int64_t m, const float* w, const float* bias, float* y,
                     std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t j1);

// y[j] = bf16(acc[j] (+ bias[j])) for j < cols, bias fp32 or null: bit-identical to to_bf16
// (round to nearest even, NaN to 0x7fc0), 16 lanes at a time. Needs avx512.
void store_row_bf16_avx512(const float* acc, const float* bias, Bf16* y, std::int64_t cols);

// What multiplies the bf16 pairs of gemm_bf16_pairs: AMX-BF16 tiles (Isa::amx) or AVX512-BF16
// dot products on zmm registers (Isa::avx512bf16).
enum class PairUnit { amx_tiles, avx512_dot };

// The whole bf16 gemm on bf16 pairs (gemm_pairs.cpp): packs w into VNNI pairs, x where k is not a
// multiple of 32, runs 32 x 32 output blocks over the threads (k in ascending pairs) and rounds
// once with the bias added. For m > kGemvMaxRows; needs the Isa of `unit`.
void gemm_bf16_pairs(const Bf16* x, const Bf16* w, const float* bias, Bf16* y, std::int64_t m,
                     std::int64_t n, std::int64_t k, PairUnit unit);

}  // namespace h3p::kernels::cpu::gemm_detail
