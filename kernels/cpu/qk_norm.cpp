// Per-head RMSNorm: every (row, head) pair is one RMSNorm row of head_dim elements
// (rms.h: fp64 sum of squares over 8 fixed lanes, fp32 scaling, one rounding), split across
// threads by pairs. Tested against the provider's rms_norm on (S, H, D) tensors in
// tests/kernels/cpu/test_qk_norm.cpp.
#include "kernels/cpu/qk_norm.h"

#include "kernels/cpu/rms.h"

namespace h3p::kernels::cpu {

void qk_norm_bf16(const Bf16* x, const Bf16* w, Bf16* y, std::int64_t rows, std::int64_t heads,
                  std::int64_t d, double eps) {
  rms::normalize_rows(x, w, y, rows * heads, d, eps);
}

void qk_norm_f32(const float* x, const float* w, float* y, std::int64_t rows,
                 std::int64_t heads, std::int64_t d, double eps) {
  rms::normalize_rows(x, w, y, rows * heads, d, eps);
}

}  // namespace h3p::kernels::cpu
