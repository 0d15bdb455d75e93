// AdaLN row gather: a copy of one table row per output row (no arithmetic, so bitwise equal to
// the provider's index_select). Rows are split across threads. Tested against the provider's
// gather_rows in tests/kernels/cpu/test_adaln.cpp, strided tables included.
#include "kernels/cpu/adaln.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/parallel.h"

namespace h3p::kernels::cpu {
namespace {

constexpr std::int64_t kGrainElements = 1 << 15;

template <typename T>
void gather(const T* table, std::int64_t table_stride, const std::int64_t* rows, T* out,
            std::int64_t n, std::int64_t cols) {
  if (cols <= 0) return;
  const std::int64_t grain = std::max<std::int64_t>(1, kGrainElements / cols);
  parallel_for(n, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      std::memcpy(out + r * cols, table + rows[r] * table_stride,
                  static_cast<std::size_t>(cols) * sizeof(T));
    }
  });
}

}  // namespace

void gather_rows_bf16(const Bf16* table, std::int64_t table_stride, const std::int64_t* rows,
                      Bf16* out, std::int64_t n, std::int64_t cols) {
  gather(table, table_stride, rows, out, n, cols);
}
void gather_rows_f32(const float* table, std::int64_t table_stride, const std::int64_t* rows,
                     float* out, std::int64_t n, std::int64_t cols) {
  gather(table, table_stride, rows, out, n, cols);
}

}  // namespace h3p::kernels::cpu
