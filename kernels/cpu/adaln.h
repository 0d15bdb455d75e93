#pragma once
// The AdaLN row gather: every sequence row picks its modulation row (timestep × modality) out
// of the projected table. The projection itself is a GEMM (gemm.h).
#include <cstdint>

#include "kernels/cpu/bf16.h"

namespace h3p::kernels::cpu {

// out[r, :] = table[rows[r], :] for r < n. Table rows are `cols` wide and `table_stride`
// elements apart (a column slice of a wider table works); out is (n, cols) contiguous. Every
// rows[r] must lie in [0, table rows): the caller checks. Multithreaded over rows.
void gather_rows_bf16(const Bf16* table, std::int64_t table_stride, const std::int64_t* rows,
                      Bf16* out, std::int64_t n, std::int64_t cols);
void gather_rows_f32(const float* table, std::int64_t table_stride, const std::int64_t* rows,
                     float* out, std::int64_t n, std::int64_t cols);

}  // namespace h3p::kernels::cpu
