#pragma once
// libswscale's RGB24 -> yuv420p conversion (FFmpeg 5.1, SWS_BICUBIC, same size, BT.601
// limited range: what `ffmpeg -vf format=yuv420p` and media::make_swscale_yuv_converter do),
// reimplemented byte for byte without FFmpeg: luma and chroma through libswscale's fixed-point
// input converters (chroma from horizontal pixel pairs), chroma rows through its vertical
// bicubic filter (the coefficients computed as its initFilter computes them) in the arithmetic
// its x86-64 build uses: 16-bit truncated products, except the last output rows, which it
// filters with 32-bit C code. An odd width's last chroma column pairs the row's last pixel
// with the next pixel in memory, as libswscale reads it (zero after the last row unless 256
// bytes are readable there, as in media::make_swscale_yuv_converter's padded copy). One pass
// per frame: each RGB row is read once (prefetched two rows ahead) for luma and chroma, chroma
// rows wait in a ring of filter-height rows. AVX2 intrinsics in the AVX2 build, AVX-512BW
// ones (32 pixels a step, the AVX2 loops for the rest) in the AVX-512 build, a portable build
// otherwise (chosen like plane_pass.h); integer arithmetic only, so every path gives the same
// bytes. Tested byte for byte against libswscale on random frames of odd and even sizes on
// every path (tests/core/media/test_yuv_swscale.cpp). About 6x faster than libswscale here
// (1344x768, AVX-512: 0.52 ms against 3.3 ms a frame, one core).
#include <cstdint>
#include <memory>
#include <vector>

#include "core/metrics/ffmpeg_compat.h"
#include "core/metrics/plane_pass.h"

namespace h3p::metrics {

// libswscale's vertical filter from src rows to dst rows (12-bit coefficients, sum 4096).
struct SwscaleFilter {
  int taps = 1;
  std::vector<int> pos;            // first input row of each output row
  std::vector<std::int16_t> coef;  // taps per output row
};

// The bicubic filter libswscale builds for `src` -> `dst` samples with chroma siting `pos`
// (1/256 pixel units, as libswscale's get_local_pos returns them) on an x86 CPU.
SwscaleFilter swscale_bicubic_filter(int src, int dst, int src_pos, int dst_pos);

// The libswscale-exact converter; `isa` picks the compiled path (lowered to what the CPU runs).
// Its name() is the one of the libswscale converter, since the planes are the same bytes.
std::unique_ptr<YuvConverter> make_swscale_exact_yuv_converter(PassIsa isa = default_pass_isa());

}  // namespace h3p::metrics
