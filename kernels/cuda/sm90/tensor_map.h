#pragma once
// TMA tensor maps for the attention kernel (host side; the driver entry point is looked up
// through the runtime, so nothing links the driver library).
#include <cuda.h>

#include <cstdint>

namespace h3p::kernels::cuda::sm90 {

// Map over a bf16 (rows, heads, 128) operand with `row_stride` elements between rows: boxes
// of 64 channels × 1 head × `box_rows` rows, 128-byte swizzle, zero fill past the last row.
// Throws std::runtime_error when the driver refuses the map.
CUtensorMap head_tile_map(const void* base, int rows, int heads, int64_t row_stride,
                          int box_rows);

}  // namespace h3p::kernels::cuda::sm90
