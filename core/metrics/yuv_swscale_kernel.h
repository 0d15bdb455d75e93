#pragma once
// Private to yuv_swscale_exact*.cpp: the per-ISA loops of the libswscale-exact RGB24 ->
// yuv420p conversion, with plain arguments only (the per-ISA files are compiled with their
// own -m flags and must not include headers with inline library code).
#include <cstdint>

namespace h3p::metrics::yuv_kernel {

// Fixed-point BT.601 limited-range coefficients of libswscale's RGB input (RGB2YUV_SHIFT 15).
constexpr int kShift = 15;
constexpr int kRy = static_cast<int>(0.299 * 219 / 255 * (1 << kShift) + 0.5);
constexpr int kGy = static_cast<int>(0.587 * 219 / 255 * (1 << kShift) + 0.5);
constexpr int kBy = static_cast<int>(0.114 * 219 / 255 * (1 << kShift) + 0.5);
constexpr int kRu = -static_cast<int>(0.169 * 224 / 255 * (1 << kShift) + 0.5);
constexpr int kGu = -static_cast<int>(0.331 * 224 / 255 * (1 << kShift) + 0.5);
constexpr int kBu = static_cast<int>(0.500 * 224 / 255 * (1 << kShift) + 0.5);
constexpr int kRv = static_cast<int>(0.500 * 224 / 255 * (1 << kShift) + 0.5);
constexpr int kGv = -static_cast<int>(0.419 * 224 / 255 * (1 << kShift) + 0.5);
constexpr int kBv = -static_cast<int>(0.081 * 224 / 255 * (1 << kShift) + 0.5);

struct Args {
  const std::uint8_t* rgb = nullptr;  // height x width x 3
  std::uint8_t tail[3] = {0, 0, 0};   // the pixel read after the last row (odd widths)
  int width = 0, height = 0;
  std::uint8_t* y = nullptr;  // width x height
  std::uint8_t* u = nullptr;  // cw x ch each, cw = ceil(width/2), ch = ceil(height/2)
  std::uint8_t* v = nullptr;
  // Vertical chroma filter: output row i reads input rows pos[i] .. pos[i] + taps - 1 with
  // the 12-bit coefficients coef[i * taps + j].
  int taps = 1;
  const int* pos = nullptr;
  const std::int16_t* coef = nullptr;
  // Output rows from here on are filtered with libswscale's exact 32-bit C arithmetic; the
  // rows before with its SIMD one (16-bit products truncated, pmulhw).
  int exact_from = 0;
  std::int16_t* ring = nullptr;  // 2 * taps rows of cw int16 (U rows, then V rows)
};

void convert_scalar(const Args& args);
void convert_avx2(const Args& args);
void convert_avx512(const Args& args);

}  // namespace h3p::metrics::yuv_kernel
