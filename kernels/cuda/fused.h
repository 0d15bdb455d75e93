#pragma once
// The candidate block's memory-bound steps on the GPU, each one pass over its rows, fp32
// arithmetic with one rounding to bf16 per output, deterministic (fixed reduction order).
// All tensors are bf16 and row-major unless said otherwise; strides are in elements.
#include <cuda_runtime.h>

#include <cstdint>

namespace h3p::kernels::cuda {

// Where results are rounded to bf16. `once`: one rounding per output (fp32 throughout, the
// most accurate). The provider_* modes round after every step the provider's eager ops round
// (x·gate, x + ·, 1 + scale, ·(1 + scale), + shift, cos/sin casts, silu, ...), so the candidate
// lands on the provider's values up to accumulation order; they differ in the RMSNorm itself:
// `provider_fused_norm` rounds x·rstd·weight once (a fused rms_norm kernel),
// `provider_composite_norm` rounds x·rstd, then ·weight (the composite rms_norm).
enum class Rounding { once, provider_fused_norm, provider_composite_norm };

// The AdaLN modulation of one row: shift and scale (and the gate of a gated residual) are
// rows `rows[r]` of a per-(timestep, modality) table, columns [offset, offset + C) of it.
struct Modulation {
  const void* table = nullptr;  // (T, table_stride) bf16
  int64_t table_stride = 0;
  const int64_t* rows = nullptr;  // (S) row of the table for each activation row
  int64_t shift_offset = 0, scale_offset = 0, gate_offset = 0;
};

// Optional gated residual first: x ← x + gate·y (gate from `mod`, y with row stride
// y_stride; skipped when y is null); then h = rms_norm(x)·weight·(1 + scale) + shift.
// x (S, C) is updated in place when y is given; h (S, C) may not alias x. Without y, a
// non-null `x_copy` (S, C) receives a copy of x in the same pass.
void residual_norm_modulate(void* x, const void* y, int64_t y_stride, const void* weight,
                            float eps, const Modulation& mod, void* h, int64_t rows,
                            int64_t cols, Rounding rounding, cudaStream_t stream,
                            void* x_copy = nullptr);

// x ← x + gate·y (gate from `mod`), in place, (S, C).
void gated_residual(void* x, const void* y, int64_t y_stride, const Modulation& mod,
                    int64_t rows, int64_t cols, Rounding rounding, cudaStream_t stream);

// Which steps head_norm_rope runs.
enum class HeadSteps { norm, rope, norm_rope };

// In place on `heads` heads of 128 channels at the start of every row of x (S, row_stride):
// per-head RMSNorm (heads below q_heads with q_weight (128), the rest with k_weight), then
// rotate-half RoPE over the first `rotary` channels with fp32 tables cos/sin (S, rotary);
// `steps` selects one or both. Each step computes exactly what qk_norm_rope computes for it,
// so norm then rope in two calls equals the fused call bit for bit under the provider_* modes.
void head_norm_rope(void* x, int64_t row_stride, int64_t rows, int heads, int q_heads,
                    const void* q_weight, const void* k_weight, float eps, const float* cos,
                    const float* sin, int rotary, HeadSteps steps, Rounding rounding,
                    cudaStream_t stream);

// In place on the q and k heads of a fused QKV buffer (S, row_stride) holding q at column 0
// and k at column heads·128: per-head RMSNorm with weights q_weight / k_weight (128), then
// rotate-half RoPE over the first `rotary` channels with fp32 tables cos/sin (S, rotary).
void qk_norm_rope(void* qkv, int64_t row_stride, int64_t rows, int heads, const void* q_weight,
                  const void* k_weight, float eps, const float* cos, const float* sin,
                  int rotary, Rounding rounding, cudaStream_t stream);

// out (S, F) = value·silu(gate) for h (S, 2F) = [value | gate].
void swiglu(const void* h, void* out, int64_t rows, int64_t features, Rounding rounding,
            cudaStream_t stream);

// out = silu(x) for n fp32 elements, in fp32 (silu_to_bf16 before its rounding).
void silu_f32(const float* x, float* out, int64_t n, cudaStream_t stream);

// out (bf16) = silu(x) for n fp32 elements, rounded once.
void silu_to_bf16(const float* x, void* out, int64_t n, cudaStream_t stream);

}  // namespace h3p::kernels::cuda
