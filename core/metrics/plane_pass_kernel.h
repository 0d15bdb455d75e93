#pragma once
// Private to plane_pass*.cpp: the entry points of the per-ISA pass (plane_pass.h), with plain
// arguments only. The per-ISA files are compiled with their own -m flags, so they must not
// include headers with inline library code (another copy of it could be picked at link time
// and run on a CPU without those instructions).
#include <cstddef>
#include <cstdint>

namespace h3p::metrics::pass_kernel {

// PassSource as an integer.
enum Source : int { kF16 = 0, kF32 = 1, kRgb8 = 2 };

struct Side {
  const void* data = nullptr;  // null: absent (previous frame only)
  int source = kF32;
  int channel = 0;
};

struct Args {
  int width = 0, height = 0;  // both >= 11
  const float* weights;       // 11 normalised Gaussian weights
  const float* byte_scale;    // 256 values: i / 255.0f
  Side a, b, prev_a, prev_b;
  float* buffer;  // buffer_floats(width) floats
};

struct Out {
  double sse, temporal_sse, ssim;
};

// Output columns filtered together (a multiple of 16), and the floats of one filtered row of
// such a chunk (its 10 extra input columns, rounded up to whole vectors).
constexpr int kChunk = 256;
constexpr int kChunkStride = kChunk + 32;

// Floats of scratch one pass over planes of this width needs (plane_pass_impl.h run_pass).
inline std::size_t buffer_floats(int width) {
  const std::size_t stride = (static_cast<std::size_t>(width) + 15) / 16 * 16;
  return 71 * stride + 16 * kChunkStride;
}

void run_scalar(const Args& args, Out& out);
void run_avx2(const Args& args, Out& out);
void run_avx512(const Args& args, Out& out);

}  // namespace h3p::metrics::pass_kernel
