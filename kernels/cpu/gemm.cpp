// gemm: y = x·wᵀ (+ bias) for nn.Linear, bf16 or fp32 operands, fp32 accumulation.
// Algorithm: x and w are packed once per call into fp32 panels (MR rows / NR columns, k-major,
// zero-padded; bf16 widened exactly), then output tiles of 8 x 4 panels are shared out over the
// threads; within a tile a register-blocked microkernel (AVX-512 12 x 32, AVX2 6 x 16, scalar
// 4 x 16) sums each element over the whole k in ascending order and the bias is added last,
// then the result is rounded once. k is never split, so any thread count gives the same bytes.
// m <= 4 rows (the AdaLN projection) take a GEMV path parallel over columns instead. On CPUs
// with AMX-BF16 the bf16 gemm runs on tiles instead, with AVX512-BF16 on dot products of the
// same packed pairs (gemm_pairs.cpp).
// Tested against at::linear by tests/kernels/cpu/test_gemm.cpp (every ISA, 1 and 2 threads),
// timed by tools/bench/bench_kernels.cpp.
#include "kernels/cpu/gemm.h"

#include <string>

#include "core/common/error.h"
#include "kernels/cpu/gemm_dispatch.h"
#include "kernels/cpu/gemm_micro.h"
#include "kernels/cpu/gemm_scratch.h"

namespace h3p::kernels::cpu {
namespace {

using namespace gemm_detail;

// Output tile one work item owns, in microkernel panels.
constexpr std::int64_t kTilePanelsM = 8;
constexpr std::int64_t kTilePanelsN = 4;
// Output columns one GEMV work item owns.
constexpr std::int64_t kGemvColumns = 64;

struct IsaKernels {
  MicroTile tile;
  MicroKernel micro;
  GemvBf16 gemv_bf16;
  GemvF32 gemv_f32;
};

IsaKernels kernels_for(Isa isa) {
  switch (isa) {
    case Isa::amx:
    case Isa::avx512bf16:
    case Isa::avx512: return {kTileAvx512, micro_avx512, gemv_bf16_avx512, gemv_f32_avx512};
    case Isa::avx2: return {kTileAvx2, micro_avx2, gemv_bf16_avx2, gemv_f32_avx2};
    case Isa::scalar: break;
  }
  return {kTileScalar, micro_scalar, gemv_bf16_scalar, gemv_f32_scalar};
}

inline float widen(Bf16 v) { return to_float(v); }
inline float widen(float v) { return v; }
inline void narrow(float v, Bf16* out) { *out = to_bf16(v); }
inline void narrow(float v, float* out) { *out = v; }

// Panel `p` of `width` rows of src (rows, k) into out as [k][width], zero rows past `rows`.
template <typename T>
void pack_panel(const T* src, std::int64_t rows, std::int64_t k, int width, std::int64_t p,
                float* out) {
  const std::int64_t r0 = p * width;
  for (int r = 0; r < width; ++r) {
    if (r0 + r < rows) {
      const T* row = src + (r0 + r) * k;
      for (std::int64_t i = 0; i < k; ++i) out[i * width + r] = widen(row[i]);
    } else {
      for (std::int64_t i = 0; i < k; ++i) out[i * width + r] = 0.0f;
    }
  }
}

void check_dims(const char* op, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m < 0 || n < 0 || k < 0) {
    throw InputError(std::string(op) + ": shape: negative dimension (m " + std::to_string(m) +
                     ", n " + std::to_string(n) + ", k " + std::to_string(k) + ")");
  }
}

template <typename T>
void gemm(const char* op, const T* x, const T* w, const T* bias, T* y, std::int64_t m,
          std::int64_t n, std::int64_t k) {
  check_dims(op, m, n, k);
  if (m == 0 || n == 0) return;
  const Isa isa = active_isa();
  const IsaKernels kern = kernels_for(isa);
  thread_local AlignedScratch scratch;

  // Step 1: fp32 bias and, for m <= kGemvMaxRows, fp32 rows of x.
  const bool small = m <= kGemvMaxRows;
  const std::int64_t mr = kern.tile.mr;
  const std::int64_t nr = kern.tile.nr;
  const std::int64_t panels_m = (m + mr - 1) / mr;
  const std::int64_t panels_n = (n + nr - 1) / nr;
  const std::size_t bias_floats = bias != nullptr ? static_cast<std::size_t>(n) : 0;
  const std::size_t a_floats = static_cast<std::size_t>(small ? m * k : panels_m * mr * k);
  const std::size_t b_floats = static_cast<std::size_t>(small ? 0 : panels_n * nr * k);
  float* base = scratch.get(bias_floats + a_floats + b_floats + 16);
  float* bias_f = bias != nullptr ? base : nullptr;
  float* a_packed = base + ((bias_floats + 15) / 16) * 16;
  float* b_packed = a_packed + a_floats;
  for (std::size_t j = 0; j < bias_floats; ++j) bias_f[j] = widen(bias[j]);

  if (small) {
    for (std::int64_t i = 0; i < m * k; ++i) a_packed[i] = widen(x[i]);
    const std::int64_t items = (n + kGemvColumns - 1) / kGemvColumns;
    run_items(items, [&](std::int64_t item) {
      const std::int64_t j0 = item * kGemvColumns;
      const std::int64_t j1 = std::min(n, j0 + kGemvColumns);
      if constexpr (sizeof(T) == 2) {
        kern.gemv_bf16(a_packed, m, w, bias_f, y, n, k, j0, j1);
      } else {
        kern.gemv_f32(a_packed, m, w, bias_f, y, n, k, j0, j1);
      }
    });
    return;
  }

  if constexpr (sizeof(T) == 2) {
    if (isa == Isa::amx || isa == Isa::avx512bf16) {
      gemm_bf16_pairs(x, w, bias_f, y, m, n, k,
                      isa == Isa::amx ? PairUnit::amx_tiles : PairUnit::avx512_dot);
      return;
    }
  }
  const bool vector_store = sizeof(T) == 2 && isa >= Isa::avx512;

  // Step 2: pack x and w into fp32 panels.
  run_items(panels_m + panels_n, [&](std::int64_t p) {
    if (p < panels_m) {
      pack_panel(x, m, k, static_cast<int>(mr), p, a_packed + p * mr * k);
    } else {
      const std::int64_t q = p - panels_m;
      pack_panel(w, n, k, static_cast<int>(nr), q, b_packed + q * nr * k);
    }
  });

  // Step 3: output tiles, each panel pair through the microkernel, bias, one rounding.
  const std::int64_t tiles_m = (panels_m + kTilePanelsM - 1) / kTilePanelsM;
  const std::int64_t tiles_n = (panels_n + kTilePanelsN - 1) / kTilePanelsN;
  run_items(tiles_m * tiles_n, [&](std::int64_t item) {
    alignas(64) float acc[kTileAvx512.mr * kTileAvx512.nr];
    const std::int64_t tm = item / tiles_n;
    const std::int64_t tn = item % tiles_n;
    const std::int64_t pm_end = std::min(panels_m, (tm + 1) * kTilePanelsM);
    const std::int64_t pn_end = std::min(panels_n, (tn + 1) * kTilePanelsN);
    for (std::int64_t pn = tn * kTilePanelsN; pn < pn_end; ++pn) {
      const std::int64_t j0 = pn * nr;
      const std::int64_t cols = std::min(nr, n - j0);
      for (std::int64_t pm = tm * kTilePanelsM; pm < pm_end; ++pm) {
        kern.micro(a_packed + pm * mr * k, b_packed + pn * nr * k, k, acc);
        const std::int64_t i0 = pm * mr;
        const std::int64_t rows = std::min(mr, m - i0);
        for (std::int64_t r = 0; r < rows; ++r) {
          T* out = y + (i0 + r) * n + j0;
          const float* a = acc + r * nr;
          if constexpr (sizeof(T) == 2) {
            if (vector_store) {
              store_row_bf16_avx512(a, bias_f != nullptr ? bias_f + j0 : nullptr, out, cols);
              continue;
            }
          }
          if (bias_f != nullptr) {
            for (std::int64_t j = 0; j < cols; ++j) narrow(a[j] + bias_f[j0 + j], out + j);
          } else {
            for (std::int64_t j = 0; j < cols; ++j) narrow(a[j], out + j);
          }
        }
      }
    }
  });
}

}  // namespace

void gemm_bf16(const Bf16* x, const Bf16* w, const Bf16* bias, Bf16* y, std::int64_t m,
               std::int64_t n, std::int64_t k) {
  gemm("gemm_bf16", x, w, bias, y, m, n, k);
}

void gemm_f32(const float* x, const float* w, const float* bias, float* y, std::int64_t m,
              std::int64_t n, std::int64_t k) {
  gemm("gemm_f32", x, w, bias, y, m, n, k);
}

}  // namespace h3p::kernels::cpu
